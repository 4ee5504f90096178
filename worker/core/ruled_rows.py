"""A row boundary moved onto the ruling line that runs through the row beside it.

A ruling line drawn across a table separates rows; text never sits on both sides of one
within a single cell. An image-to-markup model's row boxes can still end a row between two
lines of one header cell ("to air" over "kg/year") and start the next above the rule under
that cell: the second line then joins the first body row ("kg/year 50"), and every value of
the table reads under a column label cut short. The rule says where the row really ends.

One rule, on evidence the lines give: where a band holds words on both sides of a ruling
line, one of its boundaries lies on a ruling line and the other on none, the boundary on no
line moves onto the rule inside the band (so the rows keep their count, and the words
between go to the neighbour they belong with), provided the move cuts no word. A band whose
boundaries both lie on lines (two rows the model merged) or neither does (an unruled part
of the table) is left alone, and so are the first and last bands, whose outer edge is the
crop's.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from worker.core.bands import Band
from worker.core.types import Word

ON_LINE = 0.25  # a boundary this share of the median row height from a rule lies on it
# A word's box is trimmed by this share of its height before a rule counts as cutting it: OCR
# line boxes are padded (PP-OCR grows each text kernel by half again), so two lines' boxes
# overlap the rule drawn between them, while the ink of neither reaches it.
TRIM = 0.3


def _near(pos: float, lines: Sequence[float], tol: float) -> bool:
    return any(abs(pos - y) <= tol for y in lines)


def rows_onto_rules(bands: list[Band], words: Sequence[Word], rules: Sequence[float], repairs: list[str]) -> list[Band]:
    """`bands` (rows, top to bottom, a partition) with boundaries moved onto the rules running
    through their neighbours; every move is counted into `repairs`."""
    if len(bands) < 2 or not rules or not words:
        return bands
    height = median(b.size for b in bands)
    tol = max(2.0, ON_LINE * height)
    spans = [(w.bbox[1] + TRIM * (w.bbox[3] - w.bbox[1]), w.bbox[3] - TRIM * (w.bbox[3] - w.bbox[1])) for w in words]
    out = [Band(b.lo, b.hi, b.score) for b in bands]
    moved = 0
    for k, band in enumerate(out):
        inside = [y for y in rules if band.lo + tol < y < band.hi - tol]
        if not inside:
            continue
        if k == 0 or k == len(out) - 1:
            continue  # an outer band: the crop's edge is no evidence either way
        top_ruled, bottom_ruled = _near(band.lo, rules, tol), _near(band.hi, rules, tol)
        if top_ruled == bottom_ruled:
            continue
        # the rule nearest the boundary that lies on none, with words of this band on both sides
        loose = band.lo if not top_ruled else band.hi
        mine = [(a + b) / 2 for a, b in spans if band.lo <= (a + b) / 2 < band.hi]
        for y in sorted(inside, key=lambda v: abs(v - loose)):
            if not any(c < y for c in mine) or not any(c > y for c in mine):
                continue
            if any(a < y < b for a, b in spans):
                continue  # the rule runs through a word: not a boundary
            if not top_ruled:
                out[k - 1].hi = band.lo = y
            else:
                band.hi = out[k + 1].lo = y
            moved += 1
            break
    if moved:
        repairs.append(f"{moved} row boundar{'y' if moved == 1 else 'ies'} moved onto the ruling line through the row")
    return out
