"""OCR glyph confusions repaired where the context leaves no doubt: `l,200` in a column of
numbers is `1,200`; `Ql` beside `Q2`, `Q3`, `Q4` is `Q1`.

OCR engines confuse a few glyph pairs that look alike in most fonts: the digit one with the
letters l and I (and a bar), zero with the letter O. Elsewhere either reading is possible,
so nothing is changed; a repair is made only where the context says a digit is meant:
- a cell of a numeric column (most of its cells parse as numbers) whose text does not parse,
  has at least one real digit, and parses once the look-alikes are read as digits;
- an enumerated label ("Q1", "H2", "Wave 3") whose siblings in the same row or column share
  its prefix followed by digits, when the repaired label is not already among them.
Every repair is returned (cell, before, after, rule) so the record says what was changed.
"""

from __future__ import annotations

import re
from typing import Any

from worker.core.headers import slot_cells
from worker.core.numbers import parse_number
from worker.core.types import Cell, TableGrid

# Look-alikes of digits, and the digit each stands for (only one-to-one confusions).
DIGIT_LOOKALIKES = {"l": "1", "I": "1", "|": "1", "O": "0", "o": "0"}
_ENUM = re.compile(r"^(\D*?[^\W\d_])\s?(\d{1,3})$")
_ENUM_CONFUSED = re.compile(r"^(\D*?[^\W\d_])\s?([\dlIO|o]{1,3})$")
MIN_SIBLINGS = 2
# A column is numeric for this repair when two thirds of its filled cells parse: the typed view's
# 90% would let one confusion in a short column hide the column's kind.
NUMERIC_MAJORITY = 2 / 3


def _as_digits(text: str) -> str:
    return "".join(DIGIT_LOOKALIKES.get(ch, ch) for ch in text)


def _numeric_columns(grid: TableGrid, slots: list[list[Cell]]) -> list[bool]:
    out = []
    for c in range(grid.n_cols):
        parsed = [
            parse_number(slots[r][c].text)
            for r in range(grid.header_rows, grid.n_rows)
            if slots[r][c].col == c and slots[r][c].row == r and slots[r][c].text.strip()
        ]
        filled = [p for p in parsed if p.kind != "null"]
        good = sum(1 for p in filled if p.kind == "number")
        out.append(good >= MIN_SIBLINGS and good >= NUMERIC_MAJORITY * len(filled) and c > 0)
    return out


def _numeric_repair(text: str) -> str | None:
    t = text.strip()
    if not any(ch.isdigit() for ch in t) or not any(ch in DIGIT_LOOKALIKES for ch in t):
        return None
    if parse_number(t).kind != "text":
        return None
    fixed = _as_digits(t)
    return fixed if parse_number(fixed).kind == "number" else None


def _enumeration_repair(text: str, siblings: list[str]) -> str | None:
    m = _ENUM_CONFUSED.match(text.strip())
    if not m or _ENUM.match(text.strip()) or not any(ch in DIGIT_LOOKALIKES for ch in m.group(2)):
        return None
    prefix = m.group(1)
    if prefix[-1] in DIGIT_LOOKALIKES:  # "Ol" could be "O1" or "01": not unambiguous
        return None
    fixed = text.strip()[: m.start(2)] + _as_digits(m.group(2))
    matching = [s for s in siblings if (e := _ENUM.match(s.strip())) and e.group(1) == prefix]
    if len(matching) < MIN_SIBLINGS or fixed in {s.strip() for s in siblings}:
        return None
    return fixed


def repair_glyphs(grid: TableGrid) -> list[dict[str, Any]]:
    """Repair digit look-alikes in `grid` in place (see the module docstring); the repairs made."""
    if grid.n_rows == 0 or grid.n_cols == 0:
        return []
    slots = slot_cells(grid)
    numeric = _numeric_columns(grid, slots)
    repairs: list[dict[str, Any]] = []
    owned = [cell for cell in grid.sorted_cells() if cell.text.strip()]
    texts = {id(cell): cell.text for cell in owned}  # siblings as read, before any repair
    for cell in owned:
        fixed, rule = None, ""
        if cell.colspan == 1 and numeric[cell.col] and cell.row >= grid.header_rows:
            fixed, rule = _numeric_repair(cell.text), "numeric_column"
        if fixed is None:
            row_sibs = [texts[id(o)] for o in owned if o.row == cell.row and o is not cell]
            col_sibs = [texts[id(o)] for o in owned if o.col == cell.col and o is not cell]
            fixed = _enumeration_repair(cell.text, row_sibs) or _enumeration_repair(cell.text, col_sibs)
            rule = "enumeration"
        if fixed is not None and fixed != cell.text:
            repairs.append({"row": cell.row, "col": cell.col, "from": cell.text, "to": fixed, "rule": rule})
            cell.text = fixed
    return repairs
