"""Tables found on dev pages that hold none: the false tables the pipeline adds, per kind of scan.

`eval pages` scores the pages that hold a GT table, so a finder that takes a chart for a table
(or a recall fallback that fires on every page) shows nowhere in it. This runs the whole
pipeline over the other pages of the same PDFs, the same renders and scan simulator as the eval
(`worker.evaluation.pages_eval`), and reports each table found there: every one is a false one.

    python -m worker.devtools.table_free --data DEV --degrade clean,photocopy --seed 0
"""

from __future__ import annotations

import argparse
import tempfile
from collections import defaultdict
from pathlib import Path

from worker.evaluation.pages_eval import (
    Degradation,
    GtPageTable,
    PageJob,
    _render_scans,
    load_page_tables,
    tablesight_tool,
)


def table_free_jobs(tables: list[GtPageTable], page_counts: dict[Path, int]) -> list[PageJob]:
    """One job per PDF behind `tables`, holding its pages no GT table lies on (`page_counts`: the
    PDF's pages), at the GT's dpi; PDFs with none left out."""
    held: dict[Path, set[int]] = defaultdict(set)
    dpi: dict[Path, int] = {}
    for t in tables:
        held[t.pdf].add(t.page)
        dpi.setdefault(t.pdf, t.dpi)
    jobs = []
    for pdf in sorted(held):
        free = [p for p in range(1, page_counts[pdf] + 1) if p not in held[pdf]]
        if free:
            jobs.append(PageJob(pdf, free, dpi[pdf]))
    return jobs


def _page_counts(pdfs: set[Path]) -> dict[Path, int]:
    from worker.inputs import open_document
    from worker.settings import Settings

    return {pdf: open_document(pdf, settings=Settings(_env_file=None)).page_count for pdf in pdfs}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="folder holding <set>/gt.jsonl (ICDAR records with pdf)")
    ap.add_argument("--degrade", default="clean", help="comma-separated kinds of worker.evaluation.degrade")
    ap.add_argument("--strength", default="moderate")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--engine", default="embedded")
    args = ap.parse_args(argv)
    tables = load_page_tables(args.data)
    if not tables:
        raise SystemExit(f"no GT tables with a source PDF under {args.data}")
    jobs = table_free_jobs(tables, _page_counts({t.pdf for t in tables}))
    tool = tablesight_tool(args.engine)
    print("| kind | pages | pages with a table | tables |")
    print("|---|---|---|---|")
    found_on: list[str] = []
    for kind in args.degrade.split(","):
        degradation = Degradation(kind.strip(), args.strength, args.seed)
        pages = hits = tables_found = 0
        with tempfile.TemporaryDirectory(prefix="table-free-") as tmp:
            for job in jobs:
                job = PageJob(job.pdf, list(job.pages), job.dpi)
                _render_scans(job, Path(tmp), degradation)
                found = tool(job, "scan", Path(tmp))
                pages += len(job.pages)
                for page, preds in sorted(found.items()):
                    if preds:
                        hits += 1
                        tables_found += len(preds)
                        found_on.append(f"{degradation.kind}: {job.pdf.stem} p{page} ({len(preds)})")
        print(f"| {degradation.kind} | {pages} | {hits} | {tables_found} |")
    for line in found_on:
        print(line)


if __name__ == "__main__":
    main()
