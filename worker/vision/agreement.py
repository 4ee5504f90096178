"""How far the vision read and the detector's grid agree, and where they differ.

TEDS (with text) and TEDS-struct come from worker.metrics.teds (`table-recognition-metric`,
after normalising both sides), so the numbers mean what the evaluation's numbers mean. The
cell list says where they disagree: a reviewer opens the two tables at those cells. TEDS is
skipped (with the reason) when the metric is not installed or the tables are too large for
its tree edit distance to finish quickly; the cell comparison is always there.
"""

from __future__ import annotations

import logging
from typing import Any

from worker.core.html_parse import html_to_grid
from worker.core.types import Cell, TableGrid

logger = logging.getLogger(__name__)

MAX_TEDS_CELLS = 1500  # the tree edit distance grows ~cubically; beyond this it takes seconds to minutes
MAX_DIFFERENCES = 50


def _key(c: Cell) -> tuple[int, int, int, int]:
    return (c.row, c.col, c.rowspan, c.colspan)


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def cell_differences(vision: TableGrid, detector: TableGrid) -> tuple[float, list[dict[str, Any]]]:
    """Share of cells (both sides) that match in position, span and text, and the cells that don't."""
    det = {(c.row, c.col): c for c in detector.cells}
    vis = {(c.row, c.col): c for c in vision.cells}
    diffs: list[dict[str, Any]] = []
    matched = 0
    for anchor in sorted(set(det) | set(vis)):
        v, d = vis.get(anchor), det.get(anchor)
        if v and d and _key(v) == _key(d) and _norm(v.text) == _norm(d.text):
            matched += 1
            continue
        what = (
            "missing in vision read"
            if v is None
            else "missing in detector grid"
            if d is None
            else ("span differs" if _key(v) != _key(d) else "text differs")
        )
        diffs.append({"row": anchor[0], "col": anchor[1], "what": what, "vision": _cell(v), "detector": _cell(d)})
    total = len(vision.cells) + len(detector.cells)
    score = 2 * matched / total if total else 1.0
    return round(score, 4), diffs


def _cell(c: Cell | None) -> dict[str, Any] | None:
    return None if c is None else {"rowspan": c.rowspan, "colspan": c.colspan, "text": c.text[:200]}


def agreement(vision_html: str, vision: TableGrid, detector_html: str | None) -> dict[str, Any]:
    """Shapes, TEDS, TEDS-struct, cell match share and the differing cells (first 50)."""
    out: dict[str, Any] = {"vision_shape": [vision.n_rows, vision.n_cols]}
    try:
        detector = html_to_grid(detector_html or "")
    except ValueError:
        detector = TableGrid(0, 0, [])
    out["detector_shape"] = [detector.n_rows, detector.n_cols]
    out["same_shape"] = out["vision_shape"] == out["detector_shape"]
    out["cell_match"], diffs = cell_differences(vision, detector)
    out["differences"] = diffs[:MAX_DIFFERENCES]
    out["n_differences"] = len(diffs)
    out.update(_teds(vision_html, detector_html or "", len(vision.cells) + len(detector.cells)))
    return out


def _teds(vision_html: str, detector_html: str, n_cells: int) -> dict[str, Any]:
    if n_cells > 2 * MAX_TEDS_CELLS:
        return {"teds": None, "teds_struct": None, "teds_skipped": f"{n_cells} cells: too large for TEDS"}
    try:
        from worker.metrics.teds import teds

        return {
            "teds": round(teds(vision_html, detector_html), 4),
            "teds_struct": round(teds(vision_html, detector_html, structure_only=True), 4),
        }
    except ImportError as exc:
        return {
            "teds": None,
            "teds_struct": None,
            "teds_skipped": f"TEDS needs `table-recognition-metric` and `lxml` ({exc.name} missing)",
        }
    except Exception as exc:  # the metric is third-party code: a failure must not lose the read
        logger.warning("TEDS failed: %s", exc)
        return {"teds": None, "teds_struct": None, "teds_skipped": f"TEDS failed: {type(exc).__name__}: {exc}"}
