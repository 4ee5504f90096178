"""OCR glyph confusions repaired where the context leaves no doubt: `l,200` in a column of
numbers is `1,200`; `Ql` beside `Q2`, `Q3`, `Q4` is `Q1`; `69.` and `"14.8` are `69` and `14.8`.

OCR engines confuse a few glyph pairs that look alike in most fonts: the digit one with the
letters l and I (and a bar), zero with the letter O. Elsewhere either reading is possible,
so nothing is changed; a repair is made only where the context says a digit is meant:
- a cell of a numeric column (most of its cells parse as numbers) whose text does not parse,
  has at least one real digit, and parses once the look-alikes are read as digits;
- an enumerated label ("Q1", "H2", "Wave 3") whose siblings in the same row or column share
  its prefix followed by digits, when the repaired label is not already among them;
- stray marks (`stray_marks`): a speck or a fleck of toner beside a figure is read as a point,
  a comma, a quote or a colon (`69.`, `.49.7`, `"22 083`, `0.38 :`: on a photocopy of the dev
  pages one value in sixteen). A cell of a numeric column that does not parse, and parses once
  such marks at its ends are dropped, keeps its digits and loses the marks. A colon between
  digits is a decimal point only where two or more of the column's numbers have that many
  decimals after a point, and fewer hold a colon (`38:2` among `12.7`, `7.3`; never `10:30`
  among times). A point before a whole number (`.99`) is a speck where three or more of the
  column's other numbers are whole and none has decimals.
- a comma read as a point (`grouping_point`): `3.058` in a column whose numbers group their
  thousands with commas (`5,821`, `24,137`: two or more) and print no decimals after a point
  is `3,058`; a thousand times too small otherwise (on a photocopy of the dev pages 22 cells).
  Where the column holds as many points so placed, it is repaired only when the table prints
  its decimals after a point (`86.2`, `13.8`, no `86,2`); a table that prints them after a
  comma (a European one, grouping with points) is never touched.
- a decimal point a photocopy erased (`lost_point`): `100 0` and `13 8` (the OCR reads a space
  where the dot was) in a column whose numbers print one decimal after a point (two or more)
  are `100.0` and `13.8`. Such a text parses as no number (`3 375` does: a thousands group has
  three digits, and a column of three decimals is never touched).
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
# Marks a speck is read as at a figure's ends (never a sign, a bracket, a percent or a footnote star).
_STRAY_END = re.compile(r"[\s.,:;'\"`´‘’“”·•_]+$")
_STRAY_START = re.compile(r"^[\s.,:;'\"`´‘’“”·•_]+(?=\d)")
_COLON_DECIMAL = re.compile(r"^(\d+):(\d+)(%?)$")
_DECIMALS = re.compile(r"^[-+−]?[\d ,]*\.(\d+)%?$")
_LEAD_POINT = re.compile(r"^[.,·]\s?(\d+)$")  # ".99": a speck before a whole number ...
_FRACTION = re.compile(r"[.,]\d{1,2}%?$")  # ... in a column where no other number has decimals
MIN_WHOLE = 3
_COMMA_GROUPED = re.compile(r"^[-+−]?[1-9]\d{0,2}(,\d{3})+%?$")  # thousands never lead with a zero
_POINT_GROUPED = re.compile(r"^([-+−]?[1-9]\d{0,2})((\.\d{3})+)(%?)$")
_DASHED = re.compile(r"^[-–—]\s+")
_POINT_DECIMAL = re.compile(r"^[-+−]?\d+\.\d{1,2}%?$")
_COMMA_DECIMAL = re.compile(r"^[-+−]?\d+,\d{1,2}%?$")
_SPACED_DECIMAL = re.compile(r"^([-+−]?\d+) (\d{1,2})(%?)$")


def _as_digits(text: str) -> str:
    return "".join(DIGIT_LOOKALIKES.get(ch, ch) for ch in text)


def _column_texts(grid: TableGrid, slots: list[list[Cell]], c: int) -> list[str]:
    """The body texts of column `c`, each cell once (spanning cells belong to their first column)."""
    return [
        slots[r][c].text
        for r in range(grid.header_rows, grid.n_rows)
        if slots[r][c].col == c and slots[r][c].row == r and slots[r][c].text.strip()
    ]


def _numeric_columns(grid: TableGrid, slots: list[list[Cell]]) -> list[bool]:
    out = []
    for c in range(grid.n_cols):
        # a figure with a stray mark still counts: specks must not hide the column's kind
        parsed = [parse_number(_without_marks(t) or t) for t in _column_texts(grid, slots, c)]
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


def _without_marks(text: str) -> str | None:
    """`text` with stray marks at its ends dropped, when that (and only that) makes it a number."""
    t = text.strip()
    if not any(ch.isdigit() for ch in t) or parse_number(t).kind != "text":
        return None
    end = _STRAY_END.sub("", t)
    for fixed in (end, _STRAY_START.sub("", end)):
        if fixed != t and parse_number(fixed).kind == "number":
            return fixed
    return None


def _column_decimals(texts: list[str]) -> set[int]:
    """How many decimals the column's numbers print after a point: none where fewer than two
    print one, or where as many texts hold a colon (a column of times)."""
    points = [len(m.group(1)) for t in texts if (m := _DECIMALS.match(t.strip())) and parse_number(t).kind == "number"]
    if len(points) < 2 or sum(":" in t for t in texts) >= len(points):
        return set()
    return set(points)


def _stray_mark_repair(text: str, decimals: set[int], others: list[str]) -> str | None:
    """`text` without its stray marks (module docstring), given the decimals its column prints
    after a point and the column's other texts; None when it needs no repair or has none."""
    lead = _LEAD_POINT.match(text.strip())
    if lead:
        whole = [t for t in others if parse_number(t).kind == "number"]
        if len(whole) >= MIN_WHOLE and not any(_FRACTION.search(t.strip()) for t in whole):
            return lead.group(1)
    fixed = _without_marks(text) or text.strip()
    m = _COLON_DECIMAL.match(fixed)
    if m and len(m.group(2)) in decimals:
        fixed = f"{m.group(1)}.{m.group(2)}{m.group(3)}"
    return fixed if fixed != text.strip() and parse_number(fixed).kind == "number" else None


