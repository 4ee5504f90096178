"""Oracle structure objects and words derived from ground-truth cell boxes.

What a perfect structure model would emit for a table: rows and columns as bands that
tile the table (each boundary halfway between neighbouring rows'/columns' content), the
table box, one spanning cell per merged cell covering exactly its bands, the column header
when the ground truth marks one; all with score 1.0. Words are laid out inside each cell's
text box, so the reconstruction's word assignment is exercised too. Feeding these through
reconstruction must give back the ground-truth grid: any loss is ours, not the model's.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from worker.core.types import (
    COLUMN,
    COLUMN_HEADER,
    ROW,
    SPANNING_CELL,
    TABLE,
    StructureObject,
    Word,
)
from worker.evaluation.dataset import GtCell, GtTable

Extent = tuple[float, float]


@dataclass
class OracleTable:
    """Oracle input for one table: objects, words, image size, and notes on guesses made."""

    objects: list[StructureObject]
    words: list[Word]
    image_size: tuple[float, float]
    row_bounds: list[float]
    col_bounds: list[float]
    notes: list[str] = field(default_factory=list)


def oracle_for(table: GtTable) -> OracleTable:
    """Oracle objects and words for a ground-truth table (image size read from its image)."""
    return oracle_from_cells(table.cells, table.n_rows, table.n_cols, table.image_size, header_rows=table.header_rows)


def oracle_from_cells(
    cells: list[GtCell], n_rows: int, n_cols: int, image_size: tuple[float, float], header_rows: int = 0
) -> OracleTable:
    """Oracle objects for a complete grid of cells with (some) text boxes."""
    notes: list[str] = []
    width, height = float(image_size[0]), float(image_size[1])
    rb = axis_bounds(cells, n_rows, "row", height, notes)
    cb = axis_bounds(cells, n_cols, "col", width, notes)
    x0, x1, y0, y1 = cb[0], cb[-1], rb[0], rb[-1]
    objects = [StructureObject(TABLE, 1.0, (x0, y0, x1, y1))]
    objects += [StructureObject(COLUMN, 1.0, (cb[j], y0, cb[j + 1], y1)) for j in range(n_cols)]
    objects += [StructureObject(ROW, 1.0, (x0, rb[i], x1, rb[i + 1])) for i in range(n_rows)]
    if 0 < header_rows <= n_rows:
        objects.append(StructureObject(COLUMN_HEADER, 1.0, (x0, y0, x1, rb[header_rows])))
    for c in cells:
        if c.is_span:
            objects.append(
                StructureObject(
                    SPANNING_CELL, 1.0, (cb[c.col], rb[c.row], cb[c.col + c.colspan], rb[c.row + c.rowspan])
                )
            )
    words: list[Word] = []
    line_h = typical_line_height(cells)
    for c in cells:
        if c.text.strip() and c.bbox is None:
            notes.append(f"cell ({c.row},{c.col}) has text but no box: its words are missing")
        words += layout_words(c, line_h)
    return OracleTable(objects, words, (width, height), rb, cb, notes)


def layout_words(cell: GtCell, line_height: float | None = None) -> list[Word]:
    """One Word per whitespace token, lines stacked evenly, x proportional to character offsets.

    A one-line text whose box is several `line_height`s tall was wrapped on the page: its
    tokens are wrapped into that many lines, as an OCR engine would see them.
    """
    if cell.bbox is None:
        return []
    lines = [ln.split() for ln in cell.text.splitlines()]
    lines = [ln for ln in lines if ln]
    if not lines:
        return []
    x0, y0, x1, y1 = cell.bbox
    if len(lines) == 1 and line_height:
        lines = _wrap(lines[0], round((y1 - y0) / line_height))
    line_h = (y1 - y0) / len(lines)
    words: list[Word] = []
    for li, tokens in enumerate(lines):
        ly0, ly1 = y0 + li * line_h, y0 + (li + 1) * line_h
        n_chars = sum(len(t) for t in tokens) + len(tokens) - 1
        char_w = (x1 - x0) / n_chars
        offset = 0
        for tok in tokens:
            words.append(Word(tok, (x0 + offset * char_w, ly0, x0 + (offset + len(tok)) * char_w, ly1)))
            offset += len(tok) + 1
    return words


def typical_line_height(cells: list[GtCell]) -> float | None:
    """Median height of one text line over the table's cells (None without any box)."""
    heights = []
    for c in cells:
        n = len([ln for ln in c.text.splitlines() if ln.strip()])
        if c.bbox is not None and n:
            heights.append((c.bbox[3] - c.bbox[1]) / n)
    return statistics.median(heights) if heights else None


def _wrap(tokens: list[str], n_lines: int) -> list[list[str]]:
    """Split tokens into at most n_lines lines of about equal character counts, in order."""
    n_lines = max(1, min(n_lines, len(tokens)))
    if n_lines == 1:
        return [tokens]
    total = sum(len(t) + 1 for t in tokens)
    lines: list[list[str]] = [[]]
    used = 0
    for tok in tokens:
        if lines[-1] and used >= total * len(lines) / n_lines and len(lines) < n_lines:
            lines.append([])
        lines[-1].append(tok)
        used += len(tok) + 1
    return lines


