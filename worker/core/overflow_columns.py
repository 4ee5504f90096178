"""A column that holds only the overflow of the columns beside it is no column.

On a photocopy SLANet-plus read eu-027 p3 t1 with an extra column between the stub and
"Mean": the short stub labels left it empty, and the long ones ("Households with children",
"Household income (Euro/month)") ran into it, either read as cells two columns wide or with
their last words in the extra column's own cells; a value split by a speck ("0" ".13") put its
first piece there too. No word in it stands on its own: each belongs to a cell begun in the
column to its left, or goes on a word of a neighbour column on the same line, closer than a
column gutter; and most rows leave it empty. A table's columns exist because they hold values
of their own, so such a column is joined to its left neighbour and the spans over it close up;
the pieces of the right neighbour's values stay with it (its left edge moves to them). Columns
set close together hold words in most rows, and stay (eu-007 p5: "Butter Margarine", "6028
1385"). A column with no word at all is `wordless_bands`'s. Pure.
"""

from __future__ import annotations

from worker.core.bands import Band
from worker.core.column_split import GUTTER_HEIGHTS
from worker.core.geometry import line_gap
from worker.core.header_words import WORD_SPACE
from worker.core.headers import is_value_like
from worker.core.spans import SpanRect, join_band
from worker.core.types import Word

# Most rows leave such a column empty (their labels are short): a column with words in more
# rows than this share is a column set close to its neighbour (eu-007 p5 "Butter Margarine")
EMPTY_SHARE = 0.5


def join_overflow_columns(
    rects: list[SpanRect], rows: list[Band], cols: list[Band], words: list[Word], repairs: list[str]
) -> tuple[list[SpanRect], list[Band]]:
    """`rects` and `cols` with every inner column whose words all run over from the columns
    beside it joined to the column to its left."""
    joined = 0
    k = 1
    while k < len(cols) - 1 and len(cols) > 2:
        rightward = _overflow(rects, rows, cols, words, k)
        if rightward is None:
            k += 1
            continue
        rects, cols = join_band(rects, cols, k, k - 1, "col")
        if rightward:  # the right neighbour's pieces go back to it
            edge = min(w.bbox[0] for w in rightward)
            if cols[k - 1].lo < edge < cols[k].hi:
                cols[k - 1].hi = cols[k].lo = edge
        joined += 1
    if joined:
        repairs.append(f"{joined} column(s) holding only the overflow of their neighbours joined to the left one")
    return rects, cols


def _overflow(
    rects: list[SpanRect], rows: list[Band], cols: list[Band], words: list[Word], k: int
) -> list[Word] | None:
    """When every word of column `k` runs over from its neighbours, those that go on a word of
    the column to its right (an empty list when none does); None when one is the column's own or
    the column holds no word. Words are taken left to right, so a label's tail runs on from the
    word before it."""
    mine = sorted((w for w in words if _centre_in(w, cols[k], 0)), key=lambda w: w.bbox[0])
    if not mine or _rows_holding(mine, rows) > EMPTY_SHARE * len(rows):
        return None
    left = [w for w in words if _centre_in(w, cols[k - 1], 0)]
    right = [w for w in words if _centre_in(w, cols[k + 1], 0)]
    rightward = []
    for w in mine:
        row = next((i for i, b in enumerate(rows) if _centre_in(w, b, 1)), None)
        if row is None:
            return None
        cell = next((r for r in rects if r.r0 <= row <= r.r1 and r.c0 <= k <= r.c1), None)
        if (cell is not None and cell.c0 < k) or _goes_on(w, left, rows[row], before=True):
            left.append(w)
        elif _goes_on(w, right, rows[row], before=False):
            rightward.append(w)
        else:
            return None
    return rightward


def _rows_holding(words: list[Word], rows: list[Band]) -> int:
    return sum(1 for b in rows if any(_centre_in(w, b, 1) for w in words))


def _goes_on(w: Word, others: list[Word], row: Band, before: bool) -> bool:
    """Whether `w` is on one line with a word of `others` in `row` that starts before it
    (`before`) or after it, closer than a column gutter (a photocopy's thinned strokes leave
    word spaces of one and a half text heights: eu-027 p3 "wealth end"), as one text: two
    values side by side are two values (eu-005 p2's sparse "PBUK | EH" columns, "67.9 72.9"),
    unless they are one value's pieces ("0" "3" a word space apart, where a speck took ".1")."""
    return any(
        _centre_in(v, row, 1)
        and (v.bbox[0] < w.bbox[0]) == before
        and v is not w
        and _one_text(v, w)
        and _one_value(*((v, w) if before else (w, v)))
        for v in others
    )


def _one_value(first: Word, second: Word) -> bool:
    """`first` and `second` (in reading order) may be one text: not two values, or one value's
    pieces (its decimals split off, or a word space apart or closer: a lost point)."""
    if not (is_value_like(first.text) and is_value_like(second.text)):
        return True
    h = max(first.bbox[3] - first.bbox[1], second.bbox[3] - second.bbox[1])
    return second.text.lstrip().startswith((".", ",")) or second.bbox[0] - first.bbox[2] <= WORD_SPACE * h


def _one_text(a: Word, b: Word) -> bool:
    on_line = line_gap(a.bbox, b.bbox)
    return on_line is not None and on_line[0] < GUTTER_HEIGHTS * on_line[1]


def _centre_in(w: Word, band: Band, axis: int) -> bool:
    return band.lo <= (w.bbox[axis] + w.bbox[axis + 2]) / 2 < band.hi
