"""Structure tokens with cell boxes (an image-to-markup model's output) -> the table grid.

Models of the SLANet family emit the table as HTML structure tokens (`<tr>`, `<td></td>`,
`<td`, ` colspan="2"`, `>`, `</td>`, `<thead>`...) and one box per cell. The logical grid
comes from the tokens (cells placed as a browser would place them), the geometry from the
boxes: each grid row and column becomes a band at the median edges of its cells, and from
there `grid_from_bands` builds cells, assigns words and scores exactly as for Table
Transformer objects. Malformed token streams are repaired, never fatal, and every repair is
noted.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any

from worker.core import span_words
from worker.core.bands import Band, snap
from worker.core.column_gaps import fit_columns_to_text
from worker.core.column_split import header_rows_for_split, merge_label_only_columns, split_merged_columns
from worker.core.empty_edges import drop_empty_edges
from worker.core.geometry import clip, union_box
from worker.core.header_lines import header_line_back
from worker.core.header_rows_split import split_group_label_rows
from worker.core.header_words import join_header_labels
from worker.core.header_wraps import join_wrapped_header_rows
from worker.core.headers import is_figure
from worker.core.overflow_columns import join_overflow_columns
from worker.core.reconstruct import grid_from_bands, grid_from_lattice
from worker.core.ruled_columns import merge_columns_between_rules
from worker.core.ruled_rows import rows_onto_rules
from worker.core.spans import SpanRect
from worker.core.stacked_rows import split_stacked_rows
from worker.core.stub_spans import cut_stub_spans_into_body, realign_stub_spans, split_stub_spans_at_lines
from worker.core.types import BBox, RulingLines, TableGrid, Word
from worker.core.wordless_bands import join_wordless_columns, join_wordless_rows

_SPAN_RE = re.compile(r'^\s*(colspan|rowspan)="(\d+)"$')
CELL_OPEN = ("<td></td>", "<td", "<td>")
MAX_SPAN = 1000
# The cell boxes reach the table's edge, unlike Table Transformer's often tight rows, so a word
# more than this many median row heights outside them is page text caught by the crop margin.
OUTSIDE_MARGIN_ROWS = 0.3
# A body row read as one cell across the table is checked against its words only when at least
# this many times as many body rows were read cell by cell (the columns are then known).
LONE_FULL_ROWS = 4


@dataclass(frozen=True, slots=True)
class StructureToken:
    """One decoded token; cell-opening tokens carry the cell's box in crop pixels."""

    token: str
    score: float
    bbox: BBox | None = None


@dataclass(slots=True)
class _Cell:
    row: int
    col: int = 0
    rowspan: int = 1
    colspan: int = 1
    score: float = 1.0
    bbox: BBox | None = None
    header: bool = False


def tokens_from_raw(raw: list[dict[str, Any]]) -> list[StructureToken]:
    """The structure model's plain output (`{"token", "score", "bbox"?}` each) as tokens."""
    return [
        StructureToken(
            str(t["token"]),
            float(t.get("score", 1.0)),
            tuple(float(v) for v in t["bbox"]) if t.get("bbox") is not None else None,  # type: ignore[arg-type]
        )
        for t in raw
    ]


def _usable(b: BBox | None) -> bool:
    return b is not None and all(math.isfinite(v) for v in b) and b[2] > b[0] and b[3] > b[1]


def parse_tokens(tokens: list[StructureToken], repairs: list[str]) -> tuple[list[_Cell], int]:
    """Cells with their row, spans, box and header mark, in token order; and the row count."""
    cells: list[_Cell] = []
    row = -1
    in_head = False
    row_open = False
    current: _Cell | None = None
    for t in tokens:
        tok = t.token
        if tok == "<thead>":
            in_head = True
        elif tok in ("</thead>", "<tbody>"):
            in_head = False
        elif tok == "<tr>":
            row += 1
            row_open = True
        elif tok == "</tr>":
            row_open = False
        elif tok in CELL_OPEN:
            if not row_open:  # a cell outside any row opens one
                row += 1
                row_open = True
                repairs.append("cell outside a row: a row was opened for it")
            current = _Cell(row, score=t.score, bbox=t.bbox if _usable(t.bbox) else None, header=in_head)
            cells.append(current)
            if tok == "<td></td>":
                current = None
        elif current is not None and (m := _SPAN_RE.match(tok)):
            value = min(max(int(m.group(2)), 1), MAX_SPAN)
            if m.group(1) == "colspan":
                current.colspan = value
            else:
                current.rowspan = value
        elif tok in (">", "</td>"):
            if tok == "</td>":
                current = None
    return cells, row + 1


