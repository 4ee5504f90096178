"""A row label spanning up into the header, cut back to the row of its values.

On resampled and noisy scans SLANet sometimes sets the stub's empty header cell one row too
low: the first body row's label ("1,1,1-trichloroethane") then becomes a cell spanning the
header's last row ("to air kg/year") and its own. The header cannot end inside a cell, so no
header is marked or inferred, and every value of the table loses its column label. The words
say better: a stub cell spanning rows, whose text lies wholly in its last row, where that row
holds values beyond the stub and the rows above it hold labels only, is the label of that last
row. The cell is cut there: its upper rows become an empty stub head, its last row the label's
cell. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from worker.core.bands import Band
from worker.core.headers import is_value_like
from worker.core.spans import SpanRect
from worker.core.types import Word


def cut_stub_spans_into_body(
    rects: list[SpanRect], rows: list[Band], cols: list[Band], words: Sequence[Word], repairs: list[str]
) -> list[SpanRect]:
    """`rects` with each such stub cell cut (module docstring); the same list when none is."""
    if len(cols) < 2 or not words:
        return rects
    stub_end = cols[0].hi

    def row_of(w: Word) -> int | None:
        cy = (w.bbox[1] + w.bbox[3]) / 2
        return next((i for i, b in enumerate(rows) if b.lo <= cy < b.hi), None)

    stub_rows: set[int] = set()
    values: set[int] = set()
    labels: set[int] = set()
    for w in words:
        r = row_of(w)
        if r is None or not w.text.strip():
            continue
        if (w.bbox[0] + w.bbox[2]) / 2 < stub_end:
            stub_rows.add(r)
        elif is_value_like(w.text):
            values.add(r)
        else:
            labels.add(r)
    out: list[SpanRect] = []
    cut = 0
    for rect in rects:
        last = rect.r1
        text_rows = {r for r in stub_rows if rect.r0 <= r <= last}
        if (
            rect.c0 == rect.c1 == 0
            and last > rect.r0
            and text_rows == {last}
            and last in values
            and all(r in labels and r not in values for r in range(rect.r0, last))
        ):
            out += [
                SpanRect(rect.r0, last - 1, 0, 0, rect.score, rect.projected),
                SpanRect(last, last, 0, 0, rect.score, rect.projected),
            ]
            cut += 1
        else:
            out.append(rect)
    if cut:
        repairs.append(f"{cut} row label(s) spanning up into the header cut back to the row of their values")
    return out
