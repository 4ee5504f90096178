"""Header labels wrapped over two lines, read as two rows, joined back into one row.

A column label set on two or three lines ("population" over "1995 (mn)") is one cell. A
structure model can cut the header between its lines, or read the top line as a title row
spanning the table: every column then has half a label in each row, and the inferred header
stops at the row whose text looks like figures ("1995 (mn)", "(000)**"). Two leading rows are
one wrapped row when the text says so:

- neither holds text in the stub (a body row has its label there);
- the upper row's labels, one per column (none spread over several, as a group label is),
  sit in the very columns of the lower row's texts, two columns or more;
- the lower lines follow the upper ones at a line's spacing (the gap under the upper text is
  under `LINE_GAP` text heights) with no ruling line between them.

The lower row's cells are kept over both rows' bands; the upper row's cells, a spanning title
cell included, give way. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from worker.core.bands import Band
from worker.core.header_spans import LABEL_GAP_HEIGHTS, word_groups
from worker.core.headers import is_figure, is_value_like
from worker.core.spans import SpanRect
from worker.core.types import Word

LINE_GAP = 0.8  # at most this many text heights of space between the lines of one label
MAX_LEAD = 3  # only the first rows can be a wrapped header


def join_wrapped_header_rows(
    rects: list[SpanRect],
    rows: list[Band],
    cols: list[Band],
    head: set[int],
    header: set[int],
    words: Sequence[Word],
    rules: Sequence[float],
    repairs: list[str],
) -> tuple[list[SpanRect], list[Band], set[int], set[int]]:
    """`rects`, `rows`, the header rows to repair (`head`) and the model's (`header`) with each
    wrapped pair of leading rows joined (module docstring); the same objects when none is."""
    if len(cols) < 3 or len(rows) < 3 or not words:
        return rects, rows, head, header
    heights = [w.bbox[3] - w.bbox[1] for w in words if w.bbox[3] > w.bbox[1]]
    if not heights:
        return rects, rows, head, header
    text_h = median(heights)
    joined = 0
    r = 0
    while r < min(MAX_LEAD, len(rows) - 2):
        if not _wrapped(rows[r], rows[r + 1], cols, words, rules, text_h):
            if _has_values(rows[r], cols, words):
                break
            r += 1
            continue
        merged = _merge(rects, r, {_column_of((w.bbox[0] + w.bbox[2]) / 2, cols) for w in _inside(rows[r + 1], words)})
        if merged is None:
            break
        rects = merged
        rows = [*rows[:r], Band(rows[r].lo, rows[r + 1].hi, min(rows[r].score, rows[r + 1].score)), *rows[r + 2 :]]
        header = {h - 1 if h > r else h for h in header}
        head = {h - 1 if h > r else h for h in head}
        joined += 1
    if joined:
        repairs.append(f"{joined} header row(s) holding the upper lines of wrapped labels joined to the row below")
    return rects, rows, head, header


def _inside(band: Band, words: Sequence[Word]) -> list[Word]:
    return [w for w in words if band.lo <= (w.bbox[1] + w.bbox[3]) / 2 < band.hi and w.text.strip()]


def _has_values(band: Band, cols: list[Band], words: Sequence[Word]) -> bool:
    """Whether a row holds figures beyond the stub: where the header ends. A lone dash is no
    figure here (a mark over a photocopied table read as one ended the search above its header)."""
    inside = [w for w in _inside(band, words) if (w.bbox[0] + w.bbox[2]) / 2 >= cols[1].lo]
    return any(is_figure(w.text) for w in inside)


def _column(x0: float, x1: float, cols: list[Band]) -> int | None:
    """The one column an extent lies in (a little overhang allowed), else None."""
    for c, band in enumerate(cols):
        slack = 0.1 * band.size
        if band.lo - slack <= x0 and x1 <= band.hi + slack:
            return c
    return None


def _wrapped(
    upper: Band, lower: Band, cols: list[Band], words: Sequence[Word], rules: Sequence[float], text_h: float
) -> bool:
    top, bottom = _inside(upper, words), _inside(lower, words)
    stub_end = cols[1].lo
    if not top or not bottom or any((w.bbox[0] + w.bbox[2]) / 2 < stub_end for w in [*top, *bottom]):
        return False
    if any(is_value_like(w.text) for w in top):
        return False
    labels = word_groups(top, LABEL_GAP_HEIGHTS * text_h)
    where = [_column(a, b, cols) for a, b in labels]
    if any(c is None for c in where) or len(set(where)) != len(where) or len(where) < 2:
        return False
    under = {_column_of((w.bbox[0] + w.bbox[2]) / 2, cols) for w in bottom}
    if under != set(where):
        return False
    gap_top = max(w.bbox[3] for w in top)
    gap_bottom = min(w.bbox[1] for w in bottom)
    if gap_bottom - gap_top > LINE_GAP * text_h:
        return False
    return not any(gap_top - 1 < y < gap_bottom + 1 for y in rules)


def _column_of(x: float, cols: list[Band]) -> int:
    return min(range(len(cols)), key=lambda c: 0 if cols[c].lo <= x < cols[c].hi else abs(cols[c].mid - x))


def _merge(rects: list[SpanRect], r: int, filled: set[int]) -> list[SpanRect] | None:
    """Rows r and r+1 made one: the lower row's cells over both, the upper row's dropped; a
    cell from above ending in row r (an empty stub head) takes the joined row where the lower
    row's cell under it is empty (`filled`: the lower row's columns with text). None when no
    clean join exists."""
    from_above = [x for x in rects if x.r0 < r == x.r1]
    covered = {c for x in from_above for c in range(x.c0, x.c1 + 1)}
    if covered & filled:
        return None
    out: list[SpanRect] = []
    for rect in rects:
        if rect.r0 == rect.r1 == r:
            continue  # the upper row's own cells give way
        if rect.r0 == rect.r1 == r + 1 and rect.c0 in covered:
            if not all(c in covered for c in range(rect.c0, rect.c1 + 1)):
                return None
            continue  # the empty cell under a stub head from above gives way to it
        if rect in from_above:
            out.append(rect)
        elif rect.r0 <= r < rect.r1 or rect.r0 == r + 1:
            out.append(SpanRect(min(rect.r0, r), rect.r1 - 1, rect.c0, rect.c1, rect.score, rect.projected))
        elif rect.r1 < r:
            out.append(rect)
        else:
            out.append(SpanRect(rect.r0 - 1, rect.r1 - 1, rect.c0, rect.c1, rect.score, rect.projected))
    return out