def place(cells: list[_Cell], n_rows: int, repairs: list[str]) -> tuple[list[SpanRect], int, int]:
    """Lay the cells on slots as HTML does (skipping slots taken by row spans from above).

    Row spans past the last row are cut; a column span that runs into a slot taken from
    above is cut before it. Returns the rectangles, the row count and the column count.
    """
    taken: set[tuple[int, int]] = set()
    rects: list[SpanRect] = []
    cursor: dict[int, int] = {}
    clipped = cut = 0
    for cell in cells:
        col = cursor.get(cell.row, 0)
        while (cell.row, col) in taken:
            col += 1
        rowspan = cell.rowspan
        if cell.row + rowspan > n_rows:
            rowspan = n_rows - cell.row
            clipped += 1
        colspan = 1
        while colspan < cell.colspan and all(
            (r, col + colspan) not in taken for r in range(cell.row, cell.row + rowspan)
        ):
            colspan += 1
        if colspan < cell.colspan:
            cut += 1
        cell.col, cell.rowspan, cell.colspan = col, rowspan, colspan
        for r in range(cell.row, cell.row + rowspan):
            for c in range(col, col + colspan):
                taken.add((r, c))
        cursor[cell.row] = col + colspan
        rects.append(SpanRect(cell.row, cell.row + rowspan - 1, col, col + colspan - 1, cell.score))
    if clipped:
        repairs.append(f"{clipped} row span(s) past the last row cut")
    if cut:
        repairs.append(f"{cut} column span(s) running into a cell from above cut")
    n_cols = max((c + 1 for _, c in taken), default=0)
    widths = Counter(r for r, _ in taken)
    short = sum(1 for r in range(n_rows) if widths[r] < n_cols)
    if short:
        repairs.append(f"{short} short row(s) filled with empty cells")
    return rects, n_rows, n_cols


def _axis_bands(cells: list[_Cell], n: int, axis: str) -> list[Band] | None:
    """One band per grid row ('y') or column ('x') at the median edges of the cells in it.

    Cells spanning one line give its edges; a line that only spanning cells cross gets an
    equal share of them. Lines no box tells about are interpolated; bands are kept in order.
    """
    lo_i, hi_i = (1, 3) if axis == "y" else (0, 2)
    single: list[list[tuple[float, float, float]]] = [[] for _ in range(n)]
    shared: list[list[tuple[float, float, float]]] = [[] for _ in range(n)]
    for cell in cells:
        if cell.bbox is None:
            continue
        start, span = (cell.row, cell.rowspan) if axis == "y" else (cell.col, cell.colspan)
        a, b = cell.bbox[lo_i], cell.bbox[hi_i]
        step = (b - a) / span
        for k in range(span):
            target = single if span == 1 else shared
            if 0 <= start + k < n:
                target[start + k].append((a + k * step, a + (k + 1) * step, cell.score))
    est: list[tuple[float, float, float] | None] = []
    for i in range(n):
        pool = single[i] or shared[i]
        if pool:
            est.append((median(p[0] for p in pool), median(p[1] for p in pool), median(p[2] for p in pool)))
        else:
            est.append(None)
    known = [i for i, e in enumerate(est) if e is not None]
    if not known:
        return None
    for i in range(n):  # fill unknown lines between (or beyond) known ones
        if est[i] is not None:
            continue
        before = max((k for k in known if k < i), default=None)
        after = min((k for k in known if k > i), default=None)
        if before is not None and after is not None:
            b_hi, a_lo = est[before][1], est[after][0]  # type: ignore[index]
            gap = (a_lo - b_hi) / (after - before)
            lo = b_hi + (i - before - 1) * gap + 0.0
            est[i] = (lo, lo + max(gap, 1e-3), 0.0)
        else:
            ref = est[before if before is not None else after]  # type: ignore[index]
            size = ref[1] - ref[0]  # type: ignore[index]
            offset = (i - (before if before is not None else after)) * size  # type: ignore[operator]
            est[i] = (ref[0] + offset, ref[1] + offset, 0.0)  # type: ignore[index]
    bands: list[Band] = []
    for e in est:
        lo, hi, score = e  # type: ignore[misc]
        if bands and lo <= bands[-1].lo:
            lo = bands[-1].lo + 1e-3
        bands.append(Band(lo, max(hi, lo + 1e-3), score))
    return bands