def _lost_point_repair(text: str, decimals: set[int]) -> str | None:
    """`text` with the decimal point a photocopy erased put back (module docstring), given the
    decimals its column prints after a point; None where it is no such figure."""
    m = _SPACED_DECIMAL.match(text.strip())
    if not m or len(m.group(2)) not in decimals:
        return None
    return f"{m.group(1)}.{m.group(2)}{m.group(3)}"


def _decimal_mark(texts: list[str]) -> str | None:
    """The mark the table prints its decimals after: "." where two of its numbers or more have
    one or two digits after a point and none after a comma, "," the other way round, else None."""
    points = sum(1 for t in texts if _POINT_DECIMAL.search(t.strip()))
    commas = sum(1 for t in texts if _COMMA_DECIMAL.search(t.strip()))
    if points >= MIN_SIBLINGS and not commas:
        return "."
    if commas >= MIN_SIBLINGS and not points:
        return ","
    return None


def _grouping_point_repair(text: str, others: list[str], mark: str | None) -> str | None:
    """`text` with the points that group its thousands read back as commas (module docstring),
    given its column's other texts and the table's decimal mark; None where the column says
    nothing of the kind."""
    m = _POINT_GROUPED.match(text.strip())
    if not m or mark == ",":
        return None
    others = [t.strip() for t in others]
    commas = sum(1 for t in others if _COMMA_GROUPED.match(t))
    if commas < MIN_SIBLINGS:
        return None
    if mark is None and commas <= 1 + sum(1 for t in others if _POINT_GROUPED.match(t)):
        return None  # as many points (this one too), and nothing says they group no thousands
    bare = [_DASHED.sub("", t) for t in others]  # "- 3.375": a dash beside a figure is no decimal
    if any(_DECIMALS.match(t) and not _POINT_GROUPED.match(t) for t in bare):
        return None  # the column prints decimals after a point: the point may be one
    return m.group(1) + m.group(2).replace(".", ",") + m.group(4)


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
    decimals = [_column_decimals(_column_texts(grid, slots, c)) if numeric[c] else set() for c in range(grid.n_cols)]
    mark = _decimal_mark([cell.text for cell in grid.cells if cell.row >= grid.header_rows])
    repairs: list[dict[str, Any]] = []
    owned = [cell for cell in grid.sorted_cells() if cell.text.strip()]
    texts = {id(cell): cell.text for cell in owned}  # siblings as read, before any repair
    for cell in owned:
        fixed, rule = None, ""
        if cell.colspan == 1 and numeric[cell.col] and cell.row >= grid.header_rows:
            fixed, rule = _numeric_repair(cell.text), "numeric_column"
            if fixed is None:
                others = [texts[id(o)] for o in owned if o.col == cell.col and o.colspan == 1 and o is not cell]
                fixed, rule = _stray_mark_repair(cell.text, decimals[cell.col], others), "stray_marks"
                if fixed is None and mark != ",":
                    fixed, rule = _lost_point_repair(cell.text, decimals[cell.col]), "lost_point"
                if fixed is None:
                    fixed, rule = _grouping_point_repair(cell.text, others, mark), "grouping_point"
        if fixed is None:
            row_sibs = [texts[id(o)] for o in owned if o.row == cell.row and o is not cell]
            col_sibs = [texts[id(o)] for o in owned if o.col == cell.col and o is not cell]
            fixed = _enumeration_repair(cell.text, row_sibs) or _enumeration_repair(cell.text, col_sibs)
            rule = "enumeration"
        if fixed is not None and fixed != cell.text:
            repairs.append({"row": cell.row, "col": cell.col, "from": cell.text, "to": fixed, "rule": rule})
            cell.text = fixed
    return repairs
