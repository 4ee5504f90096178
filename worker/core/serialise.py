"""Retrieval-ready text from a grid: flattened header labels, labelled rows, Markdown.

A value is only useful to retrieval next to its labels. Multi-level headers are flattened
to one path per column (`2024 / Revenue`), spanning labels are repeated into every column
or row they cover, and row-group labels (projected row headers) are carried into each row.
"""

from __future__ import annotations

from typing import Any

from worker.core.types import Cell, TableGrid


def _slot_cells(grid: TableGrid) -> list[list[Cell]]:
    slots: list[list[Cell | None]] = [[None] * grid.n_cols for _ in range(grid.n_rows)]
    for cell in grid.cells:
        for r, c in cell.slots():
            slots[r][c] = cell
    return slots  # type: ignore[return-value]


def column_labels(grid: TableGrid) -> list[str]:
    """One label per column: the header texts above it, top to bottom, joined with ' / '."""
    slots = _slot_cells(grid)
    labels = []
    for c in range(grid.n_cols):
        parts: list[str] = []
        seen: set[int] = set()
        for r in range(grid.header_rows):
            cell = slots[r][c]
            if id(cell) in seen or not cell.text:
                continue
            seen.add(id(cell))
            if not parts or parts[-1] != cell.text:
                parts.append(cell.text)
        labels.append(" / ".join(parts))
    return labels


def row_records(grid: TableGrid) -> list[dict[str, Any]]:
    """Body rows as {row, group, label, values[(column label, text)]}; spans repeated."""
    slots = _slot_cells(grid)
    labels = column_labels(grid)
    group = ""
    out = []
    for r in range(grid.header_rows, grid.n_rows):
        row = slots[r]
        if row and all(cell is row[0] for cell in row) and (row[0].is_projected_row_header or grid.n_cols > 1):
            group = row[0].text
            continue
        values = [(labels[c] or f"Column {c + 1}", row[c].text) for c in range(grid.n_cols)]
        out.append({"row": r, "group": group, "label": row[0].text if row else "", "values": values})
    return out


def row_lines(grid: TableGrid) -> list[str]:
    """One `Label: value; Label: value` line per body row, the row label first."""
    lines = []
    for rec in row_records(grid):
        parts = [f"{k}: {v}" for k, v in rec["values"] if v]
        if rec["group"]:
            parts.insert(0, f"Group: {rec['group']}")
        lines.append("; ".join(parts))
    return lines


def _md_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown(grid: TableGrid) -> tuple[str, bool]:
    """Markdown table and whether it is lossy (spans repeated, header levels flattened)."""
    if grid.n_rows == 0 or grid.n_cols == 0:
        return "", False
    lossy = any(c.rowspan > 1 or c.colspan > 1 for c in grid.cells) or grid.header_rows > 1
    slots = _slot_cells(grid)
    if grid.header_rows:
        head = column_labels(grid)
        body_start = grid.header_rows
    else:
        head = [""] * grid.n_cols
        body_start = 0
    lines = ["| " + " | ".join(_md_escape(h) for h in head) + " |",
             "|" + "---|" * grid.n_cols]
    for r in range(body_start, grid.n_rows):
        lines.append("| " + " | ".join(_md_escape(slots[r][c].text) for c in range(grid.n_cols)) + " |")
    return "\n".join(lines), lossy


def serialisations(grid: TableGrid) -> dict[str, Any]:
    """Everything the per-table JSON stores for retrieval."""
    md, lossy = markdown(grid)
    return {"column_labels": column_labels(grid), "markdown": md, "markdown_lossy": lossy,
            "row_lines": row_lines(grid)}