TEXT_TRIM = 0.15  # share of a word box's height off each edge: ascenders and descenders overlap lines


def _text_span(w: Word) -> tuple[float, float]:
    """The rows a word's text surely covers: its box less `TEXT_TRIM` top and bottom."""
    trim = TEXT_TRIM * (w.bbox[3] - w.bbox[1])
    return w.bbox[1] + trim, w.bbox[3] - trim


def _crossings(cut: float, starts: list[float], ends: list[float]) -> int:
    """How many word intervals (starts and ends each sorted) hold `cut` strictly inside."""
    return bisect_left(starts, cut) - bisect_right(ends, cut)


def fit_rows_to_text(
    bands: list[Band], cells: list[_Cell], words: list[Word], repairs: list[str], rules: Sequence[float] = ()
) -> list[Band]:
    """Move the row boundaries off the text lines they cut through.

    The model's cell boxes can sit a few pixels off the text, growing down the table (seen on
    wide, short crops), and a boundary through a line of text sends its words to the wrong
    row. Where only a few boundaries cut text, and clearly on one side of its lines, those
    alone move past the lines (`_moved_alone`). Otherwise the boundaries are first moved
    together (a scale about the table top and a shift, within 8% and 0.6 row heights) to cut
    through as few words as possible, then each one alone to the nearest gap between words
    within a third of a row. On a ruled table (`rules`, the crop's horizontal ruling lines) the
    rules come first (`_onto_rules`). Words inside a cell spanning several rows are left out:
    they may cross boundaries legitimately.
    """
    if len(bands) < 2:
        return bands
    spanned = [c.bbox for c in cells if c.rowspan > 1 and c.bbox is not None]
    spans: list[tuple[float, float]] = []
    for w in words:
        cx, cy = (w.bbox[0] + w.bbox[2]) / 2, (w.bbox[1] + w.bbox[3]) / 2
        if any(b[0] <= cx <= b[2] and b[1] <= cy <= b[3] for b in spanned):
            continue
        spans.append(_text_span(w))
    if len(spans) < 3:
        return bands
    starts = sorted(a for a, _ in spans)
    ends = sorted(b for _, b in spans)
    cuts = [(a.hi + b.lo) / 2 for a, b in zip(bands, bands[1:])]
    height = median(b.size for b in bands)
    top = bands[0].lo

    # only text the model's rows hold: a note line under the table, caught by the crop margin,
    # must not draw every boundary down a row to take it in (office scan, eu-025 p2 t3)
    centres = sorted(c for a, b in spans if bands[0].lo <= (c := (a + b) / 2) <= bands[-1].hi)
    first, last = bands[0].size, bands[-1].size

    def cost(scale: float, shift: float) -> int:
        mapped = [top + scale * (c - top) + shift for c in cuts]
        # text beyond the outer rows' height past the outer boundaries would leave the table: a fit
        # one whole row off (between the same text lines) must not look as good as the right one
        below = len(centres) - bisect_right(centres, mapped[-1] + scale * last)
        outside = bisect_left(centres, mapped[0] - scale * first) + below
        return outside + sum(_crossings(y, starts, ends) for y in mapped)

    base = cost(1.0, 0.0)
    if base == 0:
        return bands
    ruled = _onto_rules(cuts, rules, height, spans, words)
    if ruled is not None:
        repairs.append("row boundaries moved off the text lines they cut, onto the ruling lines")
        return _bands_at(bands, ruled)
    edges = sorted({v for pair in spans for v in pair})
    reach = height / 3
    alone = _moved_alone(cuts, spans, starts, ends, edges, reach, bands)
    if alone is not None:
        repairs.append("row boundaries moved off the text lines they cut")
        return _bands_at(bands, alone)
    best = (base, 0.0, 1.0, 0.0)
    step = max(0.5, height / 20)
    shifts = [k * step for k in range(-int(0.6 * height / step), int(0.6 * height / step) + 1)]
    for i in range(-16, 17):
        scale = 1.0 + i * 0.005
        for shift in shifts:
            found = cost(scale, shift)
            penalty = abs(scale - 1.0) * 10 + abs(shift) / height
            if (found, penalty) < best[:2]:
                best = (found, penalty, scale, shift)
    _, _, scale, shift = best
    moved = [top + scale * (c - top) + shift for c in cuts]
    for k, cut in enumerate(moved):
        if _crossings(cut, starts, ends) == 0:
            continue
        lo = moved[k - 1] if k else bands[0].lo
        hi = moved[k + 1] if k + 1 < len(moved) else bands[-1].hi
        gap = _nearest_gap(cut, lo, hi, edges, reach, starts, ends)
        if gap is not None:
            moved[k] = gap
    if base > sum(_crossings(c, starts, ends) for c in moved):
        repairs.append("row boundaries moved off the text lines they cut")
    else:
        return bands
    return _bands_at(bands, moved)


