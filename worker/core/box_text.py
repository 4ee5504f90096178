"""Captions and notes read into the table's grid, moved back out; OCR debris on ruling lines trimmed.

A detected table box often holds its caption above the header or a note under the last row.
The structure model then makes a row of it, or merges it into the header or the last body row,
and the words bind to the wrong labels. The rule is geometric first: a text line at the top
or bottom edge of the grid that is one run of words (no column gap inside it) and crosses a
column gutter that the body rows keep is not a table row. It moves to the caption (top) or the
notes (bottom) only when it is also shaped like one ("Table 3", "Source:", "*", "(1)", a long
sentence), so a short spanning header ("Revenue by region") or a section label stays.

On scans, OCR reads a ruling line beside a value as `|`, `l`, `I`, `[` or `]`. Such a glyph at the
start or end of a cell is trimmed only when a vertical ruling line runs through it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from worker.core.captions import Context, starts_caption, starts_note
from worker.core.text_lines import TextLine, text_lines
from worker.core.types import Cell, RulingLines, TableGrid, Word

LONG_SENTENCE_WORDS = 8  # a run this long crossing gutters is prose, not a label
LONG_TITLE_WORDS = 10  # above the header, spanning labels and questions run to about eight words
SAME_RUN_GAP = 1.5  # word heights: a wider gap inside a line separates columns, not words
MAX_EDGE_LINES = 4  # at most this many lines are lifted from one edge
DEBRIS_GLYPHS = frozenset("|lI[]")
RULE_TOLERANCE = 2.0  # pixels either side of a glyph that a rule may lie
MARK_CHARS = 2  # a line this short over a note's first line is its footnote mark, or a speck
EDGE_PX = 1.0  # a word starting this close to the crop's top edge was cut by it
_NUMBER = re.compile(r"^[\s\d.,%()+\-–—*]+$")


@dataclass(slots=True)
class BoxText:
    """What `lift_box_text` did: the caption and notes it took out of the grid, the glyphs it
    trimmed, one line per change for the table's repairs."""

    caption: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    trimmed: list[dict[str, object]] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)


def _centre(w: Word) -> tuple[float, float]:
    return (w.bbox[0] + w.bbox[2]) / 2, (w.bbox[1] + w.bbox[3]) / 2


def _cell_of_word(grid: TableGrid, w: Word) -> Cell | None:
    """The cell whose box holds the word's centre, else the nearest cell in the column under it."""
    cx, cy = _centre(w)
    best: tuple[float, Cell] | None = None
    for cell in grid.cells:
        if cell.bbox is None:
            continue
        x0, y0, x1, y1 = cell.bbox
        if x0 <= cx <= x1 and y0 <= cy <= y1:
            return cell
        if x0 <= cx <= x1:
            d = min(abs(cy - y0), abs(cy - y1))
            if best is None or d < best[0]:
                best = (d, cell)
    return best[1] if best else None


def _one_run(line: TextLine) -> bool:
    """No gap inside the line wider than a column gap: one sentence, not values in columns."""
    height = max(1.0, min(w.bbox[3] - w.bbox[1] for w in line.words))
    ws = line.words
    return all(b.bbox[0] - a.bbox[2] <= SAME_RUN_GAP * height for a, b in zip(ws, ws[1:], strict=False))


def _kept_gutters(grid: TableGrid, body: list[Word]) -> list[float]:
    """Column boundaries (x) that no word of the body rows crosses."""
    edges = sorted({c.bbox[2] for c in grid.cells if c.bbox is not None and c.colspan == 1 and c.col < grid.n_cols - 1})
    return [x for x in edges if not any(w.bbox[0] < x < w.bbox[2] for w in body)]


def _crosses(line: TextLine, gutters: list[float]) -> bool:
    x0, x1 = line.words[0].bbox[0], line.words[-1].bbox[2]
    return any(x0 < g < x1 for g in gutters)


def _is_caption(text: str, own_row: bool) -> bool:
    """A numbered caption, or a title sentence longer than a header label, in a row of its own."""
    return starts_caption(text) or (own_row and _long_sentence(text, LONG_TITLE_WORDS))


