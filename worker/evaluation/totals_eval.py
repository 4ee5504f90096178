"""How the totals check does on ground truth and on OCR (`tablesight eval totals`, docs/numbers.md).

Per table of the evaluation set:
- on the ground-truth text: which totals are found and whether they agree. A mismatch here is
  either a rule bug (a false alarm) or a table whose own printed total does not add up; each is
  listed so a person can tell which.
- on OCR words (tesseract on the table image, rules erased, oracle structure at level none, as
  `eval oracle --levels none --words ocr` does; optionally through a seeded scanner look first):
  each check that does not agree is compared with the ground-truth text of its cells. A real OCR
  error has some total or member read differently from the truth; a false alarm has every
  cell right. Then the second reader re-reads those cells and `choose_readings` decides:
  fixed (every decided cell now equals the truth), wrong decision (a decided cell differs from
  the truth), or not fixed.
- misses: numbers of ground-truth-agreeing checks that OCR read wrong while the OCR check still
  agreed (or could not be made because a cell no longer parsed).
"""

from __future__ import annotations

import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

from worker.core.glyphs import repair_glyphs
from worker.core.reconstruct import reconstruct
from worker.core.totals import (
    AGREE,
    MISMATCH,
    Reading,
    TotalsReport,
    cell_value,
    cells_to_reread,
    check_totals,
    choose_readings,
)
from worker.core.types import Cell, TableGrid
from worker.evaluation.dataset import GtTable, load_tables
from worker.evaluation.oracle_eval import oracle_inputs, table_key

DPI = 144  # the evaluation images' render resolution (see the data README)


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def gt_grid(table: GtTable) -> TableGrid:
    cells = [Cell(c.row, c.col, c.rowspan, c.colspan, c.text, is_header=c.is_header) for c in table.cells]
    return TableGrid(table.n_rows, table.n_cols, cells, header_rows=table.header_rows)


def _texts(grid: TableGrid) -> dict[tuple[int, int], str]:
    return {(c.row, c.col): c.text for c in grid.cells}


