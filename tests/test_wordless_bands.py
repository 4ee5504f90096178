"""Wordless inner columns joined to a neighbour (worker.core.wordless_bands): pure, on bands and
words placed by hand."""

from __future__ import annotations

from worker.core.bands import Band
from worker.core.spans import SpanRect
from worker.core.types import Word
from worker.core.wordless_bands import join_wordless_columns, join_wordless_rows


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
    out, cols2 = join_wordless_columns(rects, cols, words, repairs)
    assert [(b.lo, b.hi) for b in cols2] == [(0, 400), (400, 500), (500, 600)]
    assert out == [SpanRect(0, 0, 2, 2)]
    assert repairs == ["2 wordless inner column(s) joined to a neighbour"]


def test_a_column_as_wide_as_the_others_empty_in_every_row_joins_the_one_before_it() -> None:
    # eu-019 p3 t1's photocopy: its header band erased, an empty column between two of figures
    cols = _bands([0, 200, 300, 400, 500, 600])
    words = [_word(x, y) for x in (100, 250, 350, 550) for y in (30, 60, 90)]
    rects = [SpanRect(r, r, c, c) for r in range(3) for c in range(5)]
    out, cols2 = join_wordless_columns(rects, cols, words, [])
    assert [(b.lo, b.hi) for b in cols2] == [(0, 200), (200, 300), (300, 500), (500, 600)]
    assert out == [SpanRect(r, r, c, c) for r in range(3) for c in range(4)]


def test_a_narrow_column_holding_a_word_and_the_edge_columns_stay() -> None:
    cols = _bands([0, 400, 500, 508, 600, 700])  # 8 px wide holding a dash; the last one empty
    words = [_word(x, y) for x in (200, 460, 560) for y in (30, 60)] + [Word("-", (502, 28, 506, 30), 0.9)]
    repairs: list[str] = []
    out, cols2 = join_wordless_columns([SpanRect(0, 0, 1, 2)], cols, words, repairs)
    assert cols2 == cols and out == [SpanRect(0, 0, 1, 2)] and repairs == []


def test_a_sliver_with_no_span_joins_the_column_before_it_and_its_own_cells_go() -> None:
    cols = _bands([0, 100, 104, 200])
    words = [_word(50, 20), _word(150, 20)]
    out, cols2 = join_wordless_columns([SpanRect(0, 1, 1, 1), SpanRect(0, 0, 2, 2)], cols, words, [])
    assert [(b.lo, b.hi) for b in cols2] == [(0, 104), (104, 200)]
    assert out == [SpanRect(0, 0, 1, 1)]


def test_an_empty_inner_row_joins_the_row_a_cell_spans_it_with_and_the_header_follows() -> None:
    # eu-018 p1 t2's photocopy: an empty row under a header band the threshold half erased
    rows = _bands([0, 30, 60, 90, 120])
    words = [_word(x, y) for x in (100, 250) for y in (15, 75, 105)]
    rects = [SpanRect(0, 1, 0, 0), SpanRect(0, 0, 1, 1), *(SpanRect(r, r, c, c) for r in (1, 2, 3) for c in (1,))]
    rects += [SpanRect(r, r, 0, 0) for r in (2, 3)]
    repairs: list[str] = []
    out, rows2, header = join_wordless_rows(rects, rows, {0, 1}, words, repairs)
    assert [(b.lo, b.hi) for b in rows2] == [(0, 60), (60, 90), (90, 120)]
    assert header == {0}
    assert SpanRect(0, 0, 0, 0) in out and SpanRect(0, 0, 1, 1) in out
    assert repairs == ["1 wordless inner row(s) joined to a neighbour"]
