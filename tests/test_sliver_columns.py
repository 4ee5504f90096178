"""Wordless inner columns narrower than a letter joined to a neighbour
(worker.core.sliver_columns): pure, on bands and words placed by hand."""

from __future__ import annotations

from worker.core.bands import Band
from worker.core.sliver_columns import drop_sliver_columns
from worker.core.spans import SpanRect
from worker.core.types import Word


def _bands(edges: list[float]) -> list[Band]:
    return [Band(a, b, 0.9) for a, b in zip(edges, edges[1:])]


def _word(x: float, y: float, text: str = "0.18") -> Word:
    return Word(text, (x - 18, y - 7, x + 18, y + 7), 0.99)  # 14 px high


def test_two_slivers_before_the_last_column_join_the_column_their_header_spans_into() -> None:
    # eu-011 p3 t1's photocopy: columns 9 and 0 px wide between "Italy" and "France"
    cols = _bands([0, 400, 500, 509, 509, 600])
    words = [_word(x, y) for x in (200, 450, 560) for y in (30, 60, 90)]
    rects = [SpanRect(0, 0, 2, 4)]  # "France" over both slivers and its own column
    repairs: list[str] = []
    out, cols2 = drop_sliver_columns(rects, cols, words, repairs)
    assert [(b.lo, b.hi) for b in cols2] == [(0, 400), (400, 500), (500, 600)]
    assert out == [SpanRect(0, 0, 2, 2)]
    assert repairs == ["2 wordless column(s) narrower than a letter joined to a neighbour"]


def test_a_wordless_column_as_wide_as_a_letter_or_a_narrow_one_with_a_word_stays() -> None:
    cols = _bands([0, 400, 420, 500, 508, 600])  # 20 px wide and empty; 8 px wide holding a dash
    words = [_word(x, y) for x in (200, 460, 560) for y in (30, 60)] + [Word("-", (502, 28, 506, 30), 0.9)]
    repairs: list[str] = []
    out, cols2 = drop_sliver_columns([SpanRect(0, 0, 1, 2)], cols, words, repairs)
    assert cols2 == cols and out == [SpanRect(0, 0, 1, 2)] and repairs == []


def test_a_sliver_with_no_span_joins_the_column_before_it_and_its_own_cells_go() -> None:
    cols = _bands([0, 100, 104, 200])
    words = [_word(50, 20), _word(150, 20)]
    out, cols2 = drop_sliver_columns([SpanRect(0, 1, 1, 1), SpanRect(0, 0, 2, 2)], cols, words, [])
    assert [(b.lo, b.hi) for b in cols2] == [(0, 104), (104, 200)]
    assert out == [SpanRect(0, 0, 1, 1)]