def _ocr_grid(table: GtTable, noise_seed: int | None) -> tuple[TableGrid, Any, list[Any]]:
    """Oracle structure (level none) + tesseract words on the (optionally scan-noised) image."""
    from PIL import Image

    from models.ocr import ocr_words
    from models.rules import find_ruling_lines

    with Image.open(table.image_path) as im:
        image = im.convert("RGB")
    if noise_seed is not None:
        from worker.devtools.samples import scan_noise

        image = scan_noise(image, noise_seed).convert("RGB")
    min_len = max(10, DPI // 5)
    words = ocr_words(image, rule_min_px=min_len, threads=1)
    objects, _, size = oracle_inputs(table, "none", 0)
    grid = reconstruct(objects, words, image_size=size, lines=find_ruling_lines(image, min_len))
    return grid, image, words


def _involved(report: TotalsReport, status: str) -> list[Any]:
    return [c for c in report.checks if c.status == status]


def evaluate_table(table: GtTable, words: str, noise_seed: int | None, reader: str) -> dict[str, Any]:
    """One table's figures (see the module docstring); plain JSON."""
    gt = gt_grid(table)
    gt_report = check_totals(gt)
    row: dict[str, Any] = {
        "table": table_key(table),
        "gt": {k: gt_report.to_dict()[k] for k in ("status", "checked", "agreed", "mismatched", "unverified")},
        "gt_mismatches": [f"{c.label}: printed {c.printed:g}, sum {c.computed:g}" for c in gt_report.mismatches],
    }
    if words != "ocr" or not gt_report.checks:
        return row
    from worker.engines.ocr import load_cell_reader
    from worker.pipeline.numbers import cell_text_box
    from worker.settings import OcrSettings

    grid, image, ocr = _ocr_grid(table, noise_seed)
    if (grid.n_rows, grid.n_cols) != (gt.n_rows, gt.n_cols):
        row["ocr"] = {"skipped": f"grid {grid.n_rows}x{grid.n_cols} != ground truth {gt.n_rows}x{gt.n_cols}"}
        return row
    repairs = repair_glyphs(grid)
    truth = {k: _norm(v) for k, v in _texts(gt).items()}
    report = check_totals(grid)
    read = _texts(grid)
    failing = [c for c in report.checks if c.status != AGREE]
    real = [c for c in failing if any(_norm(read.get(s, "")) != truth.get(s) for s in (c.total, *c.members))]
    gt_status = {(c.axis, c.total): c.status for c in gt_report.checks}
    flagged = [c for c in failing if c.status == MISMATCH]
    out: dict[str, Any] = {
        "checked": len(report.checks),
        "agreed": report.count(AGREE),
        "mismatched": report.count(MISMATCH),
        "unverified": report.count("unverified"),
        "failing": len(failing),
        "failing_real_ocr_error": len(real),
        "flagged_real_ocr_error": sum(1 for c in flagged if c in real),
        "unverified_where_gt_agrees": sum(
            1 for c in failing if c.status != MISMATCH and gt_status.get((c.axis, c.total)) == AGREE
        ),
        "false_alarms": [c.label for c in flagged if c not in real],
        "glyph_repairs": len(repairs),
        "glyph_repairs_right": sum(1 for r in repairs if _norm(r["to"]) == truth.get((r["row"], r["col"]))),
    }
    # a ground-truth-agreeing total whose cells OCR got wrong (by value): the check either could
    # not be made (a cell blank or unreadable: "unchecked"), or agreed all the same ("silent")
    by_total = {(c.axis, c.total): c for c in report.checks}
    unchecked = silent = 0
    for c in gt_report.checks:
        if c.status != AGREE:
            continue
        cells_of = (c.total, *c.members)
        if not any(cell_value(read.get(s, "")) != cell_value(truth.get(s, "")) for s in cells_of):
            continue
        mine = by_total.get((c.axis, c.total))
        unchecked += mine is None
        silent += mine is not None and mine.status == AGREE
    out["misread_unchecked"] = unchecked
    out["misread_silent"] = silent
    out["agreed_after"], out["mismatched_after"] = report.count(AGREE), report.count(MISMATCH)
    engine = load_cell_reader(OcrSettings(cell_reader=reader), DPI)
    load = engine.read_cells if engine is not None else None
    if (failing or report.unread) and load is not None:
        cells = {(c.row, c.col): c for c in grid.cells}
        slots = [s for s in cells_to_reread(report) if s in cells and cells[s].bbox is not None]
        boxes = [cell_text_box(cells[s].bbox, ocr) for s in slots]  # type: ignore[arg-type]
        second = load(image, boxes) if slots else []
        readings = {s: [Reading(cells[s].text, "ocr"), alt] for s, alt in zip(slots, second) if alt is not None}
        decision = choose_readings(grid, readings)
        decided = decision.decided
        out["reread_cells"] = len(slots)
        out["unread_before"] = len(report.unread)
        out["unread_filled"] = sum(1 for d in decided if (d["row"], d["col"]) in set(report.unread))
        out["second_differs"] = sum(1 for s, alt in zip(slots, second) if alt and _norm(alt.text) != _norm(read[s]))
        out["decided"] = len(decided)
        out["decided_right"] = sum(1 for d in decided if _norm(d["text"]) == truth.get((d["row"], d["col"])))
        out["agreed_after"] = decision.report.count(AGREE)
        out["mismatched_after"] = decision.report.count(MISMATCH)
        after = _texts(decision.grid)
        out["fixed_checks"] = sum(
            1 for c in real if all(_norm(after.get(s, "")) == truth.get(s) for s in (c.total, *c.members))
        )
    row["ocr"] = out
    return row


def run_totals_eval(
    data_dir: Path,
    words: str = "gt",
    limit: int | None = None,
    noise_seed: int | None = None,
    reader: str = "tesseract-digits",
    progress: bool = True,
) -> dict[str, Any]:
    """Every table of `data_dir` (see the module docstring); summary and per-table rows."""
    from tqdm import tqdm

    started = time.perf_counter()
    tables, skipped = load_tables(Path(data_dir), limit=limit)
    rows = [
        evaluate_table(t, words, noise_seed, reader)
        for t in tqdm(tables, file=sys.stderr, disable=not progress, desc="totals eval", unit="table")
    ]
    return {
        "data_dir": str(data_dir),
        "words": words,
        "noise_seed": noise_seed,
        "reader": reader,
        "n_tables": len(tables),
        "skipped": skipped,
        "summary": summarise(rows),
        "tables": rows,
        "seconds": round(time.perf_counter() - started, 1),
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    with_totals = [r for r in rows if r["gt"]["checked"]]
    gt = {k: sum(r["gt"][k] for r in rows) for k in ("checked", "agreed", "mismatched", "unverified")}
    out: dict[str, Any] = {"tables": len(rows), "tables_with_totals": len(with_totals), "gt": gt}
    out["gt_mismatches"] = {r["table"]: r["gt_mismatches"] for r in rows if r["gt_mismatches"]}
    ocr = [r["ocr"] for r in rows if "ocr" in r and "skipped" not in r["ocr"]]
    if ocr:
        keys = (
            "checked",
            "agreed",
            "mismatched",
            "unverified",
            "failing",
            "failing_real_ocr_error",
            "flagged_real_ocr_error",
            "unverified_where_gt_agrees",
            "misread_unchecked",
            "misread_silent",
            "glyph_repairs",
            "glyph_repairs_right",
            "reread_cells",
            "unread_before",
            "unread_filled",
            "second_differs",
            "decided",
            "decided_right",
            "agreed_after",
            "mismatched_after",
            "fixed_checks",
        )
        out["ocr"] = {k: sum(o.get(k, 0) for o in ocr) for k in keys}
        out["ocr"]["tables"] = len(ocr)
        out["ocr"]["skipped"] = sum(1 for r in rows if "skipped" in r.get("ocr", {}))
        out["ocr"]["false_alarms"] = [a for o in ocr for a in o["false_alarms"]]
    return out


def format_table(results: dict[str, Any]) -> str:
    s = results["summary"]
    g = s["gt"]
    lines = [
        f"tables: {s['tables']}, with labelled totals: {s['tables_with_totals']}",
        f"ground truth: {g['checked']} totals checked, {g['agreed']} agree, {g['mismatched']} mismatch, "
        f"{g['unverified']} unverified",
    ]
    for table, items in s["gt_mismatches"].items():
        lines.append(f"  mismatch on ground truth: {table}: {'; '.join(items)}")
    if "ocr" in s:
        o = s["ocr"]
        noise = results.get("noise_seed")
        lines += [
            f"OCR words ({'scan noise seed ' + str(noise) if noise is not None else 'clean images'}), "
            f"{o['tables']} tables ({o['skipped']} skipped: grid shape differs):",
            f"  {o['checked']} checked, {o['agreed']} agree, {o['mismatched']} mismatch, {o['unverified']} unverified",
            f"  not agreeing: {o['failing']}, of which with a real OCR error: {o['failing_real_ocr_error']}",
            f"  flagged (mismatch): {o['mismatched']}, with a real OCR error: {o['flagged_real_ocr_error']}, "
            f"false alarms: {len(o['false_alarms'])}; unverified where the truth agrees: "
            f"{o['unverified_where_gt_agrees']}",
            f"  totals agreeing on the truth with a cell OCR got wrong: {o['misread_unchecked']} left unchecked "
            f"(a cell blank or unreadable), {o['misread_silent']} agreeing all the same",
            f"  glyph repairs: {o['glyph_repairs']} ({o['glyph_repairs_right']} to the truth)",
            f"  second reading ({results['reader']}): {o['reread_cells']} cells re-read, {o['second_differs']} read "
            f"differently, {o['decided']} decided by the sums ({o['decided_right']} to the truth), "
            f"{o['fixed_checks']} checks fixed; {o['unread_before']} blank or unreadable cells kept a total "
            f"unchecked, {o['unread_filled']} filled",
            f"  after the second reading: {o['agreed_after']} agree, {o['mismatched_after']} mismatch",
        ]
    lines.append(f"{results['seconds']} s")
    return "\n".join(lines)
