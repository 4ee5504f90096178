"""A table's description for retrieval: what it holds, in a few lines, to embed instead of its rows.

A dataset-sized table is found by what it is about (caption, column header paths, units,
how many rows, which rows) and then answered by a query on its store view; its hundreds of
near-identical row chunks would only crowd retrieval. The description is built from what
extraction knows, with no model; an LLM summary may be added beside it, never instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from worker.core.columns import ROW_GROUP, TypedTable

SAMPLE_ROWS = 2
MAX_LABEL = 80


def _short(text: Any, n: int = MAX_LABEL) -> str:
    t = " ".join(str(text).split())
    return t if len(t) <= n else t[: n - 1] + "…"


def describe_table(
    typed: TypedTable,
    *,
    table_id: str,
    caption: str = "",
    pages: Sequence[int] = (),
    notes: Sequence[str] = (),
    view: str | None = None,
) -> str:
    """Caption, pages, row count and row-label range, row groups, columns with type and unit,
    a few sample rows, notes and the store view to query."""
    lines = [f"Table {table_id}: {_short(caption, 300)}" if caption else f"Table {table_id}"]
    if pages:
        p = sorted(set(pages))
        lines.append(f"Page: {p[0]}" if len(p) == 1 else f"Pages: {p[0]}-{p[-1]}")
    n = len(typed.rows)
    rows_line = f"Rows: {n}"
    if typed.row_label_column and n:
        labels = [v for v in typed.values(typed.row_label_column) if v]
        if labels:
            rows_line += f", from {_short(labels[0])!r} to {_short(labels[-1])!r}"
    lines.append(rows_line)
    if any(c.name == ROW_GROUP for c in typed.columns):
        groups: list[str] = []
        for g in typed.values(ROW_GROUP):
            if g and g not in groups:
                groups.append(g)
        if groups:
            shown = ", ".join(_short(g, 40) for g in groups[:8])
            lines.append(f"Row groups: {shown}" + (f" (+{len(groups) - 8} more)" if len(groups) > 8 else ""))
    cols = []
    for c in typed.columns:
        if c.role not in ("label", "value"):
            continue
        label = " / ".join(c.path) or f"column {c.source_col + 1}"
        kind = "number" if c.kind in ("integer", "number") else "text"
        extra = f", {c.unit}" if c.unit else ""
        cols.append(f"{_short(label)} [{c.name}: {kind}{extra}]")
    if cols:
        lines.append("Columns: " + "; ".join(cols))
    samples = []
    shown_cols = [(i, c) for i, c in enumerate(typed.columns) if c.role in ("label", "value", "group")]
    for row in typed.rows[:SAMPLE_ROWS]:
        parts = [f"{c.name}={_short(row[i], 40)}" for i, c in shown_cols if row[i] is not None]
        if parts:
            samples.append("(" + ", ".join(parts) + ")")
    if samples:
        lines.append("Sample rows: " + " ".join(samples))
    if notes:
        lines.append("Notes: " + _short(" ".join(notes), 400))
    if view:
        lines.append(f'SQL view: "{view}"')
    return "\n".join(lines)
