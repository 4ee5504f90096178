"""Values the extraction is unsure of, marked where retrieval states them.

A chunk is read by a model that cannot look at the page. A value stated plainly under its
labels is taken as certain, so a value the pipeline doubts must say so in the text, not be
hidden (hiding it would lose a value that is often right). Four signals, all general:

- the cell's own confidence is below `UNSURE_CONFIDENCE` (the structure and text stages
  give low confidence to cells whose words they could not place cleanly, such as a note
  line read into the last row);
- the cell holds two or more bare numbers side by side (`15.9 21`), which is what two
  columns read as one look like. A number in thousands groups (`1 234`), a number with a
  bracketed share (`45 (12%)`) or a range (`1990-94`) is one value and is not marked;
- the header swallowed a body row (`swallowed_row`): a column label ends in a bare number
  (`Suffered from 93`) and its cell reaches down into a row whose first column starts a
  label of its own. That row's values were read into the header, so the body starts one
  line late: a row label spanning several rows (`Asthma` over its `Count` and `Percentage`
  rows) now starts on the last line of the label above it. The values of the first row of
  every such spanning label are marked; rows under a one-row label keep their own values;
- a percentage that lost its sign (`lost_percent`): in a column of bare numbers more than half
  of which end in `%` (three at least), a bare number without it. On a photocopy the thin
  `%` of a serif font breaks and is read as digits (`18%` as `1803`, `9%` as `904`, `8%` as
  `85`, eu-003 p1): the value is then wrong by the sign's reading, and nothing else shows it.

The marked text is the value followed by `UNSURE_MARK`; the grid, the HTML and the SQL
store keep the text as read.
"""

from __future__ import annotations

import re

from worker.core.headers import clean, is_value_like, label_text, slot_cells
from worker.core.types import TableGrid

UNSURE_CONFIDENCE = 0.5
UNSURE_MARK = " (unsure)"
PERCENT_SHARE = 0.5  # a column of percentages: more than this share of its bare numbers end in `%` ...
PERCENT_MIN = 3  # ... and this many at least

_BARE_NUMBER = re.compile(r"^[-+−]?\d+(?:[.,]\d+)*%?$")
_GROUPED = re.compile(r"^[-+−]?\d{1,3}(?: \d{3})+(?:[.,]\d+)?%?$")


def several_numbers(text: str) -> bool:
    """Two or more bare numbers side by side, not one number in thousands groups."""
    t = clean(text)
    tokens = t.split(" ")
    if len(tokens) < 2 or _GROUPED.match(t):
        return False
    return all(_BARE_NUMBER.match(tok) for tok in tokens)


def swallowed_row(grid: TableGrid, header_rows: int) -> bool:
    """A header cell (not in the first column) ends in a bare number after its words, and it
    spans down into a header row whose first column starts a label cell of its own: the
    first body row was read into the header, its values into the labels above them."""
    slots = slot_cells(grid)
    for cell in grid.cells:
        if cell.row >= header_rows or cell.col == 0 or cell.rowspan < 2:
            continue
        words = clean(cell.text).split(" ")
        if len(words) < 2 or not _BARE_NUMBER.match(words[-1]) or not is_value_like(words[-1]):
            continue
        for r in range(cell.row + 1, min(cell.row + cell.rowspan, header_rows, grid.n_rows)):
            first = slots[r][0]
            if first.row == r and first is not cell and label_text(first.text) and not is_value_like(first.text):
                return True
    return False


def lost_percent(grid: TableGrid, header_rows: int) -> set[tuple[int, int]]:
    """(row, col) of body cells holding a bare number without `%` in a column whose bare
    numbers mostly end in one."""
    out: set[tuple[int, int]] = set()
    for c in range(grid.n_cols):
        numbers = [x for x in grid.cells if x.col == c and x.row >= header_rows and _BARE_NUMBER.match(clean(x.text))]
        signed = sum(1 for x in numbers if clean(x.text).endswith("%"))
        if signed >= PERCENT_MIN and signed > PERCENT_SHARE * len(numbers):
            out.update((x.row, x.col) for x in numbers if not clean(x.text).endswith("%"))
    return out


def unsure_slots(grid: TableGrid, header_rows: int) -> set[tuple[int, int]]:
    """(row, col) slots of body cells whose value should not be stated as certain."""
    out: set[tuple[int, int]] = set()
    late: set[int] = set()  # first rows of spanning row labels, when the body starts a line late
    if swallowed_row(grid, header_rows):
        late = {c.row for c in grid.cells if c.col == 0 and c.row >= header_rows and c.rowspan > 1}
    unsigned = lost_percent(grid, header_rows)
    for cell in grid.cells:
        if cell.row < header_rows or not clean(cell.text):
            continue
        if (
            cell.confidence < UNSURE_CONFIDENCE
            or several_numbers(cell.text)
            or (cell.col > 0 and cell.row in late)
            or (cell.row, cell.col) in unsigned
        ):
            out.update(cell.slots())
    return out


def mark(text: str) -> str:
    return text + UNSURE_MARK if text else text
