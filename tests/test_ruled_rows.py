"""A row boundary moved onto the ruling line that runs through the row beside it (worker.core.ruled_rows)."""

from __future__ import annotations

from worker.core.bands import Band
from worker.core.ruled_rows import rows_onto_rules
from worker.core.types import Word


def _w(text: str, x: float, y0: float, y1: float) -> Word:
    return Word(text, (x, y0, x + 40, y1), 0.99)


# A ruled table's header cell of two lines ("to air" over "kg/year"), rules at 41, 81, 101, 141.
# The model ended header row 1 between the two lines (at 68), so row 2 holds "kg/year" above the
# rule at 81 and the first body row below it; PP-OCR's padded line boxes overlap that rule.
WORDS = [
    _w("THRESHOLD", 100, 21, 36),
    _w("to air", 100, 45, 57),
    _w("kg/year", 100, 65, 87),
    _w("Anthracene", 0, 85, 97),
    _w("50", 100, 78, 97),
    _w("Benzene", 0, 110, 130),
    _w("1 000", 100, 110, 130),
]
RULES = (15.0, 41.0, 81.0, 101.0, 141.0)


def _bands(*edges: float) -> list[Band]:
    return [Band(a, b, 0.9) for a, b in zip(edges, edges[1:])]


def test_the_boundary_on_no_rule_moves_onto_the_rule_through_the_row() -> None:
    repairs: list[str] = []
    out = rows_onto_rules(_bands(7, 45, 68, 106, 143), WORDS, RULES, repairs)
    assert [(b.lo, b.hi) for b in out] == [(7, 45), (45, 81), (81, 106), (106, 143)]
    assert repairs == ["1 row boundary moved onto the ruling line through the row"]


def test_rows_already_on_the_rules_or_unruled_tables_are_left_alone() -> None:
    repairs: list[str] = []
    right = _bands(7, 41, 81, 101, 141)
    assert [(b.lo, b.hi) for b in rows_onto_rules(right, WORDS, RULES, repairs)] == [(b.lo, b.hi) for b in right]
    assert [(b.lo, b.hi) for b in rows_onto_rules(_bands(7, 45, 68, 106, 143), WORDS, (), repairs)] == [
        (7, 45),
        (45, 68),
        (68, 106),
        (106, 143),
    ]
    assert repairs == []


def test_a_band_ruled_on_both_sides_is_two_merged_rows_and_is_not_moved() -> None:
    # row 2 runs from the rule at 41 to the rule at 101 across the rule at 81: the split rules decide that
    repairs: list[str] = []
    out = rows_onto_rules(_bands(7, 41, 101, 141), WORDS, RULES, repairs)
    assert [(b.lo, b.hi) for b in out] == [(7, 41), (41, 101), (101, 141)] and repairs == []


def test_a_rule_through_a_word_is_no_boundary() -> None:
    words = [*WORDS, _w("tall", 200, 70, 95)]  # its ink runs across the rule at 81
    repairs: list[str] = []
    out = rows_onto_rules(_bands(7, 45, 68, 106, 143), words, RULES, repairs)
    assert [(b.lo, b.hi) for b in out][1] == (45, 68) and repairs == []