def _is_note(text: str, own_row: bool) -> bool:
    """A note by its start, or a long sentence in a row of its own (not spread over cells)."""
    return starts_note(text) or (own_row and _long_sentence(text))


def _justified_note(line: TextLine) -> bool:
    """A note's line whose spaces justification stretched past a column gap (eu-011 p3's "Source:
    Bloomberg ... quarters;   the series are integrated"): it starts as a note and runs on as a
    sentence before its first wide space. A row labelled "Notes" or "Sources of income" has its
    gap right after the label ("Notes | Headcount at the end of each quarter" stays a row)."""
    ws = line.words
    height = max(1.0, min(w.bbox[3] - w.bbox[1] for w in ws))
    gap = next((i for i in range(1, len(ws)) if ws[i].bbox[0] - ws[i - 1].bbox[2] > SAME_RUN_GAP * height), len(ws))
    return starts_note(line.text) and _long_sentence(" ".join(w.text for w in ws[:gap]))


def _labelled_note(line: TextLine, spanning: set[int]) -> bool:
    """A note set after its label and a tab ("Source:   Finnish National Board of Education,
    2006.", eu-013 p8 on a photocopy) that the model read as one cell across the columns: the
    label ends in a colon, as a note's does and a row's label ("Notes | Headcount ...") does not."""
    ws = line.words
    return ws[0].text.endswith(":") and starts_note(line.text) and all(id(w) in spanning for w in ws)


def _long_sentence(text: str, n: int = LONG_SENTENCE_WORDS) -> bool:
    words = [t for t in text.split() if not _NUMBER.match(t)]
    return len(words) >= n


def _edge_block(
    lines: list[TextLine],
    gutters: list[float],
    spanning: set[int],
    owners: dict[int, int],
    top: bool,
    outside: bool = False,
) -> list[TextLine]:
    """The lines at one edge that are single runs across a kept gutter (or inside a cell that
    spans columns), shaped as a caption (top) or a note (bottom); `outside`: the first line is
    known to lie outside the table (`_cut_above_rule`), whatever its shape."""

    def wide(line: TextLine) -> bool:
        return _crosses(line, gutters) or all(id(w) in spanning for w in line.words)

    order = lines if top else list(reversed(lines))
    block: list[TextLine] = []
    for line in order[:MAX_EDGE_LINES]:
        if not (_one_run(line) or (not top and (_justified_note(line) or _labelled_note(line, spanning)))):
            break
        block.append(line)
    if not top:
        block.reverse()
    while block and not wide(block[-1 if top else 0]):
        block = block[:-1] if top else block[1:]  # a narrow line next to the grid is a label
    if not block:
        return []
    if not any(_crosses(line, gutters) for line in block):
        # Nothing crosses a gutter: only a whole row shaped by its start ("Table 2", "Source:").
        if len(block) != len(lines) or not (starts_caption if top else starts_note)(block[0].text):
            return []
    first = block[0].text
    if len(block) > 1 and len(first) <= MARK_CHARS:  # a footnote mark (or a speck) over its note
        first = f"{first} {block[1].text}"
    own_row = len(block) == len(lines) and len({owners[id(w)] for line in block for w in line.words}) == 1
    # a title sentence the model dealt out over several cells of the top row spans no columns as
    # a label would (a long question over its answers is one spanning cell): a caption's line
    dealt = top and len({owners[id(w)] for w in block[0].words}) > 1
    if not (outside or (_is_caption(first, own_row or dealt) if top else _is_note(first, own_row))):
        return []
    return block


def _cut_above_rule(line: TextLine, below: list[Word], rules: Sequence[float], stub_end: float) -> bool:
    """A line the crop's top edge cuts through (words of it start at the edge), starting over the
    stub column, with a ruling line between it and the text under it: the end of a caption the
    detector's box reached into (photocopy: "le 3 - European ABCP issuance" read as a title row
    over the table). A group label over the value columns, ruled off from its sub-labels, never
    reaches over the stub ("THRESHOLD FOR RELEASES", cut by a noisy crop's edge, stays)."""
    if not below or not any(w.bbox[1] <= EDGE_PX for w in line.words) or line.words[0].bbox[0] >= stub_end:
        return False
    centre = sum((w.bbox[1] + w.bbox[3]) / 2 for w in line.words) / len(line.words)
    later = [w.bbox[1] for w in below if (w.bbox[1] + w.bbox[3]) / 2 > line.bottom]
    return bool(later) and any(centre < y < min(later) for y in rules)


