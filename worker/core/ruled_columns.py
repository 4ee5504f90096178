"""Model columns that share one gap between vertical rules, with one run of text in each row, are one column.

On a skewed or resampled ruled table SLANet-plus can read a column too many: eu-001's "to
water" column came back as two, with "2 million" parted into "2" | "million" and the dashes
of its neighbours lost. The vertical rules show where the columns are and the words agree: in
every row the text between two rules is one run, words a space apart, and in some row the
model's boundary parts that run. Sub-columns that share a gap legitimately (no rule between
them) have a gutter in their rows or labels, and an empty stub beside a column of figures parts
no run, so they are kept; so are columns outside the outermost rules, where the rules bound
nothing.

Pure Python: bands, slot rectangles, rule positions and words in crop pixels.
"""

from __future__ import annotations

from bisect import bisect
from collections.abc import Sequence
from statistics import median

from worker.core.bands import Band
from worker.core.column_split import merge_columns
from worker.core.spans import SpanRect
from worker.core.types import Word

RUN_GAP = 1.2  # words further apart than this many text heights are two runs (a space is ~0.3)
MIN_ROWS = 2  # body rows with text in the gap needed before its columns are judged


def merge_columns_between_rules(
    rects: list[SpanRect],
    rows: list[Band],
    cols: list[Band],
    rules: Sequence[float],
    header: set[int],
    words: list[Word],
    repairs: list[str],
) -> tuple[list[SpanRect], list[Band]]:
    """`rects` and `cols` with each pair of neighbouring columns that lie between the same two
    vertical `rules`, and hold one run of text in every row that has text there, merged."""
    edges = sorted(rules)
    if len(cols) < 3 or len(edges) < 2 or not words:
        return rects, cols
    height = median(w.bbox[3] - w.bbox[1] for w in words)
    bands = [(b, i not in header) for i, b in enumerate(rows)]
    merged = 0
    c = 0
    while c + 1 < len(cols):
        if _one_column(c, rects, cols, edges, bands, words, height):
            rects, cols = merge_columns(rects, cols, keep=c, gone=c + 1)
            merged += 1
        else:
            c += 1
    if merged:
        repairs.append(f"{merged} column(s) read between the same two vertical rules as their neighbour merged")
    return rects, cols


def _one_column(
    c: int,
    rects: list[SpanRect],
    cols: list[Band],
    edges: list[float],
    bands: list[tuple[Band, bool]],
    words: list[Word],
    height: float,
) -> bool:
    """Whether columns `c` and `c + 1` are one: the same bounded gap between rules, one run of
    text in every row (header rows included), a run the model's boundary parts in some body row,
    and no cell that would overlap another once they are one. (`bands`: each row, and whether it
    is the body's.)"""
    gap = bisect(edges, (cols[c].lo + cols[c].hi) / 2)
    if gap in (0, len(edges)) or bisect(edges, (cols[c + 1].lo + cols[c + 1].hi) / 2) != gap:
        return False
    if any(r.c0 == c + 1 < r.c1 for r in rects):
        return False  # a cell from the second column on to the right would overlap the first's
    lo, mid, hi = cols[c].lo, cols[c].hi, cols[c + 1].hi
    judged = crossed = 0
    for band, is_body in bands:
        inside = sorted(
            (
                w
                for w in words
                if band.lo <= (w.bbox[1] + w.bbox[3]) / 2 < band.hi and lo <= (w.bbox[0] + w.bbox[2]) / 2 < hi
            ),
            key=lambda w: w.bbox[0],
        )
        if not inside:
            continue
        reach = inside[0].bbox[2]
        for w in inside[1:]:
            if w.bbox[0] - reach > RUN_GAP * height:
                return False  # a gutter: two columns of text (labels included)
            reach = max(reach, w.bbox[2])
        if is_body:
            judged += 1
            crossed += len({(w.bbox[0] + w.bbox[2]) / 2 < mid for w in inside}) == 2
    return judged >= MIN_ROWS and crossed > 0  # one run parted by the model's boundary somewhere
