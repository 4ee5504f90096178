"""Numbers that add up, for one table: glyph repairs, the totals check, and a second reading of
the doubted cells when an OCR'd total does not add up (docs/numbers.md).

Clean tables cost nothing beyond the arithmetic: the second reader runs only on the cells of a
total that fails (and on blank or unreadable cells that kept a total from being checked), and
only when the text came from OCR (a text layer has no second reading).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from worker.core.glyphs import repair_glyphs
from worker.core.totals import Reading, TotalsReport, cells_to_reread, check_totals, choose_readings
from worker.core.types import BBox, TableGrid, Word
from worker.pipeline.stages import Stages
from worker.settings import Settings


@dataclass
class NumbersResult:
    """The grid after repairs and decisions, the totals record (None: no total labelled), the
    glyph repairs, and one line per mismatch for the flags."""

    grid: TableGrid
    totals: dict[str, Any] | None = None
    repairs: list[dict[str, Any]] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)


def cell_text_box(cell_box: BBox, words: list[Word]) -> BBox:
    """The box around the words whose centres lie in the cell (the cell itself when none do)."""
    x0, y0, x1, y1 = cell_box
    inside = [
        w.bbox for w in words if x0 <= (w.bbox[0] + w.bbox[2]) / 2 <= x1 and y0 <= (w.bbox[1] + w.bbox[3]) / 2 <= y1
    ]
    if not inside:
        return cell_box
    return (min(b[0] for b in inside), min(b[1] for b in inside), max(b[2] for b in inside), max(b[3] for b in inside))


def _cell_confidence(cell_box: BBox, words: list[Word]) -> float | None:
    x0, y0, x1, y1 = cell_box
    confs = [
        w.confidence
        for w in words
        if w.confidence is not None
        and x0 <= (w.bbox[0] + w.bbox[2]) / 2 <= x1
        and y0 <= (w.bbox[1] + w.bbox[3]) / 2 <= y1
    ]
    return min(confs) if confs else None


def _reader(stages: Stages, settings: Settings, dpi: int) -> Any:
    if stages.cell_reader is None:
        from worker.engines.ocr import load_cell_reader

        engine = load_cell_reader(settings.ocr, dpi)
        stages.cell_reader = engine.read_cells if engine is not None else None
    return stages.cell_reader


def _mismatch_line(check: Any) -> str:
    return f"{check.label or 'total'} reads {check.printed:g}, its members sum to {check.computed:g}"


def check_numbers(
    grid: TableGrid,
    *,
    text_source: str,
    words: list[Word],
    crop: Image.Image,
    stages: Stages,
    settings: Settings,
    dpi: int,
    caption: str = "",
    notes: list[str] | None = None,
) -> NumbersResult:
    """Repair glyph confusions (OCR only), check the totals and, where an OCR'd total fails,
    read its cells again and keep the readings that make the sums agree."""
    result = NumbersResult(grid)
    if text_source == "ocr":
        result.repairs = repair_glyphs(grid)
    if not settings.flags.totals_check:
        return result
    notes = notes or []
    report: TotalsReport = check_totals(grid, caption=caption, notes=notes)
    decided: list[dict[str, Any]] = []
    reader_name = None
    doubted = report.status not in ("agree", "none") or bool(report.unread)
    if doubted and text_source == "ocr" and settings.ocr.cell_reader not in ("", "none"):
        reader = _reader(stages, settings, dpi)
        cells = {(c.row, c.col): c for c in grid.cells}
        slots = [s for s in cells_to_reread(report) if s in cells and cells[s].bbox is not None]
        if reader is not None and slots:
            reader_name = settings.ocr.cell_reader
            boxes = [cell_text_box(cells[s].bbox, words) for s in slots]  # type: ignore[arg-type]
            second = reader(crop, boxes)
            readings: dict[tuple[int, int], list[Reading]] = {}
            for s, alt in zip(slots, second):
                if alt is not None:
                    first = Reading(cells[s].text, "ocr", _cell_confidence(cells[s].bbox, words))  # type: ignore[arg-type]
                    readings[s] = [first, alt]
            decision = choose_readings(grid, readings, caption=caption, notes=notes)
            grid, report, decided = decision.grid, decision.report, decision.decided
    result.grid = grid
    if report.checks:
        result.totals = report.to_dict() | {"decided": decided, "second_reader": reader_name}
    result.mismatches = [_mismatch_line(c) for c in report.mismatches]
    return result