def _onto_rules(
    cuts: list[float], rules: Sequence[float], reach: float, spans: list[tuple[float, float]], words: list[Word]
) -> list[float] | None:
    """The boundaries on the ruling lines, when the rules part the text lines (`spans`) into
    exactly as many rows as the model read (every boundary then goes onto the rule between two
    of them, within `reach` of where the model put it) and no chosen rule runs through a word,
    one in a spanning cell included; else None. On resampled scans SLANet's boxes sat several
    pixels off the rows, some up and some down, a different amount each: a joint shift of every
    boundary took a header's second line ("to air") into its first (eu-001), and the nearest
    rule to a box drifting up by half a row is the one above its text (eu-005). A rule through
    a word is a partial one, under a group label: on the demo sample it ran through "Region"
    and "Product", centred in their two-row cells, and took the sub-labels' row."""
    if not rules or not cuts:
        return None
    centres = [(a + b) / 2 for a, b in spans]
    edges = [-math.inf, *sorted(set(rules)), math.inf]
    filled = [i for i in range(len(edges) - 1) if any(edges[i] < c < edges[i + 1] for c in centres)]
    if len(filled) != len(cuts) + 1:
        return None
    out: list[float] = []
    for cut, (upper, lower) in zip(cuts, zip(filled, filled[1:])):
        # between two rows of text, the rule under the upper or over the lower (empty gaps between)
        y = min((edges[upper + 1], edges[lower]), key=lambda v: abs(v - cut))
        if abs(y - cut) > reach:
            return None
        out.append(y)
    if any(_text_span(w)[0] < y < _text_span(w)[1] for y in out for w in words):
        return None
    return out


CLEAR_SIDE = 2 / 3  # a boundary through a line is evidence for a side when this share of the line lies there


def _moved_alone(
    cuts: list[float],
    spans: list[tuple[float, float]],
    starts: list[float],
    ends: list[float],
    edges: list[float],
    reach: float,
    bands: list[Band],
) -> list[float] | None:
    """The boundaries with only those that cut text moved, each past the lines it cuts to the
    side most of them lie on (the nearest free gap there, within `reach`); None unless that is
    clearly right: fewer than half the boundaries cut text (boxes drifting down the table cut
    most), each of those cuts its lines well off their middle (a boundary through the middle of
    a line says nothing of its row), and every line ends free. A table of tall multi-line cells
    has a gap between lines every line's height, so the joint scale-and-shift fit finds a
    cut-free placement one or two lines off every boundary (dev eu-003 p1, TEDS 0.44)."""
    cutting = [k for k, c in enumerate(cuts) if _crossings(c, starts, ends)]
    if not cutting or 2 * len(cutting) >= len(cuts):
        return None
    moved = list(cuts)
    for k in cutting:
        cut = cuts[k]
        lines = [(a, b) for a, b in spans if a < cut < b]
        above = sum(cut - a for a, _ in lines)
        below = sum(b - cut for _, b in lines)
        if max(above, below) < CLEAR_SIDE * (above + below):
            return None
        lo = moved[k - 1] if k else bands[0].lo
        hi = moved[k + 1] if k + 1 < len(moved) else bands[-1].hi
        # the lines belong to the row above when most of them lies there: the boundary goes below them
        gap = _nearest_gap(cut, lo, hi, edges, reach, starts, ends, down=above > below)
        if gap is None:
            return None
        moved[k] = gap
    return moved


