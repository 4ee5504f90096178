"""Header flattening and row grouping: every value gets the full path of its labels.

A retrieval chunk holding `1,350` is useless unless `2024 / Revenue` and `North` travel
with it. So each column gets one label carrying its whole header path (spanning group
labels repeated into every column they cover), and each body row knows its row label and
the row-group labels above it (projected row headers, full-width section rows); cells that
span rows are repeated into every row they cover.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from worker.core.captions import plain
from worker.core.types import Cell, TableGrid

PATH_SEP = " / "

# a year, or a span of years, as a column label; a footnote mark may follow ("1995*", "1990**", "2001†")
_YEAR = re.compile(r"^(?:19|20)\d\d(?:\s*[-/–]\s*(?:\d\d|\d{4}))?(?:[a-z]|\*{1,3}|[†‡§]{1,2})?$")
_PLACEHOLDER = {"-", "–", "—", "n/a", "na", "n.a.", "..", "...", "x", "*", "nil", "none", "—/—"}
_ZERO_FOR_O = re.compile(r"^0[a-zA-Z]{4,}")  # "0ften": an O read as zero ("0kg" stays a value)
_CLASS_RANGE = re.compile(r"^\d{1,3}\s*[-–]\s*\d{1,3}$")  # an age band or a size class: "15-24"
_NUMBERISH = re.compile(r"^[\s(+\-–−<>≤≥~±£$€¥%]*\d[\d\s.,%/:()+\-–−×x*]*[a-zA-Z%‰]{0,12}\)?$")


def clean(text: str) -> str:
    """Whitespace collapsed to single spaces: labels and values are compared and joined as one line."""
    return " ".join(text.split())


# Dot leaders: a run of three or more dots (spaced or not) that leads the eye from a label to
# its values ("All ages . . . . ."). Typography, not words: labels drop it, cell text keeps it.
_LEADER = re.compile(r"(?:\s*[.·…_]){3,}\s*$")


# OCR reads a dot leader on a scan as short letter runs ("All ages ee ee ee ee)", "With a
# disability cece"): tokens of one or two letters repeated, ending the label.
_DEBRIS_TOKEN = re.compile(r"^[^\w]*([a-z]{1,2})\1*[^\w]*$", re.IGNORECASE)


def _strip_leader_debris(t: str) -> str:
    """The label without a trailing run of leader debris: at least two repeats of the same
    one- or two-letter unit (`ee ee`, `cece`, `. e e e`), never the whole label."""
    tokens = t.split()
    k = len(tokens)
    units: list[str] = []
    repeats = 0
    while k > 1:
        m = _DEBRIS_TOKEN.match(tokens[k - 1])
        if not m or len(tokens[k - 1].strip(".,:;·)(")) > 8:
            break
        unit = m.group(1).lower()
        if units and unit != units[-1]:
            break
        repeats += max(1, len(tokens[k - 1].strip(".,:;·)(")) // len(unit))
        units.append(unit)
        k -= 1
    # two debris tokens (`ee ee`), or one token repeating its unit (`cece`, four letters and more)
    single = len(units) == 1 and len(tokens[-1].strip(".,:;·)(")) >= 4
    if repeats >= 2 and (len(units) >= 2 or single):
        return " ".join(tokens[:k])
    return t


def label_text(text: str) -> str:
    """A cell's text as a label: whitespace collapsed, trailing dot leaders removed, and the
    letters OCR makes of a leader on a scan (`All ages ee ee ee`). Cell text keeps them."""
    t = clean(text)
    stripped = _strip_leader_debris(_LEADER.sub("", t).rstrip(" :"))
    stripped = _LEADER.sub("", stripped).rstrip(" :")
    return stripped or t


# A units or sub-header row under the column labels: every text a short unit, count or rate
# word ("no.", "Rate", "%", "($1,000)", "(thousands)"), never a value of the body.
_UNIT_WORDS = (
    r"no\.?|number|numbers|percent|per ?cent|pct\.?|%|rate|rates|ratio|index|amount|total|"
    r"dollars|\$|£|€|thousands?|millions?|billions?|units?|years?|months?|days?|hours?|"
    r"persons|people|households|mean|median|average|value|share|change|count|cases|"
    r"kg|g|t|km|m|l|ha|mw|kwh"
)
_UNIT_ROW = re.compile(
    r"^(?:\((?:[^()]{1,24})\)|(?:" + _UNIT_WORDS + r")(?:\s*(?:per|of|in|/)\s*[\w$£€,.]{1,12})?)$", re.IGNORECASE
)


def is_unit_like(text: str) -> bool:
    """A units or sub-header entry: a short unit/count/rate word or anything in parentheses."""
    t = clean(text)
    return bool(t) and len(t) <= 28 and bool(_UNIT_ROW.match(t))


def is_value_like(text: str) -> bool:
    """A number, amount, percentage or a placeholder dash: what body cells hold, not labels."""
    t = clean(text)
    if not t:
        return False
    if t.lower() in _PLACEHOLDER:
        return True
    return bool(_NUMBERISH.match(t)) and not _YEAR.match(t) and not _ZERO_FOR_O.match(t)


_NUMBERING = re.compile(r"^\(?(\d{1,2})\)?$")  # a column number: 1, (2), 3)


def values_in_row(texts: list[str]) -> list[bool]:
    """Which of a row's texts are values (`is_value_like`), class ranges ("15-24", "10-49": age
    bands, size classes) beside worded labels excepted: in such a row they are labels too."""
    worded = any(clean(t) and not is_value_like(t) for t in texts)
    return [is_value_like(t) and not (worded and bool(_CLASS_RANGE.match(clean(t)))) for t in texts]


def is_figure(text: str) -> bool:
    """A value with a digit in it: what ends a header. A lone dash is a value in a body cell,
    but a speck read as "-" over a photocopied table is no sign that the labels are over."""
    return is_value_like(text) and any(ch.isdigit() for ch in text)


def is_value_row(texts: list[str]) -> bool:
    """A row of figures beside its label, never a column header: every text beyond the first
    column a value (`is_value_like`: numbers, amounts, placeholder dashes; years are labels),
    and the values not a column numbering (1, 2, 3 ... or (1), (2), (3) ...)."""
    rest = [clean(t) for t in texts[1:] if clean(t)]
    if not rest or not all(is_value_like(t) for t in rest):
        return False
    numbers = [_NUMBERING.match(t) for t in rest]
    if len(rest) >= 2 and all(numbers):
        counted = [int(m.group(1)) for m in numbers if m]
        if counted == list(range(counted[0], counted[0] + len(counted))):
            return False
    return True


def value_rows_under_header(grid: TableGrid) -> int:
    """How many of the model's last header rows are rows of figures (`is_value_row`), counted
    up from the header's lower edge while no cell spans across it. A structure model sometimes
    takes the first data row into its header on a degraded page (rotated, noisy or resampled
    scans); every value below is then read under that row's figures as its column labels."""
    if grid.header_rows <= 0:
        return 0
    slots = slot_cells(grid)
    k = grid.header_rows
    while k > 0 and is_value_row([cell.text for cell in slots[k - 1]]):
        if any(cell.row < k - 1 <= cell.row + cell.rowspan - 1 for cell in grid.cells):
            break  # a header cell spanning down into the row: the header cannot end above it
        k -= 1
    return grid.header_rows - k