def _drop_row(grid: TableGrid, r: int) -> None:
    """Remove grid row `r`: its own cells go, cells spanning it shrink, cells below move up."""
    kept: list[Cell] = []
    for cell in grid.cells:
        if cell.row <= r < cell.row + cell.rowspan:
            if cell.rowspan == 1:
                continue
            cell.rowspan -= 1
        elif cell.row > r:
            cell.row -= 1
        kept.append(cell)
    grid.cells = kept
    grid.n_rows -= 1
    if r < grid.header_rows:
        grid.header_rows -= 1
    if len(grid.row_bboxes) > r:
        del grid.row_bboxes[r]


def _cut_words(cell: Cell, words: list[Word], cut: set[int]) -> None:
    """Take the `cut` words (by id) out of the cell's text; the rest stay as read."""
    gone = [w.text.strip() for w in sorted(words, key=lambda w: (_centre(w)[1], w.bbox[0])) if id(w) in cut]
    tail = " ".join(t for t in gone if t)
    text = cell.text.strip()
    if tail and text.endswith(tail):
        cell.text = text[: -len(tail)].rstrip()
    elif tail and text.startswith(tail):
        cell.text = text[len(tail) :].lstrip()
    else:  # line by line: on a skewed crop a line's words differ in height by more than a pixel
        kept = [w for w in words if id(w) not in cut and w.text.strip()]
        cell.text = " ".join(line.text for line in text_lines(kept)) if kept else ""


def _row_words(grid: TableGrid, owner: dict[int, list[Word]], r: int) -> list[Word]:
    return [w for c in grid.cells if c.row == r and c.rowspan == 1 for w in owner.get(id(c), [])]


def _lift_edge(grid: TableGrid, words: list[Word], top: bool, out: BoxText, rules: Sequence[float] = ()) -> set[int]:
    """Lift one caption/note block at one edge; the ids of the words it took (empty: none)."""
    if grid.n_rows < 2:
        return set()
    owner: dict[int, list[Word]] = {}
    for w in words:
        cell = _cell_of_word(grid, w)
        if cell is not None:
            owner.setdefault(id(cell), []).append(w)
    r = 0 if top else grid.n_rows - 1
    edge = _row_words(grid, owner, r)
    if not edge:
        return set()
    edge_ids = {id(w) for w in edge}
    body = [w for w in words if id(w) not in edge_ids]
    gutters = _kept_gutters(grid, body)
    if not gutters:
        return set()
    spanning = {id(w) for c in grid.cells if c.row == r and c.colspan > 1 for w in owner.get(id(c), [])}
    lines = text_lines(edge)
    owners = {id(w): id(c) for c in grid.cells if c.row == r for w in owner.get(id(c), [])}
    stub_end = max((c.bbox[2] for c in grid.cells if c.col == 0 and c.colspan == 1 and c.bbox is not None), default=0.0)
    first = {id(w) for w in lines[0].words} if lines else set()
    below = [w for w in words if id(w) not in first]
    outside = top and bool(lines) and _cut_above_rule(lines[0], below, rules, stub_end)
    block = _edge_block(lines, gutters, spanning, owners, top, outside)
    if not block:
        return set()
    text = " ".join(line.text for line in block)
    (out.caption if top else out.notes).append(text)
    where = "caption" if top else "notes"
    cut = {id(w) for line in block for w in line.words}
    if len(block) == len(lines):
        _drop_row(grid, r)
        out.repairs.append(f"box_text: {'first' if top else 'last'} row moved to the {where}: {text!r}")
        return cut
    for cell in grid.cells:
        mine = owner.get(id(cell), [])
        if cell.row == r and any(id(w) in cut for w in mine):
            _cut_words(cell, mine, cut)
    out.repairs.append(f"box_text: {where} words cut out of {'first' if top else 'last'} row: {text!r}")
    return cut


