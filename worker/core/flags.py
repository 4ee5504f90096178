"""Complexity flags: which tables a detector is likely to get wrong and a person (or a vision
model) should look at. Rules are plain and listed as reasons so a reviewer can trust them."""

from __future__ import annotations

from typing import Any

from worker.core.types import TableGrid


def complexity_flags(grid: TableGrid, *, rotated: bool = False, low_confidence: float = 0.6) -> dict[str, Any]:
    spans = sum(1 for c in grid.cells if c.rowspan > 1 or c.colspan > 1)
    prh = sum(1 for c in grid.cells if c.is_projected_row_header)
    slots = grid.n_rows * grid.n_cols
    empty = sum(c.rowspan * c.colspan for c in grid.cells if not c.text)
    flags = {
        "spanning_cells": spans,
        "header_rows": grid.header_rows,
        "projected_row_headers": prh,
        "rotated": rotated,
        "confidence": grid.confidence,
        "empty_fraction": round(empty / slots, 3) if slots else 1.0,
        "repairs": len(grid.repairs),
    }
    reasons = []
    if spans:
        reasons.append(f"{spans} spanning cell(s)")
    if grid.header_rows > 1:
        reasons.append(f"{grid.header_rows}-row header")
    if prh:
        reasons.append(f"{prh} projected row header(s)")
    if rotated:
        reasons.append("rotated table")
    if grid.confidence < low_confidence:
        reasons.append(f"low confidence {grid.confidence:.2f}")
    if slots and empty / slots > 0.5:
        reasons.append("more than half the cells empty")
    if grid.repairs:
        reasons.append(f"{len(grid.repairs)} reconstruction repair(s)")
    flags["reasons"] = reasons
    flags["is_complex"] = bool(reasons)
    return flags
