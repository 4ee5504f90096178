"""Where a degraded page loses against its GT, table by table and cell by cell.

`eval pages` says how much a kind costs; this says what is lost: for each GT table of the chosen
dev pages, whether a box matched it (and its IoU), TEDS and TEDS-struct, the grid's size and spans
against the GT's, and every GT cell whose text we read otherwise (character by character), with
the words the OCR read there and their confidences. It runs the pipeline through the eval's own
functions (`worker.evaluation.pages_eval`: same renders, degradations, seeds and matching), so its
figures are the eval's.

    python -m worker.devtools.page_diff --data DEV --pages eu-001:1,eu-003:1 --degrade photocopy --seed 1
    python -m worker.devtools.page_diff --data DEV --pages eu-003,eu-004 --degrade photocopy --keep /tmp/pd

`--pages` takes `eu-003` (every page of that PDF with a GT table) or `eu-003:1` (one page).
`--keep DIR` keeps the degraded pages, crops and table records there.
"""

from __future__ import annotations

import argparse
import difflib
import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from worker.core.geometry import iou
from worker.core.html_parse import html_to_grid
from worker.core.types import TableGrid
from worker.evaluation.pages_eval import (
    Degradation,
    GtPageTable,
    PageJob,
    Predicted,
    _back_to_clean,
    _page_height,
    evaluate,
    load_page_tables,
    match,
    tablesight_tool,
)


def select_tables(tables: list[GtPageTable], pages: str) -> list[GtPageTable]:
    """The GT tables of `pages` ("eu-003" or "eu-003:1", comma-separated), every table of each page."""
    wanted = [p.strip() for p in pages.split(",") if p.strip()]
    out = []
    for t in tables:
        for w in wanted:
            stem, _, page = w.partition(":")
            if t.pdf.stem == stem and (not page or int(page) == t.page):
                out.append(t)
                break
    return out


def cell_texts(grid: TableGrid) -> dict[tuple[int, int], str]:
    return {(c.row, c.col): " ".join(c.text.split()) for c in grid.cells}


def span_summary(grid: TableGrid) -> str:
    spans = [f"{c.rowspan}x{c.colspan}@{c.row},{c.col}" for c in grid.cells if c.rowspan > 1 or c.colspan > 1]
    return f"{grid.n_rows}x{grid.n_cols}" + (f" spans {' '.join(spans)}" if spans else "")


def char_confusions(gt: str, ours: str) -> list[tuple[str, str]]:
    """(GT characters, ours) for each replaced, dropped or added run between two texts."""
    out = []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(None, gt, ours, autojunk=False).get_opcodes():
        if op != "equal":
            out.append((gt[a0:a1], ours[b0:b1]))
    return out


def diff_table(gt_html: str, html: str) -> dict[str, Any]:
    """The grid sizes and spans, and the cells whose text differs at the same slot (when the grids
    have the same shape) or the GT texts found nowhere in ours, each with our nearest text (when
    they do not)."""
    gt, ours = html_to_grid(gt_html), html_to_grid(html)
    g, o = cell_texts(gt), cell_texts(ours)
    same_shape = (gt.n_rows, gt.n_cols) == (ours.n_rows, ours.n_cols)
    cells = []
    if same_shape:
        for slot, text in sorted(g.items()):
            if o.get(slot, None) != text:
                cells.append({"slot": slot, "gt": text, "ours": o.get(slot, "<no cell>")})
    else:
        pool = Counter(o.values())
        for slot, text in sorted(g.items()):
            if not text:  # an empty GT cell has no text to find
                continue
            if pool[text] > 0:
                pool[text] -= 1
            else:
                near = difflib.get_close_matches(text, list(pool.elements()), n=1, cutoff=0.5)
                cells.append({"slot": slot, "gt": text, "ours": near[0] if near else "<none>"})
    return {
        "gt_shape": span_summary(gt),
        "ours_shape": span_summary(ours),
        "same_shape": same_shape,
        "cells": cells,
        "gt_cells": len(g),
    }


