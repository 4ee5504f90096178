"""Which detected lines of a caption strip are worth reading: the caption step's use of them.

On a scan, the strips above and below a table are OCR'd for its caption and notes, and a strip
often holds body text: long lines that cost more recognition than the table's own cells, for
nothing, since worker.core.captions takes only the block of lines nearest the table (a caption
of at most `caption_max_lines`, notes of at most `notes_max_lines`, unless they start like
"Table 4" or "Note") and needs of the lines beyond it only that they exist (the page beyond is
not clear). So a line finder's boxes are grouped into rows, and rows are taken in order away
from the table while each gap is one a caption or note may have, up to the line cap; the rest
are seen and not read. The gaps are judged on the finder's boxes, which are taller than the
words' ink boxes and so sit closer together: a gap that ends the block here ends it there too,
and `SLACK` widens the limits further, so a row the caption step could use is always read.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from worker.core.types import BBox

SLACK = 1.5  # the gap limits, widened: reading a row too many costs little, one too few a caption
LINE_GAP = 0.9  # the largest gap between lines of one block, in line heights (as captions._block)


@dataclass(slots=True)
class Row:
    """Boxes side by side on one text row (their vertical centres within each other's extent)."""

    top: float
    bottom: float
    members: list[int] = field(default_factory=list)


def rows_of(boxes: Sequence[BBox]) -> list[Row]:
    """The boxes grouped into rows, top to bottom (indices into `boxes`)."""
    rows: list[Row] = []
    for i in sorted(range(len(boxes)), key=lambda i: (boxes[i][1] + boxes[i][3]) / 2):
        b = boxes[i]
        cy = (b[1] + b[3]) / 2
        row = next((r for r in rows if r.top <= cy <= r.bottom), None)
        if row is None:
            rows.append(Row(b[1], b[3], [i]))
        else:
            row.members.append(i)
            row.top, row.bottom = min(row.top, b[1]), max(row.bottom, b[3])
    return sorted(rows, key=lambda r: r.top)


def _centre_in(box: BBox, other: BBox) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return other[0] <= cx <= other[2] and other[1] <= cy <= other[3]


def strip_lines_to_read(
    boxes: Sequence[BBox],
    table: BBox,
    *,
    above: bool,
    max_lines: int,
    max_gap: float,
    other_tables: Sequence[BBox] = (),
) -> list[int]:
    """Indices of the line `boxes` (page px) of the strip above (`above`) or below `table` that
    the caption step can use, in index order: the rows nearest the table while the first lies
    within `max_gap` line heights of it and each next within a line gap of the previous, at most
    `max_lines` rows, none beyond another table's edge. Boxes inside another table are not ours."""
    others = [b for b in other_tables if tuple(b) != tuple(table)]
    mine = [i for i, b in enumerate(boxes) if not any(_centre_in(b, o) for o in others)]
    if not mine or max_lines <= 0:
        return []
    line_h = max(1.0, statistics.median(boxes[i][3] - boxes[i][1] for i in mine))
    rows = rows_of([boxes[i] for i in mine])
    rows = [r for r in rows if (r.bottom <= table[1] + 0.5 * line_h if above else r.top >= table[3] - 0.5 * line_h)]
    rows.sort(key=(lambda r: -r.bottom) if above else (lambda r: r.top))
    edges = [o[3] for o in others if o[3] <= table[1]] if above else [o[1] for o in others if o[1] >= table[3]]
    taken: list[int] = []
    previous: Row | None = None
    for row in rows[:max_lines]:
        if above:
            beyond = any(row.bottom < e for e in edges)
            gap = (table[1] if previous is None else previous.top) - row.bottom
        else:
            beyond = any(row.top > e for e in edges)
            gap = row.top - (table[3] if previous is None else previous.bottom)
        limit = (max_gap if previous is None else LINE_GAP) * line_h * SLACK
        if beyond or gap > limit:
            break
        taken += [mine[k] for k in row.members]
        previous = row
    return sorted(taken)
