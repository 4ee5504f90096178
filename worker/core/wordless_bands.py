"""An inner row or column that holds no word is no part of the table: the model drew it.

On a photocopy SLANet-plus read eu-011 p3 t1 with two columns 9 and 0 pixels wide between
"Italy" and "France", no word in them, the header's "France" over all three; eu-019 p3 t1 (its
header band erased) with a column as wide as the others, empty in every one of its 18 rows,
between two columns of figures; and eu-018 p1 t2 with an empty row under its half-erased
header. A table's rows and columns exist because they hold text: none of the dev tables'
ground truths has a row or a column without text of its own, and a scan that loses a whole
row's or column's text keeps its neighbours' only where it was printed apart (a light tint),
which no dev page shows. Such a band goes into the neighbour that cells already span it with
(its slots join that neighbour's, so no word is lost), the one before it otherwise.
`empty_edges` deals with wordless bands at the grid's edge, `overflow_columns` with columns
whose only words run over from their neighbours. Pure.
"""

from __future__ import annotations

from worker.core.bands import Band
from worker.core.spans import SpanRect, join_band
from worker.core.types import Word


def join_wordless_columns(
    rects: list[SpanRect], cols: list[Band], words: list[Word], repairs: list[str]
) -> tuple[list[SpanRect], list[Band]]:
    """`rects` and `cols` with every inner column holding no word's centre merged into a neighbour."""
    rects, cols, joined = _join_wordless(rects, cols, words, "col")
    if joined:
        repairs.append(f"{len(joined)} wordless inner column(s) joined to a neighbour")
    return rects, cols


def join_wordless_rows(
    rects: list[SpanRect], rows: list[Band], header: set[int], words: list[Word], repairs: list[str]
) -> tuple[list[SpanRect], list[Band], set[int]]:
    """`rects`, `rows` and the header rows with every inner row holding no word's centre merged
    into a neighbour (the joined row is its neighbour's, header or body)."""
    rects, rows, joined = _join_wordless(rects, rows, words, "row")
    for k in joined:
        header = {r - 1 if r > k else r for r in header if r != k}
    if joined:
        repairs.append(f"{len(joined)} wordless inner row(s) joined to a neighbour")
    return rects, rows, header


def _join_wordless(
    rects: list[SpanRect], bands: list[Band], words: list[Word], axis: str
) -> tuple[list[SpanRect], list[Band], list[int]]:
    """The bands with each wordless inner one joined, and the index each had when it went."""
    if len(bands) < 3 or not words:
        return rects, bands, []
    i = 0 if axis == "col" else 1
    joined: list[int] = []
    k = 1
    while k < len(bands) - 1 and len(bands) > 2:
        band = bands[k]
        if any(band.lo <= (w.bbox[i] + w.bbox[i + 2]) / 2 < band.hi for w in words):
            k += 1
            continue
        into = k + 1 if _shared(rects, k, k + 1, axis) > _shared(rects, k - 1, k, axis) else k - 1
        rects, bands = join_band(rects, bands, k, into, axis)
        joined.append(k)
    return rects, bands, joined


def _shared(rects: list[SpanRect], a: int, b: int, axis: str) -> int:
    """How many merged cells span both bands `a` and `b`."""
    return sum(1 for r in rects if (r.c0 if axis == "col" else r.r0) <= a and b <= (r.c1 if axis == "col" else r.r1))
