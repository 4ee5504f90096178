"""The last line of a column header that the first body row took.

A structure model can end its header row between the two lines of a header cell ("to air" over
"kg/year") and start the body above the second: that line then joins the first body row
("kg/year 50"), and every value of the table reads under a label cut short. Ruling lines say
where a row ends when the table has them (`worker.core.ruled_rows`); this rule asks the text,
so it holds on unruled tables and on scans whose rules were not found.

The first body row gives its top text line back to the header when that line holds labels
only (no value: `worker.core.headers.is_value_like`), none of them in the stub, and the lines
below it in the same row hold the row's label and its values. A body row's label starts on its first line,
so a line with no stub text above the values is the header's.
"""

from __future__ import annotations

from worker.core.bands import Band
from worker.core.header_spans import header_rows_by_words
from worker.core.headers import is_value_like
from worker.core.text_lines import text_lines
from worker.core.types import Word


def header_line_back(
    rows: list[Band], cols: list[Band], header: set[int], words: list[Word], repairs: list[str]
) -> list[Band]:
    """`rows` with the boundary under the header moved below the first body row's top line when
    that line is the header's (module docstring); the same bands otherwise. The header is the
    model's, or where it marked none the leading rows without a value outside the stub."""
    header = header or header_rows_by_words(rows, cols, words)
    head = 0
    while head in header:
        head += 1
    if head == 0 or head >= len(rows):
        return rows
    band = rows[head]
    inside = [w for w in words if band.lo <= (w.bbox[1] + w.bbox[3]) / 2 < band.hi and w.text.strip()]
    if len(inside) < 2:
        return rows
    lines = text_lines(inside)
    if len(lines) < 2:
        return rows
    top, rest = lines[0].words, [w for line in lines[1:] for w in line.words]

    def in_stub(ws: list[Word]) -> bool:
        return any((w.bbox[0] + w.bbox[2]) / 2 < cols[0].hi for w in ws)

    if in_stub(top) or not in_stub(rest):
        return rows  # the row's label starts on the top line, or no row label lies below it
    if any(is_value_like(w.text) for w in top) or not any(is_value_like(w.text) for w in rest):
        return rows
    cut = (lines[0].bottom + lines[1].top) / 2
    if not band.lo < cut < band.hi:
        return rows
    out = [Band(b.lo, b.hi, b.score) for b in rows]
    out[head - 1].hi = out[head].lo = cut
    repairs.append("the header's last line, taken into the first body row, given back to the header")
    return out
