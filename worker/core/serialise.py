"""Retrieval-ready text from a grid: labelled row lines, a description header, Markdown.

Retrieval fails when a value is separated from its labels. So every body row becomes one
line `Row label; Column label: value; ...` in which each value sits next to its full column
path (and unit, when the unit was stated only in a caption or note), and the row label comes
first with its section path. A plain-text description (caption, pages, column labels, units,
notes) heads every chunk made from these lines. Markdown is offered too, flagged lossy when
the grid has what Markdown cannot hold (spans, several header rows, section rows).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from worker.core.doubt import mark, unsure_slots
from worker.core.headers import (
    PATH_SEP,
    BodyRow,
    body_rows,
    clean,
    column_paths,
    header_rows_of,
    is_value_like,
    label_paths,
)
from worker.core.types import Cell, TableGrid
from worker.core.units import column_units

SERIALISATION_VERSION = 3  # 3: stacked header cells of the same columns read as one label


@dataclass(slots=True)
class TableContext:
    """What surrounds a table on the page: caption above, notes below, the pages it is on."""

    caption: str = ""
    notes: list[str] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None, pages: list[int] | None = None) -> TableContext:
        d = d or {}
        return cls(
            str(d.get("caption") or ""),
            [str(n) for n in d.get("notes") or []],
            list(pages if pages is not None else d.get("pages") or []),
        )


def _numeric_columns(rows: list[BodyRow], n_cols: int) -> list[bool]:
    out = []
    for c in range(n_cols):
        filled = [r.cells[c] for r in rows if r.kind == "data" and r.cells[c]]
        out.append(c > 0 and bool(filled) and sum(is_value_like(v) for v in filled) >= 0.5 * len(filled))
    return out


def _percent_columns(rows: list[BodyRow], n_cols: int) -> list[bool]:
    """Columns whose filled values mostly print a percent sign."""
    out = []
    for c in range(n_cols):
        filled = [r.cells[c] for r in rows if r.kind == "data" and r.cells[c]]
        out.append(bool(filled) and sum(v.rstrip().endswith("%") for v in filled) > 0.5 * len(filled))
    return out


def line_labels(labels: list[str], units: list[dict[str, str] | None]) -> list[str]:
    """Column labels as row lines use them: `Column N` for an unlabelled column, and a unit
    stated only outside the header appended, so the value keeps it wherever the line goes."""
    out = []
    for c, label in enumerate(labels):
        label = label or (f"Column {c + 1}" if c else "")
        u = units[c] if c < len(units) else None
        if u and u["source"] not in ("header", "spanning header"):  # a header label already says it
            label = f"{label} ({u['unit']})" if label else f"({u['unit']})"
        out.append(label)
    return out


SPAN_JOIN = " + "


def _span_label(labels: list[str], first: int, last: int) -> str:
    """The label of a cell spanning columns first..last: its columns' distinct labels joined."""
    out: list[str] = []
    for label in labels[first : last + 1]:
        if label and label not in out:
            out.append(label)
    return SPAN_JOIN.join(out)


def row_line(row: BodyRow, labels: list[str], unsure: frozenset[int] = frozenset()) -> str:
    """`Row label; Column: value; ...` for one data row: the row label first (with its column's
    label when it has one), empty cells left out, a cell spanning columns said once under
    the joined labels of the columns it covers (`Q3 + Q4: Closed`). A value in an `unsure`
    column is marked (`worker.core.doubt`)."""
    n = len(row.cells)
    starts = [c for c in range(n) if row.starts[c] or c == 0]
    ends = [*(s - 1 for s in starts[1:]), n - 1]
    parts = []
    head = row.label
    if head:
        label = _span_label(labels, 0, ends[0])
        parts.append(f"{label}: {head}" if label else head)
    for first, last in zip(starts[1:], ends[1:]):
        text = mark(row.cells[first]) if first in unsure else row.cells[first]
        if text:
            label = _span_label(labels, first, last)
            parts.append(f"{label}: {text}" if label else text)
    return "; ".join(parts)


def _md_escape(text: str) -> str:
    return clean(text).replace("\\", "\\\\").replace("|", "\\|")


