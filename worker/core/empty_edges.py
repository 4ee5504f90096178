"""A first or last row, or column, that holds no word is the crop's margin read as one.

On a photocopy SLANet-plus read eu-001 p3 t7 with an empty row over the table and an empty
column down its right side: the header rules then started one row late and the group label
over the columns was split in two. At the edge of the grid, where no word lies, such a band is
the white paper the crop took around the table, and it goes into its neighbour (its slots join
the neighbour's, so no word can be lost); `wordless_bands` does the same inside the grid. Pure.
"""

from __future__ import annotations

import math

from worker.core.bands import Band
from worker.core.spans import SpanRect, join_band
from worker.core.types import Word


def drop_empty_edges(
    rects: list[SpanRect],
    rows: list[Band],
    cols: list[Band],
    header: set[int],
    words: list[Word],
    repairs: list[str],
) -> tuple[list[SpanRect], list[Band], list[Band], set[int]]:
    """`rects`, `rows`, `cols` and the header rows with every wordless edge row and column
    merged into its neighbour (a grid keeps at least two of each)."""
    if not words:  # nothing read: no row tells a margin from a table
        return rects, rows, cols, header
    dropped = 0
    while len(rows) > 2 and not _holds(-math.inf, rows[0].hi, words, 1):
        rects, rows = join_band(rects, rows, 0, 1, "row")
        header = {r - 1 for r in header if r > 0}
        dropped += 1
    while len(rows) > 2 and not _holds(rows[-1].lo, math.inf, words, 1):
        rects, rows = join_band(rects, rows, len(rows) - 1, len(rows) - 2, "row")
        header = {r for r in header if r < len(rows)}
        dropped += 1
    while len(cols) > 2 and not _holds(-math.inf, cols[0].hi, words, 0):
        rects, cols = join_band(rects, cols, 0, 1, "col")
        dropped += 1
    while len(cols) > 2 and not _holds(cols[-1].lo, math.inf, words, 0):
        rects, cols = join_band(rects, cols, len(cols) - 1, len(cols) - 2, "col")
        dropped += 1
    if dropped:
        repairs.append(f"{dropped} empty row(s) or column(s) at the table's edge taken as its margin")
    return rects, rows, cols, header


def _holds(lo: float, hi: float, words: list[Word], axis: int) -> bool:
    """Whether some word's centre lies in [lo, hi) (axis 0: across, 1: down). An edge band
    reaches past the grid: words beyond the model's last row are dealt to it later."""
    return any(lo <= (w.bbox[axis] + w.bbox[axis + 2]) / 2 < hi for w in words)