def slot_cells(grid: TableGrid) -> list[list[Cell]]:
    """The cell owning each (row, col) slot; a span's cell appears in every slot it covers."""
    slots: list[list[Cell | None]] = [[None] * grid.n_cols for _ in range(grid.n_rows)]
    for cell in grid.cells:
        for r, c in cell.slots():
            if 0 <= r < grid.n_rows and 0 <= c < grid.n_cols:
                slots[r][c] = cell
    # a broken partition must not crash a serialiser: a slot no cell claims gets an empty one
    return [[owner if owner is not None else Cell(r, c) for c, owner in enumerate(row)] for r, row in enumerate(slots)]


def _row_texts(slots: list[list[Cell]], r: int) -> list[str]:
    return [clean(cell.text) for cell in slots[r]]


def infer_header_rows(grid: TableGrid, max_rows: int = 4) -> int:
    """Leading rows that look like a column header, for grids whose structure marks none.

    Conservative on purpose (a data row taken for labels mislabels every value below it):
    row 0 qualifies when all its texts are labels (years count as labels), it has a label
    beyond the first column, and some column below it is mostly values. Further rows join
    while they are labels too and the row above has a label spanning columns or they leave
    the first column empty (the shape of sub-header rows), or while every text beyond the
    first column is a unit word ("no.", "Rate", "(thousands)": a units row under the labels).
    """
    if grid.n_rows < 2 or grid.n_cols < 2:
        return 0
    slots = slot_cells(grid)

    def labels_only(r: int) -> bool:
        texts = _row_texts(slots, r)
        # a dash in the stub head is a mark, not a value ("—" over a stub of years)
        stub_ok = not is_value_like(texts[0]) or texts[0].lower() in _PLACEHOLDER
        return any(texts[1:]) and stub_ok and not any(values_in_row(texts[1:]))

    def units_row(r: int) -> bool:
        texts = [t for c, t in enumerate(_row_texts(slots, r)) if c > 0 and slots[r][c].row == r]
        return any(texts) and all(is_unit_like(t) for t in texts if t)

    lead = 0  # empty rows above the labels (a rule read as a row, a speck read as "-") belong to the header
    while lead < grid.n_rows - 2 and not any(any(ch.isalnum() for ch in t) for t in _row_texts(slots, lead)):
        lead += 1
    if not labels_only(lead):
        return 0
    k = lead + 1
    while k < min(max_rows + lead, grid.n_rows - 1) and (labels_only(k) or units_row(k)):
        above_spans = any(cell.colspan > 1 and cell.row + cell.rowspan - 1 == k - 1 for cell in slots[k - 1])
        stub_empty = not clean(slots[k][0].text) or slots[k][0].row < k
        if not (above_spans or stub_empty or units_row(k)):
            break
        k += 1
    for c in range(1, grid.n_cols):
        values = [clean(slots[r][c].text) for r in range(k, grid.n_rows)]
        filled = [v for v in values if v]
        if filled and sum(is_value_like(v) for v in filled) >= 0.5 * len(filled):
            return k
    return lead + 1 if _text_table_header(slots, lead) else 0


