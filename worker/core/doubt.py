"""Values the extraction is unsure of, marked where retrieval states them.

A chunk is read by a model that cannot look at the page. A value stated plainly under its
labels is taken as certain, so a value the pipeline doubts must say so in the text, not be
hidden (hiding it would lose a value that is often right). Two signals, both general:

- the cell's own confidence is below `UNSURE_CONFIDENCE` (the structure and text stages
  give low confidence to cells whose words they could not place cleanly, such as a note
  line read into the last row);
- the cell holds two or more bare numbers side by side (`15.9 21`), which is what two
  columns read as one look like. A number in thousands groups (`1 234`), a number with a
  bracketed share (`45 (12%)`) or a range (`1990-94`) is one value and is not marked.

The marked text is the value followed by `UNSURE_MARK`; the grid, the HTML and the SQL
store keep the text as read.
"""

from __future__ import annotations

import re

from worker.core.headers import clean
from worker.core.types import TableGrid

UNSURE_CONFIDENCE = 0.5
UNSURE_MARK = " (unsure)"

_BARE_NUMBER = re.compile(r"^[-+−]?\d+(?:[.,]\d+)*%?$")
_GROUPED = re.compile(r"^[-+−]?\d{1,3}(?: \d{3})+(?:[.,]\d+)?%?$")


def several_numbers(text: str) -> bool:
    """Two or more bare numbers side by side, not one number in thousands groups."""
    t = clean(text)
    tokens = t.split(" ")
    if len(tokens) < 2 or _GROUPED.match(t):
        return False
    return all(_BARE_NUMBER.match(tok) for tok in tokens)


def unsure_slots(grid: TableGrid, header_rows: int) -> set[tuple[int, int]]:
    """(row, col) slots of body cells whose value should not be stated as certain."""
    out: set[tuple[int, int]] = set()
    for cell in grid.cells:
        if cell.row < header_rows or not clean(cell.text):
            continue
        if cell.confidence < UNSURE_CONFIDENCE or several_numbers(cell.text):
            out.update(cell.slots())
    return out


def mark(text: str) -> str:
    return text + UNSURE_MARK if text else text
