"""Plain data the core works on: words, structure objects, cells and the table grid."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

BBox = tuple[float, float, float, float]

# The structure model's labels, exactly as it emits them.
TABLE = "table"
COLUMN = "table column"
ROW = "table row"
COLUMN_HEADER = "table column header"
PROJECTED_ROW_HEADER = "table projected row header"
SPANNING_CELL = "table spanning cell"
STRUCTURE_LABELS = (TABLE, COLUMN, ROW, COLUMN_HEADER, PROJECTED_ROW_HEADER, SPANNING_CELL)


@dataclass(frozen=True, slots=True)
class Word:
    """One word with its box in table-crop pixels; confidence is OCR's (None for a text layer)."""

    text: str
    bbox: BBox
    confidence: float | None = None


@dataclass(frozen=True, slots=True)
class StructureObject:
    """One object as the structure model emits it: label, score, box in table-crop pixels."""

    label: str
    score: float
    bbox: BBox


@dataclass(frozen=True, slots=True)
class RulingLines:
    """Positions of the ruling lines drawn on a table crop, in crop pixels: `h` the y of each
    horizontal rule, `v` the x of each vertical one. Found by an image step outside the core.

    `h_runs` and `v_runs`, when known, give each rule's drawn stretches (x from-to for a
    horizontal rule, y for a vertical one), in the order of `h` and `v`: where a rule stops,
    a cell spans across it (`worker.core.lattice`)."""

    h: tuple[float, ...] = ()
    v: tuple[float, ...] = ()
    h_runs: tuple[tuple[tuple[float, float], ...], ...] = ()
    v_runs: tuple[tuple[tuple[float, float], ...], ...] = ()


@dataclass(slots=True)
class Cell:
    """One grid cell; (row, col) is its top-left slot, spans count grid rows/columns covered."""

    row: int
    col: int
    rowspan: int = 1
    colspan: int = 1
    text: str = ""
    bbox: BBox | None = None
    is_header: bool = False
    is_projected_row_header: bool = False
    confidence: float = 1.0

    def slots(self) -> list[tuple[int, int]]:
        return [
            (r, c) for r in range(self.row, self.row + self.rowspan) for c in range(self.col, self.col + self.colspan)
        ]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["bbox"] = list(self.bbox) if self.bbox is not None else None
        return d


@dataclass(slots=True)
class TableGrid:
    """A rectangular grid: every slot of n_rows x n_cols belongs to exactly one cell."""

    n_rows: int
    n_cols: int
    cells: list[Cell]
    header_rows: int = 0
    row_bboxes: list[BBox] = field(default_factory=list)
    col_bboxes: list[BBox] = field(default_factory=list)
    confidence: float = 1.0
    repairs: list[str] = field(default_factory=list)
    unassigned_words: list[Word] = field(default_factory=list)

    def owner_map(self) -> list[list[int]]:
        """Index of the owning cell for every slot; raises if the grid is not a partition."""
        owner = [[-1] * self.n_cols for _ in range(self.n_rows)]
        for i, cell in enumerate(self.cells):
            for r, c in cell.slots():
                if not (0 <= r < self.n_rows and 0 <= c < self.n_cols):
                    raise ValueError(f"cell at ({cell.row},{cell.col}) leaves the grid")
                if owner[r][c] != -1:
                    raise ValueError(f"slot ({r},{c}) claimed twice")
                owner[r][c] = i
        for r, row in enumerate(owner):
            for c, o in enumerate(row):
                if o == -1:
                    raise ValueError(f"slot ({r},{c}) belongs to no cell")
        return owner

    def sorted_cells(self) -> list[Cell]:
        return sorted(self.cells, key=lambda c: (c.row, c.col))

    def shape_signature(self) -> list[tuple[int, int, int, int]]:
        """(row, col, rowspan, colspan) of every cell, sorted: what 'same grid' means in tests."""
        return sorted((c.row, c.col, c.rowspan, c.colspan) for c in self.cells)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_rows": self.n_rows,
            "n_cols": self.n_cols,
            "header_rows": self.header_rows,
            "confidence": round(self.confidence, 4),
            "repairs": list(self.repairs),
            "cells": [c.to_dict() for c in self.sorted_cells()],
            "unassigned_words": [{"text": w.text, "bbox": list(w.bbox)} for w in self.unassigned_words],
        }
