"""Complexity flags: which tables a detector is likely to get wrong and a person (or a vision
model) should look at.

Each rule is plain and, when it fires, adds its weight to a score and a sentence to the
reasons, so a reviewer sees why a table was sent to the vision reader. `needs_vision` is
`score >= threshold`; weights and thresholds come from settings (`FlagSettings.rules()`, `settings.flags`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from worker.core.sanitise import is_routine_repair
from worker.core.types import TableGrid, Word

# Rule names, in the order reasons are listed. The defaults send merged cells, multi-level
# headers, low confidence and repaired reconstructions to the reader (what detectors get
# wrong most often), and totals that do not add up (a misread digit); the milder signs need a
# second one before a table counts as hard.
DEFAULT_WEIGHTS: dict[str, float] = {
    "no_structure": 2.0,
    "spanning_cells": 1.0,
    "multi_row_header": 1.0,
    "projected_row_headers": 0.5,
    "low_confidence": 1.0,
    "low_ocr_confidence": 1.0,
    "rotated": 0.5,
    "many_empty_cells": 0.5,
    "repairs": 1.0,
    "totals_mismatch": 1.0,
}
RULES = tuple(DEFAULT_WEIGHTS)


@dataclass(frozen=True, slots=True)
class FlagRules:
    """Weights per rule (0 switches a rule off), the score that means `needs_vision`, limits."""

    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    threshold: float = 1.0
    low_confidence: float = 0.6
    low_ocr_confidence: float = 0.6
    empty_fraction: float = 0.5
    min_header_rows: int = 2

    def __post_init__(self) -> None:
        unknown = sorted(set(self.weights) - set(RULES))
        if unknown:
            raise ValueError(f"unknown flag rule(s) {unknown}; known: {', '.join(RULES)}")

    def weight(self, rule: str) -> float:
        return float(self.weights.get(rule, DEFAULT_WEIGHTS[rule]))


def ocr_confidence(words: Iterable[Word]) -> float | None:
    """Mean OCR confidence of the words that have one (None for a text layer: nothing to doubt)."""
    values = [w.confidence for w in words if w.confidence is not None]
    return round(sum(values) / len(values), 4) if values else None


def complexity_flags(
    grid: TableGrid,
    *,
    rotated: bool = False,
    words: Iterable[Word] = (),
    rules: FlagRules | None = None,
    totals_mismatches: Sequence[str] = (),
) -> dict[str, Any]:
    """Measurements, fired rules with reasons, score and `needs_vision` for one table.

    `totals_mismatches`: one line per printed total that does not add up (worker.core.totals),
    the confident wrong digit no other rule sees."""
    rules = rules or FlagRules()
    spans = sum(1 for c in grid.cells if c.rowspan > 1 or c.colspan > 1)
    prh = sum(1 for c in grid.cells if c.is_projected_row_header)
    slots = grid.n_rows * grid.n_cols
    empty = sum(c.rowspan * c.colspan for c in grid.cells if not c.text)
    empty_fraction = round(empty / slots, 3) if slots else 1.0
    ocr = ocr_confidence(words)
    doubtful = sum(1 for r in grid.repairs if not is_routine_repair(r))
    checks: list[tuple[str, bool, str]] = [
        ("no_structure", slots == 0, "no rows or columns recognised"),
        ("spanning_cells", spans > 0, f"{spans} spanning cell(s)"),
        ("multi_row_header", grid.header_rows >= rules.min_header_rows, f"{grid.header_rows}-row header"),
        ("projected_row_headers", prh > 0, f"{prh} projected row header(s)"),
        (
            "low_confidence",
            slots > 0 and grid.confidence < rules.low_confidence,
            f"low structure confidence {grid.confidence:.2f} (< {rules.low_confidence:g})",
        ),
        (
            "low_ocr_confidence",
            ocr is not None and ocr < rules.low_ocr_confidence,
            f"low OCR confidence {ocr or 0:.2f} (< {rules.low_ocr_confidence:g})",
        ),
        ("rotated", rotated, "rotated table"),
        (
            "many_empty_cells",
            slots > 0 and empty_fraction > rules.empty_fraction,
            f"{empty_fraction:.0%} of cells empty (> {rules.empty_fraction:.0%})",
        ),
        ("repairs", doubtful > 0, f"{doubtful} reconstruction repair(s)"),
        (
            "totals_mismatch",
            bool(totals_mismatches),
            f"{len(totals_mismatches)} total(s) not adding up: " + "; ".join(totals_mismatches[:3]),
        ),
    ]
    fired: list[dict[str, Any]] = [
        {"rule": name, "weight": rules.weight(name), "reason": reason}
        for name, hit, reason in checks
        if hit and rules.weight(name) > 0
    ]
    score = round(sum(f["weight"] for f in fired), 3)
    return {
        "spanning_cells": spans,
        "header_rows": grid.header_rows,
        "projected_row_headers": prh,
        "rotated": rotated,
        "confidence": grid.confidence,
        "ocr_confidence": ocr,
        "empty_fraction": empty_fraction,
        "repairs": len(grid.repairs),
        "rules": fired,
        "reasons": [f["reason"] for f in fired],
        "score": score,
        "threshold": rules.threshold,
        "needs_vision": score >= rules.threshold,
        "is_complex": bool(fired),
    }
