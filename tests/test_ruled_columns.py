"""Columns the structure model read between the same two vertical rules (worker.core.ruled_columns).

The model's cells are drawn as boxes and the words placed by hand, as in test_stacked_rows."""

from __future__ import annotations

from helpers import grid_texts as _texts

from worker.core.bands import Band
from worker.core.ruled_columns import merge_columns_between_rules
from worker.core.spans import SpanRect
from worker.core.token_grid import StructureToken, token_grid
from worker.core.types import RulingLines, Word

RULES = (0.0, 200.0, 300.0, 400.0)  # a stub and two value columns, ruled all round


def _model(col_edges: list[tuple[float, float]], n_rows: int) -> list[StructureToken]:
    out: list[StructureToken] = []
    for r in range(n_rows):
        out.append(StructureToken("<tr>", 0.99))
        for lo, hi in col_edges:
            out.append(StructureToken("<td></td>", 0.98, (lo, 4.0 + 24 * r, hi, 24.0 + 24 * r)))
        out.append(StructureToken("</tr>", 0.99))
    return out


def _word(text: str, x: float, r: int) -> Word:
    return Word(text, (x, 8.0 + 24 * r, x + 9 * len(text), 20.0 + 24 * r))


def test_a_column_read_as_two_between_its_rules_is_one_again() -> None:
    """The model parted the second value column at x = 345: "2 million" fell into two cells."""
    cols = [(2.0, 198.0), (202.0, 298.0), (302.0, 345.0), (345.0, 398.0)]
    words = [_word("Label", 10, 0), _word("to air", 210, 0), _word("to water", 310, 0)]
    words += [_word("Chlorides", 10, 1), _word("-", 240, 1), _word("2", 320, 1), _word("million", 333, 1)]
    words += [_word("Fluorides", 10, 2), _word("1", 240, 2), _word("2", 330, 2), _word("000", 343, 2)]
    grid = token_grid(_model(cols, 3), words, lines=RulingLines(h=(), v=RULES))
    assert _texts(grid) == [
        ["Label", "to air", "to water"],
        ["Chlorides", "-", "2 million"],
        ["Fluorides", "1", "2 000"],
    ]
    # the edge at 345 cuts a word in every row, so the column gaps move it out of the text first
    # (worker.core.column_gaps); the rule itself, on the model's columns as they were:
    rows = [Band(4.0 + 24 * r, 28.0 + 24 * r, 0.98) for r in range(3)]
    bands = [Band(lo, hi, 0.98) for lo, hi in cols]
    rects = [SpanRect(r, r, c, c, 0.98) for r in range(3) for c in range(4)]
    repairs: list[str] = []
    _, merged = merge_columns_between_rules(rects, rows, bands, RULES, set(), words, repairs)
    assert [(b.lo, b.hi) for b in merged] == [(2.0, 198.0), (202.0, 298.0), (302.0, 398.0)]
    assert repairs == ["1 column(s) read between the same two vertical rules as their neighbour merged"]


def test_sub_columns_with_a_gutter_between_them_stay_apart() -> None:
    """Two columns of figures share a gap between rules (no rule between them): kept."""
    cols = [(2.0, 198.0), (202.0, 298.0), (302.0, 350.0), (350.0, 398.0)]
    words = [_word("Label", 10, 0), _word("All", 210, 0), _word("Men", 310, 0), _word("Women", 352, 0)]
    words += [_word("Austria", 10, 1), _word("12", 240, 1), _word("5", 320, 1), _word("7", 370, 1)]
    words += [_word("Belgium", 10, 2), _word("30", 240, 2), _word("14", 315, 2), _word("16", 368, 2)]
    grid = token_grid(_model(cols, 3), words, lines=RulingLines(h=(), v=RULES))
    assert grid.n_cols == 4
    assert _texts(grid)[1] == ["Austria", "12", "5", "7"]


def test_an_empty_stub_beside_a_column_of_figures_is_kept() -> None:
    """Between the frame's two rules an empty stub and a column of figures each hold one run a
    row, but no row's run is parted by the boundary between them: two columns."""
    cols = [(2.0, 120.0), (120.0, 250.0), (250.0, 398.0)]
    words = [_word("Country", 10, 0), _word("Fund", 130, 0), _word("Total", 260, 0)]
    words += [_word("24.3", 130, 1), _word("26.9", 300, 1), _word("5.4", 130, 2), _word("12.5", 300, 2)]
    grid = token_grid(_model(cols, 3), words, lines=RulingLines(h=(), v=(0.0, 400.0)))
    assert grid.n_cols == 3 and _texts(grid)[1] == ["", "24.3", "26.9"]