def _nearest_gap(
    cut: float,
    lo: float,
    hi: float,
    edges: list[float],
    reach: float,
    starts: list[float],
    ends: list[float],
    down: bool | None = None,
) -> float | None:
    """The position nearest `cut`, within `reach` and strictly between `lo` and `hi`, that cuts no
    word (just off a word's edge); only below `cut` (`down`) or above it (not `down`) when given."""
    options = [
        e + d
        for e in edges
        for d in (-0.25, 0.25)
        if abs(e + d - cut) <= reach and lo < e + d < hi and (down is None or (e + d > cut) == down)
    ]
    free = [y for y in options if _crossings(y, starts, ends) == 0]
    return min(free, key=lambda y: abs(y - cut)) if free else None


def _bands_at(bands: list[Band], cuts: list[float]) -> list[Band]:
    """`bands` with their inner boundaries at `cuts` (outer edges kept)."""
    lows = [bands[0].lo, *cuts]
    highs = [*cuts, bands[-1].hi]
    return [Band(lo, max(hi, lo + 1e-3), b.score) for lo, hi, b in zip(lows, highs, bands)]


def _undo_spans_over_separate_texts(
    rects: list[SpanRect], rows: list[Band], cols: list[Band], words: list[Word], repairs: list[str]
) -> list[SpanRect]:
    """A cell the model drew across the stub and the columns beside it in the table's top row,
    whose texts stand apart as two cells' do, is undone (the rule Table Transformer's spanning
    cells get): on a photocopy SLANet-plus read the empty stub head and four years as one cell
    over the table ("1991 1994 1995 1996"). A cell over value columns only is left to the header
    rules (a group label over its sub-columns' two lines is one cell), and a body row read as one
    cell is left for the second look, whose trigger undoing it would hide (noise, eu-018 p1 t2:
    body rows read as one cell each; undone, 77 -> 0 values bound). Under a title row (one cell
    across the table, a caption read into the crop: box_text lifts it later) the next row is the
    top one."""
    n_cols = len(cols)
    titled = any(r.r0 == r.r1 == 0 and r.c0 == 0 and r.c1 == n_cols - 1 for r in rects)
    top = 1 if titled else 0
    wide = [r for r in rects if r.r0 == r.r1 and r.r0 <= top and r.c0 == 0 and r.c1 > r.c0]
    wide += _lone_data_rows_as_one_cell(rects, rows, cols, words, top)
    if not wide or not words:
        return rects
    row_gap, col_gap = span_words.gaps(rows, cols, words)
    kept, dropped = span_words.drop_contradicted(wide, rows, cols, words, row_gap, col_gap)
    if not dropped:
        return rects
    repairs.append(f"{dropped} spanning cell(s) over separate texts undone")
    gone = [r for r in wide if r not in kept]
    return [r for r in rects if r not in gone]


def _lone_data_rows_as_one_cell(
    rects: list[SpanRect], rows: list[Band], cols: list[Band], words: list[Word], top: int
) -> list[SpanRect]:
    """Body rows the model read as one cell across the table, where such rows are the exception:
    one text line holding two figures or more (a data row, not a section label). Among rows
    read cell by cell, the columns are known and the row's texts are checked against them; a
    body read as one cell per row (noise, eu-018 p1 t2) is left for the second look."""
    if len(cols) < 3:
        return []
    full = [r for r in rects if r.r0 == r.r1 > top and r.c0 == 0 and r.c1 == len(cols) - 1]
    body_rows = len(rows) - top - 1
    if not full or len(full) * LONE_FULL_ROWS > body_rows:
        return []
    out = []
    for r in full:
        band = rows[r.r0]
        inside = [w for w in words if band.lo <= (w.bbox[1] + w.bbox[3]) / 2 < band.hi]
        one_line = bool(inside) and min(w.bbox[3] for w in inside) > max(w.bbox[1] for w in inside)
        if one_line and sum(is_figure(w.text) for w in inside) >= 2:
            out.append(r)
    return out