_DIGIT = re.compile(r"\d")
TEXT_HEADER_MAX_WORDS = 5  # a column label of a table of text values is short


def _text_table_header(slots: list[list[Cell]], r: int) -> bool:
    """Row `r` heads a table of text values (no column of numbers to show where the labels
    end): every cell beyond the stub holds a short label without digits, and the body sets
    it apart, either by filling the stub head it leaves empty (`| Up-market | Medium |` over
    `Lever | Skip | Omo`) or by holding digits in most of its cells ("Total: 47%")."""
    n_rows, n_cols = len(slots), len(slots[0])
    if n_rows - r < 3:
        return False
    labels = [clean(slots[r][c].text) for c in range(1, n_cols) if slots[r][c].col == c]
    if not labels or not all(t and len(t.split()) <= TEXT_HEADER_MAX_WORDS and not _DIGIT.search(t) for t in labels):
        return False
    body = range(r + 1, n_rows)
    stubs = [clean(slots[b][0].text) for b in body if slots[b][0].row == b]
    if not clean(slots[r][0].text) and stubs and sum(bool(t) for t in stubs) >= 0.8 * len(stubs):
        return True
    cells = [clean(slots[b][c].text) for b in body for c in range(1, n_cols) if slots[b][c].row == b]
    filled = [t for t in cells if t]
    return bool(filled) and sum(bool(_DIGIT.search(t)) for t in filled) >= 0.5 * len(filled)


def header_rows_of(grid: TableGrid) -> tuple[int, str]:
    """The one header decision: how many leading rows are the column header, and where that
    comes from ('model', 'inferred' or 'none').

    The HTML (`<thead>`), the serialisations, the typed columns and the chunks all take it
    from here, so they never disagree. The model's header wins; without one the rows are
    inferred, lowered until no cell spans across the header's lower edge (a `<thead>` cannot
    hold half a cell).
    """
    if grid.header_rows > 0:
        return grid.header_rows, "model"
    inferred = _whole_rows(grid, infer_header_rows(grid))
    return (inferred, "inferred") if inferred else (0, "none")


def _whole_rows(grid: TableGrid, rows: int) -> int:
    """`rows` lowered until no cell spans across their lower edge."""
    while rows and any(c.row < rows < c.row + c.rowspan for c in grid.cells):
        rows -= 1
    return rows