def _trim_debris(grid: TableGrid, words: list[Word], lines: RulingLines, out: BoxText) -> None:
    """Trim a `|`-like glyph at a cell's start or end where a vertical rule runs through it."""
    if not lines.v:
        return
    owner: dict[int, list[Word]] = {}
    for w in words:
        cell = _cell_of_word(grid, w)
        if cell is not None:
            owner.setdefault(id(cell), []).append(w)
    for cell in grid.cells:
        mine = sorted(owner.get(id(cell), []), key=lambda w: w.bbox[0])
        text = cell.text.strip()
        if not mine or len(text) < 2:
            continue
        fixed = text
        for at_start in (True, False):
            glyph = fixed[0] if at_start else fixed[-1]
            if glyph not in DEBRIS_GLYPHS:
                continue
            w = mine[0] if at_start else mine[-1]
            t = w.text.strip()
            if not t or (t[0] if at_start else t[-1]) != glyph:
                continue
            width = (w.bbox[2] - w.bbox[0]) / max(1, len(t))
            g0 = w.bbox[0] if at_start else w.bbox[2] - width
            g1 = g0 + width
            if not any(g0 - RULE_TOLERANCE <= x <= g1 + RULE_TOLERANCE for x in lines.v):
                continue
            rest = fixed[1:].lstrip() if at_start else fixed[:-1].rstrip()
            if rest:
                fixed = rest
        if fixed != text:
            out.trimmed.append(
                {"row": cell.row, "col": cell.col, "from": cell.text, "to": fixed, "rule": "ruling_glyph"}
            )
            cell.text = fixed


def lift_box_text(grid: TableGrid, words: list[Word], lines: RulingLines | None = None) -> BoxText:
    """Move caption and note text out of `grid` (in place) and trim OCR glyphs read off ruling
    lines; what moved is returned and also written to `grid.repairs`."""
    out = BoxText()
    placed = [w for w in words if w.text.strip()]
    if grid.n_rows >= 2 and grid.n_cols >= 2 and placed:
        for top in (True, False):
            for _ in range(2):  # a caption row and a caption line merged into the header below it
                taken = _lift_edge(grid, placed, top, out, lines.h if lines is not None else ())
                if not taken:
                    break
                placed = [w for w in placed if id(w) not in taken]
    if lines is not None and placed:
        _trim_debris(grid, placed, lines, out)
    _drop_blank_last_rows(grid, out)
    grid.repairs.extend(out.repairs)
    return out


def _drop_blank_last_rows(grid: TableGrid, out: BoxText) -> None:
    """Drop last rows that are one blank cell over every column: the paper between the last row
    and a note the crop took in (eu-006 p3 on the photocopy: the note's words lay outside the
    table's box, and the row the model drew for them stayed, empty). A blank row of cells, one a
    column, stays: it is a row whose words the grid dealt elsewhere (eu-001 p1 on the noise scan:
    dropping it cost the table a row) or whose letters the scan lost."""
    while grid.n_rows > 2:
        r = grid.n_rows - 1
        mine = [c for c in grid.cells if c.row <= r < c.row + c.rowspan]
        if len(mine) != 1 or mine[0].colspan != grid.n_cols or mine[0].rowspan > 1 or mine[0].text.strip():
            return
        _drop_row(grid, r)
        out.repairs.append("box_text: a blank last row dropped")


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def with_box_text(context: Context | None, moved: BoxText) -> Context | None:
    """The table's context with the lifted caption and notes added (text already there is not repeated)."""
    if not moved.caption and not moved.notes:
        return context
    ctx = context if context is not None else Context()
    caption = ctx.caption
    for text in moved.caption:
        if _norm(text) not in _norm(caption):
            caption = f"{caption} {text}".strip() if caption else text
    notes = list(ctx.notes)
    for text in moved.notes:
        if not any(_norm(text) in _norm(n) for n in notes):
            notes.append(text)
    return Context(caption, notes, ctx.above_clear, ctx.below_clear)