def token_grid(
    tokens: list[StructureToken],
    words: list[Word],
    image_size: tuple[float, float] | None = None,
    lines: RulingLines | None = None,
) -> TableGrid:
    """Rebuild one table from structure tokens and cell boxes. Pure; never raises on valid input.

    `lines`, the crop's ruling lines when known, move a row boundary onto the rule running
    through the row beside it (`worker.core.ruled_rows`)."""
    repairs: list[str] = []
    words = [w for w in words if _usable(w.bbox) and w.text.strip()]
    cells, n_rows = parse_tokens(tokens, repairs)
    if not cells:
        return TableGrid(
            0,
            0,
            [],
            repairs=["nothing to reconstruct: the model found no cells"],
            confidence=0.0,
            unassigned_words=words,
        )
    rects, n_rows, n_cols = place(cells, n_rows, repairs)
    rows = _axis_bands(cells, n_rows, "y")
    cols = _axis_bands(cells, n_cols, "x")
    boxes = [c.bbox for c in cells if c.bbox is not None]
    if rows is None or cols is None or not boxes:
        return TableGrid(
            0, 0, [], repairs=["nothing to reconstruct: no cell boxes"], confidence=0.0, unassigned_words=words
        )
    box = union_box([*boxes, (cols[0].lo, rows[0].lo, cols[-1].hi, rows[-1].hi)])
    if image_size:
        box = clip(box, (0.0, 0.0, float(image_size[0]), float(image_size[1])))
    if not _usable(box):
        return TableGrid(0, 0, [], repairs=["nothing to reconstruct: empty table box"], confidence=0.0)
    rows = snap(fit_rows_to_text(rows, cells, words, repairs, lines.h if lines is not None else ()), box[1], box[3])
    if lines is not None and lines.h:
        rows = rows_onto_rules(rows, words, lines.h, repairs)
    spanning = [c.bbox for c in cells if c.colspan > 1 and c.bbox is not None]
    cols = snap(fit_columns_to_text(cols, rows, spanning, words, repairs), box[0], box[2])
    header = {r for c in cells if c.header for r in range(c.row, c.row + c.rowspan)}
    # a header row needs every cell in it marked: a body cell spanning up into it unmarks it
    header -= {r for c in cells if not c.header for r in range(c.row, c.row + c.rowspan)}
    scores = [t.score for t in tokens]
    table_score = sum(scores) / len(scores) if scores else 1.0
    drawn = grid_from_lattice(lines, rects, rows, cols, header, words, table_score, repairs)
    if drawn is not None:
        return drawn
    rects, rows, cols, header = drop_empty_edges(rects, rows, cols, header, words, repairs)
    rects, rows, header = join_wordless_rows(rects, rows, header, words, repairs)
    rects, cols = join_wordless_columns(rects, cols, words, repairs)
    rects, cols = join_overflow_columns(rects, rows, cols, words, repairs)
    if lines is not None and lines.v:
        rects, cols = merge_columns_between_rules(rects, rows, cols, lines.v, header, words, repairs)
    rects, rows, header = split_stacked_rows(rects, rows, cols, header, words, repairs)
    foot = max(box[3], rows[-1].hi)  # rows of figures found under the model's last row
    box = (box[0], box[1], box[2], min(foot, float(image_size[1])) if image_size else foot)
    rows = header_line_back(rows, cols, header, words, repairs)
    rects = cut_stub_spans_into_body(rects, rows, cols, words, repairs)
    rects = realign_stub_spans(rects, rows, cols, header, words, repairs)
    rects = split_stub_spans_at_lines(rects, rows, cols, words, repairs)
    head = header_rows_for_split(rects, rows, cols, words, header)
    rects, cols = merge_label_only_columns(rects, rows, cols, head, words, repairs)
    rects, cols = split_merged_columns(rects, rows, cols, header, words, repairs)
    rects, rows, head, header = split_group_label_rows(rects, rows, head, header, words, cols[0].hi, repairs)
    rects, rows, head, header = join_wrapped_header_rows(
        rects, rows, cols, head, header, words, lines.h if lines is not None else (), repairs
    )
    words = join_header_labels(words, rows, head, cols)
    rects = _undo_spans_over_separate_texts(rects, rows, cols, words, repairs)
    return grid_from_bands(rects, rows, cols, header, words, box, table_score, repairs, margin_rows=OUTSIDE_MARGIN_ROWS)