def sub_header_rows(grid: TableGrid) -> int:
    """How many rows the model's header (`grid.header_rows`, more than none) lengthens to: the
    sub-header rows under it that the inference takes (a row of years, its stub empty, under
    "number of franchisors" spanning two of them: skew-1 eu-004 p9, where the model closed its
    header over the years and no value kept its year). Never shorter than the model's; asked
    of the model's grid only, so a reviewer's header stays as set."""
    if grid.header_rows <= 0:
        return grid.header_rows
    return max(grid.header_rows, _whole_rows(grid, infer_header_rows(grid)))


def stub_columns(grid: TableGrid, header_rows: int) -> int:
    """Leading columns holding the row labels (the stub): the first column, unless it holds
    mostly values, and next ones that hold no values while a column to their right does
    (`Region | State | 2024`). 0 for a one-column table or a first column of numbers."""
    if grid.n_cols < 2 or grid.n_rows <= header_rows:
        return 0
    slots = slot_cells(grid)

    def value_share(c: int) -> float:
        texts = [clean(slots[r][c].text) for r in range(header_rows, grid.n_rows) if slots[r][c].col == c]
        filled = [t for t in texts if t]
        return sum(is_value_like(t) for t in filled) / len(filled) if filled else 0.0

    shares = [value_share(c) for c in range(grid.n_cols)]
    if shares[0] >= 0.5:
        return 0
    k = 1
    while k < grid.n_cols - 1 and shares[k] == 0.0 and max(shares[k + 1 :]) >= 0.5:
        k += 1
    return k


_CAPTION_START = re.compile(r"^(?:table|tab\.|figure|fig\.|exhibit|chart|source|sources|note|notes)\b", re.IGNORECASE)


def is_caption_text(text: str) -> bool:
    """Text that reads as a caption or a note, not a column label: `Table 3: ...`, a sentence
    (five words or more ending in a full stop), or a dozen words and more."""
    t = clean(text)
    words = t.split()
    started = bool(_CAPTION_START.match(plain(t)))
    return bool(t) and (started and len(words) >= 2 or (len(words) >= 5 and t.endswith(".")) or len(words) >= 12)


def title_rows(grid: TableGrid, header_rows: int) -> int:
    """Leading header rows that are one cell over every column reading as a caption: the
    table's title caught inside its box. They are no column label: the HTML writes them as
    `<caption>`, and no column path holds them."""
    if grid.n_cols < 2:
        return 0
    slots = slot_cells(grid)
    k = 0
    while k < header_rows and k < grid.n_rows - 1:
        cell = slots[k][0]
        if cell.row != k or cell.rowspan != 1 or cell.colspan != grid.n_cols or not is_caption_text(cell.text):
            break
        k += 1
    return k


def column_paths(grid: TableGrid, header_rows: int) -> list[list[str]]:
    """Per column, the distinct header texts above it, top to bottom.

    A spanning header cell appears in the path of every column it covers; a cell spanning
    several header rows appears once; an empty corner gives an empty path; a title row
    (`title_rows`) is no part of any path.
    """
    slots = slot_cells(grid)
    titles = title_rows(grid, header_rows)
    paths = []
    for c in range(grid.n_cols):
        parts: list[str] = []
        seen: set[int] = set()
        for r in range(titles, min(header_rows, grid.n_rows)):
            cell = slots[r][c]
            text = label_text(cell.text)
            if id(cell) in seen or not text:
                continue
            seen.add(id(cell))
            if not parts or parts[-1] != text:
                parts.append(text)
        paths.append(parts)
    return paths


def label_paths(grid: TableGrid, header_rows: int) -> list[list[str]]:
    """Per column, its header path as a reader says it: `column_paths`, with a cell stacked
    on another cell of the same columns read as one label with it (`Our estimates` over
    `1996`, `to air` over `kg/year`).

    A path level says "these columns belong together" only when its cell covers more columns
    than the cell under it; two stacked cells over exactly the same columns are the lines of
    one label (a header cell written on two lines and read as two rows), so they are joined
    with a space, and only a spanning group is set off with `PATH_SEP`.
    """
    slots = slot_cells(grid)
    titles = title_rows(grid, header_rows)
    paths = []
    for c in range(grid.n_cols):
        parts: list[str] = []
        last: Cell | None = None
        for r in range(titles, min(header_rows, grid.n_rows)):
            cell = slots[r][c]
            text = label_text(cell.text)
            if cell is last or not text or (parts and (parts[-1] == text or parts[-1].endswith(" " + text))):
                continue
            if last is not None and (last.col, last.colspan) == (cell.col, cell.colspan):
                parts[-1] = f"{parts[-1]} {text}"
            else:
                parts.append(text)
            last = cell
        paths.append(parts)
    return paths


