"""Values the extraction is unsure of, marked where retrieval states them.

A chunk is read by a model that cannot look at the page. A value stated plainly under its
labels is taken as certain, so a value the pipeline doubts must say so in the text, not be
hidden (hiding it would lose a value that is often right). Five signals, all general:

- the cell's own confidence is below `UNSURE_CONFIDENCE` (the structure and text stages
  give low confidence to cells whose words they could not place cleanly, such as a note
  line read into the last row). A number's OCR confidence is that of its least sure digit
  (PP-OCR: `models.ppocr.words.number_confidence`): one wrong digit makes the value wrong.
  A higher threshold for numbers (0.6 to 0.8) was measured and marked two to eight right values
  for each wrong one (docs/scans.md, Round 29);
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
  `85`, eu-003 p1): the value is then wrong by the sign's reading, and nothing else shows it;
- a number out of step with its column (`odd_numbers`). A printed column keeps one style; OCR
  noise does not. A number with a mark of its own that most of its column's other numbers lack
  (`_MARKS`: a lone point before the digits, `.54`, `+.11`; a point, dash or colon after them, `154.`,
  `16100-`, `19.4%.`; a colon or `=` among them, `111:8`; a letter touching a digit, `J1`, `3Q`;
  a mark standing alone, `53.6 .`, `3,973 =`; a quote, `"+10`) is
  marked: a speck read as a point makes `54` a hundred times smaller. Where the marks are the
  column's style (`.82`, `.45` in a table of correlations; `1a`, `3b` as item codes) nothing is.
  A column of fewer than four numbers shows no style of its own, so its numbers are judged
  against all the table's numbers (`.682` under `1261` and `1350`; `53.6 .` beside `56.3`);
  And a whole number of two digits or more, five times the column's median or more, in a
  column whose numbers mostly print the same decimals (`810` among `81.0`-style figures; a
  lone digit, `0`, is often printed bare and does not count) lost its point: a photocopy
  erases it. A whole number of the column's size (`48` among `67.9`) is printed so;

The marked text is the value followed by `UNSURE_MARK`; the grid, the HTML and the SQL
store keep the text as read.
"""

from __future__ import annotations

import re

from worker.core.headers import clean, is_value_like, label_text, slot_cells
from worker.core.numbers import parse_number
from worker.core.types import Cell, TableGrid

UNSURE_CONFIDENCE = 0.5
COLUMN_MIN = 4  # odd_numbers: a column's style is judged over this many numbers at least ...
STYLE_SHARE = 0.5  # ... a mark more of the others share than this is the column's style
DECIMALS_SHARE = 0.75  # ... and a column prints its decimals when this share of its numbers do
LOST_POINT = 5  # ... where a whole number this many times the column's median lost its point
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
    odd = odd_numbers(grid, header_rows)
    for cell in grid.cells:
        if cell.row < header_rows or not clean(cell.text):
            continue
        if (
            cell.confidence < UNSURE_CONFIDENCE
            or several_numbers(cell.text)
            or (cell.col > 0 and cell.row in late)
            or (cell.row, cell.col) in unsigned
            or (cell.row, cell.col) in odd
        ):
            out.update(cell.slots())
    return out


# marks a number may carry that OCR noise also makes (see the module docstring)
_MARKS = {
    "point_before": re.compile(r"(?:^|[\s+\-−(])[.·,]\d"),
    "mark_after": re.compile(r"[\d%)][.·:\-=,]$"),
    "colon_inside": re.compile(r"\d\s?[:=]\s?\d"),
    "letter_touch": re.compile(r"\d[A-Za-z]|[A-Za-z]\d"),
    "lone_mark": re.compile(r"(?:^|\s)[.·:=,'\"“”‘’]+(?:\s|$)"),
    "quote": re.compile(r"[\"“”‘’']"),
}
_DECIMALS = re.compile(r"\d[.,](\d{1,2})%?$")  # one or two digits after the point (three: thousands)
_WHOLE = re.compile(r"^\d{2,}%?$")
_ONE_DIGIT = re.compile(r"^\d%?$")


def odd_numbers(grid: TableGrid, header_rows: int) -> set[tuple[int, int]]:
    """(row, col) of body cells whose number is out of step with its column (see the module
    docstring): a noise mark most of the column lacks, or a point lost where the column prints
    its decimals. A column of fewer than `COLUMN_MIN` numbers has no style of its own to show:
    its numbers' marks are judged against the table's numbers instead (`.682` under `1261` and
    `1350`, `53.6 .` beside `56.3`)."""
    out: set[tuple[int, int]] = set()
    body = [
        x for x in grid.cells if x.col > 0 and x.colspan == 1 and x.row >= header_rows and _number_like(clean(x.text))
    ]
    table_marks = {id(x): _marks_of(clean(x.text)) for x in body}
    for c in range(1, grid.n_cols):
        cells = [x for x in body if x.col == c]
        if not cells:
            continue
        judges = cells if len(cells) >= COLUMN_MIN else body
        if len(judges) < COLUMN_MIN:
            continue
        for cell in cells:
            for name in table_marks[id(cell)]:
                others = sum(1 for x in judges if x is not cell and name in table_marks[id(x)])
                if others <= STYLE_SHARE * (len(judges) - 1):
                    out.add((cell.row, cell.col))
        if len(cells) >= COLUMN_MIN:
            out.update((x.row, x.col) for x in _lost_points(cells, [clean(x.text) for x in cells]))
    return out


def _marks_of(text: str) -> set[str]:
    return {name for name, rx in _MARKS.items() if rx.search(text)}


def _number_like(text: str) -> bool:
    """A number as OCR may have garbled it: up to three tokens, at least half of it digits
    (`.54`, `J1`, `111:8`, `= . 94.2`; not `Asda 32.`)."""
    chars = text.replace(" ", "")
    return 0 < len(text.split(" ")) <= 3 and sum(ch.isdigit() for ch in chars) * 2 >= len(chars) > 0


def _lost_points(cells: list[Cell], texts: list[str]) -> list[Cell]:
    """Whole numbers of two digits or more in a column whose numbers mostly print the same
    decimals, read LOST_POINT times the column's median or more: `810` among `81.0`-style
    figures. A whole number of the column's size (`48` among `67.9`, `110` among `130.4`)
    is printed so, and a lone digit (`0`) often is."""
    places = [m.group(1) for t in texts if (m := _DECIMALS.search(t))]
    if not places:
        return []
    common = max(set(map(len, places)), key=[len(p) for p in places].count)
    judged = [t for t in texts if not _ONE_DIGIT.match(t)]
    if sum(len(p) == common for p in places) < DECIMALS_SHARE * len(judged):
        return []
    values = [abs(v.value) if v.kind == "number" and v.value is not None else None for v in map(parse_number, texts)]
    sizes = sorted(v for v in values if v is not None)
    middle = sizes[len(sizes) // 2] if sizes else 0.0
    return [
        x
        for x, t, v in zip(cells, texts, values)
        if _WHOLE.match(t) and v is not None and middle > 0 and v >= LOST_POINT * middle
    ]


def mark(text: str) -> str:
    return text + UNSURE_MARK if text else text