def run_pages(
    tables: list[GtPageTable], degradation: Degradation | None, work: Path, engine: str = "embedded"
) -> list[dict[str, Any]]:
    """Run the pipeline on the pages of `tables` as `eval pages` does; one report per GT table."""
    tool = tablesight_tool(engine)
    seen: dict[tuple[Path, int], tuple[PageJob, dict[int, list[Predicted]]]] = {}

    def capture(job: PageJob, mode: str, workdir: Path) -> dict[int, list[Predicted]]:
        found = tool(job, mode, workdir)
        seen[(job.pdf, job.dpi)] = (job, found)
        return found

    capture.warm = tool.warm  # type: ignore[attr-defined]
    result = evaluate(capture, tables, "scan", workdir=work, degradation=degradation)
    scores = {r["table_id"]: r for r in result["tables"]}
    reports = []
    by_page: dict[tuple[Path, int], list[GtPageTable]] = {}
    for t in tables:
        by_page.setdefault((t.pdf, t.page), []).append(t)
    for (pdf, page), gts in by_page.items():
        job, found = seen.get((pdf, gts[0].dpi), (None, {}))
        preds = _back_to_clean(job, found).get(page, []) if job is not None else []
        height = _page_height(pdf, page, gts[0].dpi)
        gt_boxes = [g.page_boxes(height) for g in gts]
        pairs = match(gt_boxes, [p.bbox for p in preds])
        for g, t in enumerate(gts):
            scored = scores[t.table_id]
            report: dict[str, Any] = {"table_id": t.table_id, "teds": scored["teds"]}
            report["teds_struct"] = scored["teds_struct"]
            report["bound"] = f"{scored.get('bound', 0)}/{scored.get('values', 0)}"
            if g in pairs:
                pred = preds[pairs[g]]
                report["iou"] = round(max(iou(b, pred.bbox) for b in gt_boxes[g]), 3)
                report.update(diff_table(t.html, pred.html))
            else:
                best = max((max(iou(b, p.bbox) for b in gt_boxes[g]) for p in preds), default=0.0)
                report["missed"] = f"best IoU {best:.2f} over {len(preds)} boxes"
            reports.append(report)
        extra = len(preds) - len(pairs)
        if extra:
            reports.append({"table_id": f"{pdf.stem} p{page}", "false_boxes": extra})
    return reports


def format_report(reports: list[dict[str, Any]]) -> str:
    lines = []
    confusions: Counter[tuple[str, str]] = Counter()
    for r in reports:
        if "false_boxes" in r:
            lines.append(f"## {r['table_id']}: {r['false_boxes']} box(es) matching no GT table")
            continue
        head = f"## {r['table_id']}: TEDS {r['teds']:.3f} struct {r['teds_struct']:.3f} bound {r['bound']}"
        if "missed" in r:
            lines.append(f"{head} MISSED ({r['missed']})")
            continue
        lines.append(f"{head} IoU {r['iou']:.2f}")
        lines.append(f"   grid: GT {r['gt_shape']} / ours {r['ours_shape']}")
        label = "differ at their slot" if r["same_shape"] else "GT texts not in ours (nearest)"
        lines.append(f"   {len(r['cells'])} of {r['gt_cells']} cells {label}")
        for c in r["cells"]:
            pairs = char_confusions(c["gt"], c["ours"])
            confusions.update(pairs)
            shown = ", ".join(f"{a!r}->{b!r}" for a, b in pairs[:4])
            lines.append(f"     {c['slot']}: {c['gt']!r} -> {c['ours']!r}   [{shown}]")
    if confusions:
        lines.append("## character confusions (GT -> ours), most frequent")
        lines.append("   " + ", ".join(f"{a!r}->{b!r} x{n}" for (a, b), n in confusions.most_common(40)))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--pages", required=True, help="eu-003 or eu-003:1, comma-separated")
    ap.add_argument("--degrade", default="clean")
    ap.add_argument("--strength", default="moderate")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--engine", default="embedded")
    ap.add_argument("--keep", type=Path, help="keep degraded pages and table records in this folder")
    ap.add_argument("--json", type=Path, help="write the reports as JSON here")
    args = ap.parse_args(argv)
    tables = select_tables(load_page_tables(args.data), args.pages)
    if not tables:
        raise SystemExit(f"no GT tables on {args.pages}")
    degradation = Degradation(args.degrade, args.strength, args.seed)
    with tempfile.TemporaryDirectory(prefix="page-diff-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        reports = run_pages(tables, degradation, work, args.engine)
    print(format_report(reports))
    if args.json:
        args.json.write_text(json.dumps(reports, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
