"""Wordless edge rows and columns of the model's grid taken as the crop's margin
(worker.core.empty_edges): pure, on bands and words placed by hand."""

from __future__ import annotations

from worker.core.bands import Band
from worker.core.empty_edges import drop_empty_edges
from worker.core.spans import SpanRect
from worker.core.types import Word


def _bands(edges: list[float]) -> list[Band]:
    return [Band(a, b, 0.9) for a, b in zip(edges, edges[1:])]


def _word(x: float, y: float) -> Word:
    return Word("12", (x - 5, y - 5, x + 5, y + 5), 0.99)


def test_an_empty_top_row_and_right_column_join_their_neighbours_and_an_empty_inner_row_stays() -> None:
    rows = _bands([0, 20, 40, 60, 80, 100])  # row 0 empty (margin), row 3 empty (a real gap row)
    cols = _bands([0, 100, 200, 260])  # column 2 empty (margin)
    words = [_word(x, y) for x in (50, 150) for y in (30, 50, 90)]
    rects = [SpanRect(0, 0, 0, 2), SpanRect(0, 4, 2, 2)]  # a cell across the top, one down the side
    repairs: list[str] = []
    out, rows2, cols2, header = drop_empty_edges(rects, rows, cols, {0, 1}, words, repairs)
    assert [(b.lo, b.hi) for b in rows2] == [(0, 40), (40, 60), (60, 80), (80, 100)]
    assert [(b.lo, b.hi) for b in cols2] == [(0, 100), (100, 260)]
    assert header == {0}
    assert out == []  # the cells of the margin row and column went with them
    assert repairs == ["2 empty row(s) or column(s) at the table's edge taken as its margin"]


def test_words_beyond_the_last_band_keep_it_and_no_words_change_nothing() -> None:
    rows = _bands([0, 20, 40, 60])
    cols = _bands([0, 100, 200])
    words = [_word(50, 10), _word(150, 30), _word(150, 75)]  # the last line lies under the model's last row
    repairs: list[str] = []
    assert drop_empty_edges([], rows, cols, set(), words, repairs)[1] == rows
    assert drop_empty_edges([], rows, cols, set(), [], repairs)[1:3] == (rows, cols)
    assert repairs == []
