"""Structure objects + words -> a rectangular grid with spans, headers and cell text.

Where the reference post-processing of Table Transformer goes wrong (docs/architecture.md,
'Table Transformer, as we use it') this module does the
opposite on purpose: empty rows and columns are kept, every slot belongs to exactly one
cell, every span is a contiguous rectangle with boxes that match it, header rows may be
several, one bad object never loses the table (`sanitise`), the bands are corrected with the
words and ruling lines (`refine`), and nothing is changed without a note in `repairs`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from worker.core import span_words
from worker.core.bands import Band, best_band, covered, interval, snap, suppress_duplicates
from worker.core.cell_text import assign_words, reading_order_text
from worker.core.geometry import clip, overlap_1d, union_box
from worker.core.header_spans import header_rows_by_words, split_header_spans
from worker.core.header_words import centre_header_labels
from worker.core.headers import sub_header_rows, value_rows_under_header
from worker.core.lattice import contradicts, find_lattice, off_rules
from worker.core.refine import RefineRules, marks_for, refine_axis
from worker.core.sanitise import sanitise
from worker.core.spans import SpanRect, place_spans
from worker.core.types import (
    COLUMN,
    COLUMN_HEADER,
    PROJECTED_ROW_HEADER,
    ROW,
    SPANNING_CELL,
    TABLE,
    BBox,
    Cell,
    RulingLines,
    StructureObject,
    TableGrid,
    Word,
)

DEFAULT_THRESHOLDS: dict[str, float] = {
    TABLE: 0.5,
    ROW: 0.5,
    COLUMN: 0.5,
    COLUMN_HEADER: 0.5,
    PROJECTED_ROW_HEADER: 0.5,
    SPANNING_CELL: 0.5,
}


def _finite_box(b: BBox) -> bool:
    return all(math.isfinite(v) for v in b) and b[2] > b[0] and b[3] > b[1]


def _grid_box(
    tables: list[StructureObject],
    rows: list[StructureObject],
    cols: list[StructureObject],
    words: list[Word],
    image_size: tuple[float, float] | None,
) -> BBox | None:
    """The area the grid must tile: the best `table` box grown to hold every row and column."""
    boxes: list[BBox] = []
    if tables:
        boxes.append(max(tables, key=lambda o: o.score).bbox)
    if rows and cols:
        boxes.append(
            (
                min(c.bbox[0] for c in cols),
                min(r.bbox[1] for r in rows),
                max(c.bbox[2] for c in cols),
                max(r.bbox[3] for r in rows),
            )
        )
    elif rows or cols:
        boxes.append(union_box(o.bbox for o in rows + cols))
    if not boxes and words:
        boxes.append(union_box(w.bbox for w in words))
    if not boxes:
        return None
    box = union_box(boxes)
    if image_size:
        box = clip(box, (0.0, 0.0, float(image_size[0]), float(image_size[1])))
    return box if _finite_box(box) else None


def _bands(
    objs: Iterable[StructureObject],
    axis: str,
    lo: float,
    hi: float,
    cross: tuple[float, float],
    max_overlap: float,
    what: str,
    repairs: list[str],
) -> list[Band]:
    """Bands of one axis, clipped to the grid box, de-duplicated and snapped to tile it."""
    raw = []
    for o in objs:
        a, b = interval(o.bbox, axis)
        c0, c1 = interval(o.bbox, "x" if axis == "y" else "y")
        if min(c1, cross[1]) <= max(c0, cross[0]):
            continue  # entirely beside the table
        a, b = max(a, lo), min(b, hi)
        if b > a:
            raw.append(Band(a, b, o.score))
    kept, dropped = suppress_duplicates(raw, max_overlap)
    if dropped:
        repairs.append(f"{dropped} duplicate {what}(s) suppressed")
    if not kept:
        repairs.append(f"no {what}s found: the table is read as one {what}")
        kept = [Band(lo, hi, 0.0)]
    return snap(kept, lo, hi)


def _header_rows(headers: list[StructureObject], rows: list[Band]) -> set[int]:
    found: set[int] = set()
    for h in headers:
        found.update(covered(rows, h.bbox[1], h.bbox[3]))
    return found


def _span_candidates(
    objs: list[StructureObject], rows: list[Band], cols: list[Band], header: set[int], repairs: list[str]
) -> list[SpanRect]:
    """Spanning cells snapped to the grid lines they cover, clipped to one side of the header."""
    out = []
    for o in objs:
        rr = covered(rows, o.bbox[1], o.bbox[3])
        cc = covered(cols, o.bbox[0], o.bbox[2])
        if not rr:
            best = best_band(rows, o.bbox[1], o.bbox[3])
            rr = [best] if best is not None else []
        if not cc:
            best = best_band(cols, o.bbox[0], o.bbox[2])
            cc = [best] if best is not None else []
        if not rr or not cc:
            continue
        in_header = [r for r in rr if r in header]
        if in_header and len(in_header) < len(rr):
            # a cell cannot be both header and body: keep the side holding most of its rows
            body = [r for r in rr if r not in header]
            rr = in_header if len(in_header) >= len(body) else body
            rr = list(range(min(rr), max(rr) + 1))
            repairs.append("spanning cell crossing the header boundary clipped to one side")
        out.append(SpanRect(rr[0], rr[-1], cc[0], cc[-1], o.score))
    return out


def _refine(
    rows: list[Band],
    cols: list[Band],
    by_label: dict[str, list[StructureObject]],
    words: list[Word],
    lines: RulingLines | None,
    rules: RefineRules,
    repairs: list[str],
) -> tuple[list[Band], list[Band]]:
    """Columns, then rows, corrected with the words (and ruling lines) of the crop.

    Text that may legitimately cross a boundary is left out of the words a boundary must not
    cut: spanning cells, and for columns also the column header and projected row headers,
    whose labels often run over several columns. For rows the column header's words are left
    out too: header labels wrap over several lines in several columns at once, which would
    read as two rows; the header's own rows come from the model's header and spanning cells.
    """
    if not words or not rules.any:
        return rows, cols
    # a spanning cell's text may cross the boundaries it spans, however narrow the cell
    spans = [o.bbox for o in by_label.get(SPANNING_CELL, [])]
    wide = tall = spans
    headers = [o.bbox for o in by_label.get(COLUMN_HEADER, []) + by_label.get(PROJECTED_ROW_HEADER, [])]
    pairs = [(w.bbox, w.text) for w in words]
    col_marks = marks_for(pairs, "x", skip=wide + headers)
    cols = refine_axis(
        cols,
        col_marks,
        lines.v if lines else (),
        [(b.lo, b.hi) for b in rows],
        rules,
        "column",
        repairs,
        every_word=marks_for(pairs, "x"),
        cell_edges=[v for b in spans for v in (b[0], b[2])],
    )
    column_header = [o.bbox for o in by_label.get(COLUMN_HEADER, [])]
    row_marks = marks_for(pairs, "y", skip=tall + column_header, shrink=0.1)
    rows = refine_axis(
        rows,
        row_marks,
        lines.h if lines else (),
        [(b.lo, b.hi) for b in cols],
        rules,
        "row",
        repairs,
        every_word=marks_for(pairs, "y"),
        cell_edges=[v for b in spans for v in (b[1], b[3])],
    )
    return rows, cols


def reconstruct(
    objects: list[StructureObject],
    words: list[Word],
    image_size: tuple[float, float] | None = None,
    thresholds: dict[str, float] | None = None,
    duplicate_overlap: float = 0.5,
    lines: RulingLines | None = None,
    refine: RefineRules | None = None,
) -> TableGrid:
    """Rebuild one table. Pure function of its inputs; never raises, whatever the boxes hold.

    `lines` are the crop's ruling lines (found by an image step outside the core); `refine`
    says which word- and line-based corrections run (default: all).
    """
    limits = {**DEFAULT_THRESHOLDS, **(thresholds or {})}
    clean = sanitise(objects, words, image_size)
    repairs: list[str] = list(clean.repairs)
    objects, words = clean.objects, clean.words
    kept = [o for o in objects if _finite_box(o.bbox) and o.score >= limits.get(o.label, 1.1)]
    by_label: dict[str, list[StructureObject]] = {}
    for o in kept:
        by_label.setdefault(o.label, []).append(o)
    words = [w for w in words if _finite_box(w.bbox) and w.text.strip()]

    box = _grid_box(by_label.get(TABLE, []), by_label.get(ROW, []), by_label.get(COLUMN, []), words, image_size)
    if box is None:
        return TableGrid(
            0,
            0,
            [],
            repairs=["nothing to reconstruct: no table, rows, columns or words"],
            confidence=0.0,
            unassigned_words=words,
        )
    x0, y0, x1, y1 = box
    rows = _bands(by_label.get(ROW, []), "y", y0, y1, (x0, x1), duplicate_overlap, "row", repairs)
    cols = _bands(by_label.get(COLUMN, []), "x", x0, x1, (y0, y1), duplicate_overlap, "column", repairs)
    rows, cols = _refine(rows, cols, by_label, words, lines, refine or RefineRules(), repairs)
    n_rows, n_cols = len(rows), len(cols)

    header = _header_rows(by_label.get(COLUMN_HEADER, []), rows)
    prh_rows: set[int] = set()
    fixed: list[SpanRect] = []
    for o in sorted(by_label.get(PROJECTED_ROW_HEADER, []), key=lambda o: -o.score):
        rr = [r for r in covered(rows, o.bbox[1], o.bbox[3]) if r not in header and r not in prh_rows]
        if not rr:
            continue
        rr = list(range(rr[0], rr[-1] + 1))
        if any(r in prh_rows for r in rr):
            continue
        prh_rows.update(rr)
        fixed.append(SpanRect(rr[0], rr[-1], 0, n_cols - 1, o.score, projected=True))
    spans = _span_candidates(
        sorted(by_label.get(SPANNING_CELL, []), key=lambda o: -o.score), rows, cols, header, repairs
    )
    rules = refine or RefineRules()
    if rules.spans and words:
        row_gap, col_gap = span_words.gaps(rows, cols, words)
        spans, contradicted = span_words.drop_contradicted(spans, rows, cols, words, row_gap, col_gap)
        if contradicted:
            repairs.append(f"{contradicted} spanning cell(s) over separate texts undone")
    placed, span_repairs = place_spans(fixed, spans, n_rows, n_cols)
    repairs.extend(span_repairs)
    if rules.spans and words:
        taken = {slot for rect in placed for slot in rect.slots()}
        found = span_words.spans_from_text(rows, cols, words, col_gap, taken)
        if found:
            more, _ = place_spans([], found, n_rows, n_cols)
            placed += more
            repairs.append(f"{len(more)} spanning cell(s) made where text lies across a column boundary")
    tables = by_label.get(TABLE, [])
    table_score = max((t.score for t in tables), default=1.0)
    drawn = grid_from_lattice(lines, placed, rows, cols, header, words, table_score, repairs)
    if drawn is not None:
        return drawn
    return grid_from_bands(placed, rows, cols, header, words, box, table_score, repairs)


def grid_from_lattice(
    lines: RulingLines | None,
    placed: list[SpanRect],
    rows: list[Band],
    cols: list[Band],
    header: set[int],
    words: list[Word],
    table_score: float,
    repairs: list[str],
) -> TableGrid | None:
    """The grid the table's rules draw where they draw a full lattice and the model's grid
    (`placed` over `rows` x `cols`) contradicts it (`worker.core.lattice`); else None. Header
    rows are the lattice's rows holding most of one of the model's, from the top; the rules read as "1" are
    left out, and so are words outside the frame (a caption inside the crop)."""
    spans = [(cols[r.c0].lo, rows[r.r0].lo, cols[r.c1].hi, rows[r.r1].hi) for r in placed if r.c1 > r.c0]
    lattice = find_lattice(lines, words, spans)
    if lattice is None or not contradicts(lattice, rows, cols, placed, words):
        return None
    marked = [rows[r] for r in header]
    head = {
        i
        for i, band in enumerate(lattice.rows)
        if any(overlap_1d(m.lo, m.hi, band.lo, band.hi) >= m.size / 2 for m in marked)
    }
    top = 0
    while top in head:
        top += 1
    repairs.append("grid read from the table's drawn rules: the model's cells crossed or parted them")
    return grid_from_bands(
        list(lattice.rects),
        lattice.rows,
        lattice.cols,
        set(range(top)),
        off_rules(lattice, words),
        lattice.frame,
        table_score,
        repairs,
        margin_rows=0.0,
    )


def grid_from_bands(
    placed: list[SpanRect],
    rows: list[Band],
    cols: list[Band],
    header: set[int],
    words: list[Word],
    box: BBox,
    table_score: float,
    repairs: list[str],
    margin_rows: float = 1.0,
) -> TableGrid:
    """Cells from placed rectangles (every other slot a 1x1 cell), words assigned, confidences.

    Shared by every structure engine: whatever the model emits becomes tiling row and column
    bands plus non-overlapping rectangles, and from there the grid, cell text and scores
    follow the same rules. Words wholly outside the grid but within `margin_rows` median row
    heights of it still go to the nearest cell.
    """
    x0, y0, x1, y1 = box
    n_rows, n_cols = len(rows), len(cols)
    placed, cut = split_header_spans(placed, rows, cols, header, words)
    if cut:
        repairs.append(f"{cut} spanning header cell(s) holding separate labels split")
    placed = centre_header_labels(placed, rows, cols, words, header or header_rows_by_words(rows, cols, words), repairs)
    cells: list[Cell] = []
    owner = [[-1] * n_cols for _ in range(n_rows)]
    for rect in placed:
        cells.append(
            Cell(
                rect.r0,
                rect.c0,
                rect.r1 - rect.r0 + 1,
                rect.c1 - rect.c0 + 1,
                is_projected_row_header=rect.projected,
                confidence=rect.score,
            )
        )
    for i, cell in enumerate(cells):
        for r, c in cell.slots():
            owner[r][c] = i
    for r in range(n_rows):
        for c in range(n_cols):
            if owner[r][c] == -1:
                owner[r][c] = len(cells)
                cells.append(Cell(r, c, confidence=min(rows[r].score, cols[c].score)))

    boxes: list[BBox] = []
    for cell in cells:
        cell.bbox = (
            cols[cell.col].lo,
            rows[cell.row].lo,
            cols[cell.col + cell.colspan - 1].hi,
            rows[cell.row + cell.rowspan - 1].hi,
        )
        cell.is_header = all(r in header for r in range(cell.row, cell.row + cell.rowspan))
        boxes.append(cell.bbox)

    row_h = sorted(b.size for b in rows)[len(rows) // 2]
    assignment = assign_words(words, rows, cols, owner, boxes, margin=max(row_h * margin_rows, 1.0))
    for i, cell in enumerate(cells):
        members = assignment.words.get(i, [])
        cell.text = reading_order_text(members)
        fits = assignment.fits.get(i, [])
        ocr = [w.confidence for w in members if w.confidence is not None]
        fit = sum(fits) / len(fits) if fits else 1.0
        ocr_conf = sum(ocr) / len(ocr) if ocr else 1.0
        cell.confidence = round(cell.confidence * fit * ocr_conf, 4)
    if assignment.unassigned:
        repairs.append(f"{len(assignment.unassigned)} word(s) outside the table left unassigned")

    header_rows = 0
    while header_rows < n_rows and header_rows in header:
        header_rows += 1
    mean_cell = sum(c.confidence for c in cells) / len(cells) if cells else 0.0
    grid = TableGrid(
        n_rows=n_rows,
        n_cols=n_cols,
        cells=cells,
        header_rows=header_rows,
        row_bboxes=[(x0, b.lo, x1, b.hi) for b in rows],
        col_bboxes=[(b.lo, y0, b.hi, y1) for b in cols],
        confidence=round(table_score * mean_cell, 4),
        repairs=repairs,
        unassigned_words=assignment.unassigned,
    )
    figures = value_rows_under_header(grid)
    if figures:
        grid.header_rows -= figures
        for cell in cells:
            if cell.row >= grid.header_rows:
                cell.is_header = False
        repairs.append(f"{figures} row(s) of figures under the model's header returned to the body")
    longer = sub_header_rows(grid)
    if longer > grid.header_rows:
        for cell in cells:
            if cell.row < longer:
                cell.is_header = True
        repairs.append(f"{longer - grid.header_rows} sub-header row(s) under the model's header joined it")
        grid.header_rows = longer
    return grid
