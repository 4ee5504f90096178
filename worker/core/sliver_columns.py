"""A column narrower than a letter that holds no word is a sliver between two boundaries.

On a photocopy SLANet-plus read eu-011 p3 t1 with two columns 9 and 0 pixels wide between
"Italy" and "France": no word lies in them, and the header's "France" spanned all three. A
table's columns exist because they hold values (none of the 111 dev tables has a column
without text of its own), and none narrower than a letter can hold one. Such a sliver goes into
the neighbour that cells already span it with (its slots join that neighbour's, so no word is
lost). A wordless column as wide as a letter stays: its text may be what the scan lost.
`empty_edges` deals with wordless columns at the grid's edge. Pure.
"""

from __future__ import annotations

import statistics

from worker.core.bands import Band
from worker.core.spans import SpanRect, join_band
from worker.core.types import Word


def drop_sliver_columns(
    rects: list[SpanRect], cols: list[Band], words: list[Word], repairs: list[str]
) -> tuple[list[SpanRect], list[Band]]:
    """`rects` and `cols` with every inner column narrower than the words' median height, and
    holding no word's centre, merged into a neighbour."""
    if len(cols) < 3 or not words:
        return rects, cols
    letter = statistics.median(w.bbox[3] - w.bbox[1] for w in words)
    dropped = 0
    k = 1
    while k < len(cols) - 1 and len(cols) > 2:
        band = cols[k]
        if band.hi - band.lo >= letter or any(band.lo <= (w.bbox[0] + w.bbox[2]) / 2 < band.hi for w in words):
            k += 1
            continue
        into = k + 1 if _shared(rects, k, k + 1) > _shared(rects, k - 1, k) else k - 1
        rects, cols = join_band(rects, cols, k, into, "col")
        dropped += 1
    if dropped:
        repairs.append(f"{dropped} wordless column(s) narrower than a letter joined to a neighbour")
    return rects, cols


def _shared(rects: list[SpanRect], a: int, b: int) -> int:
    """How many merged cells span both columns `a` and `b`."""
    return sum(1 for r in rects if r.c0 <= a and b <= r.c1)