def column_labels(grid: TableGrid, header_rows: int | None = None) -> list[str]:
    """One label per column: its header path joined with ' / ' (e.g. `2024 / Revenue (£m)`)."""
    if header_rows is None:
        header_rows = header_rows_of(grid)[0]
    return [PATH_SEP.join(p) for p in column_paths(grid, header_rows)]


@dataclass(slots=True)
class BodyRow:
    """One grid row below the header, as retrieval sees it.

    kind: 'data', 'group' (a section label row), 'header' (a header repeated in the body)
    or 'empty'. `group` is the path of section labels in force; `block` numbers runs of rows
    tied together by cells spanning rows; `section` numbers the runs under one group path.
    `cells` holds each slot's text (spans repeated); `starts` whether the slot's cell starts
    in this column (a colspan is repeated but known as one cell).
    """

    row: int
    kind: str
    cells: list[str]
    starts: list[bool]
    group: list[str] = field(default_factory=list)
    block: int = 0
    section: int = 0

    @property
    def label(self) -> str:
        """The row label: section path and first-column text (dot leaders dropped), joined as a path."""
        head = label_text(self.cells[0]) if self.cells else ""
        return PATH_SEP.join([*self.group, head] if head else self.group)


def _is_group_row(row: list[Cell], n_cols: int) -> bool:
    first = row[0]
    if first.is_projected_row_header and all(cell is first for cell in row):
        return True
    return n_cols > 1 and all(cell is first for cell in row) and bool(clean(first.text))


def _label_only_group_rows(slots: list[list[Cell]], header_rows: int, n_rows: int, n_cols: int) -> set[int]:
    """Rows that hold a label in the first column and nothing else, directly above a row with
    values whose own label does not go on in lower case (that would be a wrapped label, not a
    section): the section rows of statistical tables drawn without a spanning cell."""
    out: set[int] = set()
    if n_cols < 3:
        return out
    for r in range(header_rows, n_rows - 1):
        row = slots[r]
        first = clean(row[0].text)
        if not first or row[0].row != r or row[0].rowspan > 1 or is_value_like(first):
            continue
        if any(clean(cell.text) for cell in row[1:] if cell is not row[0]):
            continue
        below = slots[r + 1]
        label = clean(below[0].text)
        if label[:1].islower() or below[0] is row[0]:
            continue
        if any(is_value_like(clean(cell.text)) for cell in below[1:] if cell is not below[0]) or not label:
            out.add(r)
    return out


def body_rows(grid: TableGrid, header_rows: int) -> list[BodyRow]:
    """Every row below the header, classified, with group paths and blocks filled in.

    Consecutive group rows nest (`Assets / Current assets`); a group row after data rows
    starts a new path. Structural groups count (projected row headers and rows that are one
    full-width cell), and rows with a label alone directly above a row of values, unless the
    next label goes on in lower case (a wrapped label, which must not mislabel what follows).
    """
    slots = slot_cells(grid)
    header_texts = [_row_texts(slots, r) for r in range(header_rows)]
    label_groups = _label_only_group_rows(slots, header_rows, grid.n_rows, grid.n_cols)
    out: list[BodyRow] = []
    path: list[str] = []
    last_kind = "data"
    section = 0
    block = -1
    block_end = -1
    for r in range(header_rows, grid.n_rows):
        row = slots[r]
        texts = _row_texts(slots, r)
        starts = [cell.col == c for c, cell in enumerate(row)]
        if _is_group_row(row, grid.n_cols) or r in label_groups:
            text = label_text(texts[0])
            if text and row[0].row == r:  # a group cell spanning rows counts once
                path = [*path, text] if last_kind == "group" else [text]
                if last_kind != "group":
                    section += 1
            kind = "group"
        elif all(cell.is_header for cell in row) or (texts in header_texts and any(texts)):
            kind = "header"
        elif not any(texts):
            kind = "empty"
        else:
            kind = "data"
        if r > block_end:
            block += 1
        block_end = max(
            [block_end]
            + [cell.row + cell.rowspan - 1 for cell in row if cell.rowspan > 1 and not _is_group_row(row, grid.n_cols)]
        )
        out.append(BodyRow(r, kind, texts, starts, list(path), block, section))
        if kind in ("group", "data"):
            last_kind = kind
    return out