def markdown(
    grid: TableGrid,
    header_rows: int,
    labels: list[str],
    rows: list[BodyRow],
    unsure: set[tuple[int, int]] | None = None,
) -> tuple[str, list[str]]:
    """A Markdown table (header = flattened labels) and why it is lossy ([] when it is exact);
    a value in an `unsure` slot is marked (`worker.core.doubt`)."""
    if grid.n_rows == 0 or grid.n_cols == 0:
        return "", []
    reasons = []
    if header_rows > 1:
        reasons.append(f"{header_rows} header rows flattened into one")
    header_cells = [c for c in grid.cells if c.row < header_rows]
    if header_rows == 1 and any(c.colspan > 1 for c in header_cells):
        reasons.append("header cells spanning columns repeated")
    if any(r.kind == "group" for r in rows):
        reasons.append("section rows written in the first column")
    if any(
        c.row >= header_rows
        and (c.rowspan > 1 or c.colspan > 1)
        and not c.is_projected_row_header
        and not (c.colspan == grid.n_cols and c.rowspan == 1)
        for c in grid.cells
    ):
        reasons.append("cells spanning rows or columns repeated")
    lines = ["| " + " | ".join(_md_escape(h) for h in labels) + " |", "|" + "---|" * grid.n_cols]
    for r in rows:
        if r.kind == "group":
            cells = [r.cells[0], *[""] * (grid.n_cols - 1)]
        else:
            cells = [mark(t) if c and (r.row, c) in (unsure or ()) else t for c, t in enumerate(r.cells)]
        lines.append("| " + " | ".join(_md_escape(t) for t in cells) + " |")
    return "\n".join(lines), reasons


def describe(context: TableContext, labels: list[str], units: list[dict[str, str] | None], table_id: str = "") -> str:
    """The plain-text header of a table and of each of its chunks."""
    title = context.caption or (f"Table {table_id}" if table_id else "Table")
    lines = [f"Table: {title}"]
    if context.pages:
        pages = sorted(set(context.pages))
        lines.append(f"Page: {pages[0]}" if len(pages) == 1 else f"Pages: {pages[0]}-{pages[-1]}")
    shown = [label or ("(row label)" if c == 0 else f"Column {c + 1}") for c, label in enumerate(labels)]
    if shown:
        lines.append("Columns: " + " | ".join(shown))
    with_units = [f"{shown[c]}: {u['unit']}" for c, u in enumerate(units) if u]
    if with_units:
        lines.append("Units: " + "; ".join(with_units))
    if context.notes:
        lines.append("Notes: " + " ".join(context.notes))
    return "\n".join(lines)


def serialisations(grid: TableGrid, context: TableContext | None = None, table_id: str = "") -> dict[str, Any]:
    """Everything a table's JSON stores for retrieval (and chunking re-reads from it)."""
    context = context or TableContext()
    header_rows, header_source = header_rows_of(grid)
    paths = column_paths(grid, header_rows)
    labels = [PATH_SEP.join(p) for p in label_paths(grid, header_rows)]
    rows = body_rows(grid, header_rows)
    units = column_units(
        paths, _numeric_columns(rows, grid.n_cols), context.caption, context.notes, _percent_columns(rows, grid.n_cols)
    )
    used = line_labels(labels, units)
    unsure = unsure_slots(grid, header_rows)
    lines = [
        row_line(r, used, frozenset(c for c in range(1, grid.n_cols) if (r.row, c) in unsure))
        if r.kind == "data"
        else ""
        for r in rows
    ]
    md, lossy = markdown(grid, header_rows, labels, rows, unsure)
    return {
        "version": SERIALISATION_VERSION,
        "header_rows": header_rows,
        "header_source": header_source,
        "column_paths": paths,
        "column_labels": labels,
        "units": [{"col": c, "label": labels[c], **u} for c, u in enumerate(units) if u],
        "caption": context.caption,
        "notes": list(context.notes),
        "pages": list(context.pages),
        "description": describe(context, labels, units, table_id),
        "rows": [
            {"row": r.row, "kind": r.kind, "group": r.group, "block": r.block, "section": r.section, "line": line}
            for r, line in zip(rows, lines)
        ],
        "row_lines": [line for line in lines if line],
        "markdown": md,
        "markdown_lossy": bool(lossy),
        "markdown_lossy_reasons": lossy,
    }


def rows_text(ser: dict[str, Any]) -> str:
    """The `<table_id>.rows.txt` file: the description, a blank line, one line per data row."""
    return str(ser["description"]) + "\n\n" + "\n".join(ser["row_lines"]) + "\n"


def grid_from_dict(d: dict[str, Any]) -> TableGrid:
    """A grid back from the `grid` object of a table's JSON (TableGrid.to_dict)."""
    cells = [
        Cell(
            int(c["row"]),
            int(c["col"]),
            int(c.get("rowspan", 1)),
            int(c.get("colspan", 1)),
            str(c.get("text") or ""),
            tuple(c["bbox"]) if c.get("bbox") else None,
            bool(c.get("is_header")),
            bool(c.get("is_projected_row_header")),
            float(c.get("confidence", 1.0)),
        )
        for c in d.get("cells", [])
    ]
    return TableGrid(
        int(d["n_rows"]),
        int(d["n_cols"]),
        cells,
        header_rows=int(d.get("header_rows", 0)),
        confidence=float(d.get("confidence", 1.0)),
        repairs=list(d.get("repairs", [])),
    )