def axis_bounds(cells: list[GtCell], n: int, axis: str, limit: float, notes: list[str] | None = None) -> list[float]:
    """n+1 strictly increasing band boundaries along one axis ("row": y, "col": x).

    Each inner boundary sits halfway between the content of its two neighbours; the outer
    ones leave half a typical gap of margin, clipped to the image.
    """
    notes = notes if notes is not None else []
    extents = content_extents(cells, n, axis, notes)
    filled = _interpolate(extents, limit, axis, notes)
    known = [e for e in extents if e is not None]
    gaps = [b[0] - a[1] for a, b in zip(known, known[1:]) if b[0] > a[1]]
    pad = max(1.0, statistics.median(gaps) / 2) if gaps else 2.0
    bounds = [max(0.0, filled[0][0] - pad)]
    bounds += [(filled[i - 1][1] + filled[i][0]) / 2 for i in range(1, n)]
    bounds.append(max(min(limit, filled[-1][1] + pad), filled[-1][1]))
    # a spanning cell's text may reach past the content of the outer single cells
    lo_i, hi_i = (1, 3) if axis == "row" else (0, 2)
    boxes = [c.bbox for c in cells if c.bbox is not None]
    if boxes:
        bounds[0] = min(bounds[0], min(b[lo_i] for b in boxes))
        bounds[-1] = max(bounds[-1], max(b[hi_i] for b in boxes))
    return _make_increasing(bounds, filled, axis, notes)


def content_extents(cells: list[GtCell], n: int, axis: str, notes: list[str] | None = None) -> list[Extent | None]:
    """Per row/column, the span of its content: single cells first, else slices of spanning ones."""
    notes = notes if notes is not None else []
    lo_i, hi_i = (1, 3) if axis == "row" else (0, 2)
    single: dict[int, list[Extent]] = {}
    spanning: dict[int, list[Extent]] = {}
    for c in cells:
        if c.bbox is None:
            continue
        start, span = (c.row, c.rowspan) if axis == "row" else (c.col, c.colspan)
        lo, hi = c.bbox[lo_i], c.bbox[hi_i]
        if span == 1:
            single.setdefault(start, []).append((lo, hi))
            continue
        step = (hi - lo) / span  # the spanning box split evenly over the bands it covers
        for k in range(span):
            spanning.setdefault(start + k, []).append((lo + k * step, lo + (k + 1) * step))
    out: list[Extent | None] = []
    for i in range(n):
        source = single.get(i)
        if source is None and i in spanning:
            source = spanning[i]
            notes.append(f"{axis} {i}: extent from spanning cells only")
        out.append((min(e[0] for e in source), max(e[1] for e in source)) if source else None)
    return out


def _interpolate(extents: list[Extent | None], limit: float, axis: str, notes: list[str]) -> list[Extent]:
    """Fill empty rows/columns: evenly between known neighbours, by typical pitch at the ends."""
    n = len(extents)
    known = {i: e for i, e in enumerate(extents) if e is not None}
    if not known:
        notes.append(f"no {axis} has content: bands split the image evenly")
        step = limit / n
        return [(i * step + step / 4, (i + 1) * step - step / 4) for i in range(n)]
    idx = sorted(known)
    size = statistics.median(e[1] - e[0] for e in known.values())
    pitches = [(_mid(known[b]) - _mid(known[a])) / (b - a) for a, b in zip(idx, idx[1:])]
    pitch = statistics.median(pitches) if pitches else size * 1.5
    out: list[Extent] = []
    for i in range(n):
        if i in known:
            out.append(known[i])
            continue
        notes.append(f"{axis} {i}: empty, position interpolated")
        before = [k for k in idx if k < i]
        after = [k for k in idx if k > i]
        half = size / 2
        if before and after:
            a, b = before[-1], after[0]
            ea, eb = known[a], known[b]
            t = (i - a) / (b - a)
            if eb[0] > ea[1]:  # free space between the neighbours: spread evenly in it
                centre = ea[1] + t * (eb[0] - ea[1])
                half = min(size, (eb[0] - ea[1]) / (b - a)) / 2
            else:
                centre = _mid(ea) + t * (_mid(eb) - _mid(ea))
        elif after:
            centre = _mid(known[after[0]]) - (after[0] - i) * pitch
        else:
            centre = _mid(known[before[-1]]) + (i - before[-1]) * pitch
        half = max(half, 0.5)
        out.append((centre - half, centre + half))
    return out


def _make_increasing(bounds: list[float], extents: list[Extent], axis: str, notes: list[str]) -> list[float]:
    """Repair boundaries that do not increase (overlapping content) using content centres."""
    out = list(bounds)
    for i in range(1, len(out) - 1):
        if out[i] <= out[i - 1]:
            notes.append(f"{axis} boundary {i}: contents overlap, split at centres")
            out[i] = (_mid(extents[i - 1]) + _mid(extents[i])) / 2
        if out[i] <= out[i - 1]:
            out[i] = out[i - 1] + 0.5
    if out[-1] <= out[-2]:
        out[-1] = out[-2] + 0.5
    return out


def _mid(e: Extent) -> float:
    return (e[0] + e[1]) / 2
