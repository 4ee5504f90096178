"""The table-free pages tool (worker.devtools.table_free): which pages of the eval's PDFs hold no
GT table, the ones a false table would be found on."""

from __future__ import annotations

from pathlib import Path

from worker.devtools.table_free import table_free_jobs
from worker.evaluation.pages_eval import GtPageTable


def _table(stem: str, page: int, dpi: int = 144) -> GtPageTable:
    return GtPageTable(
        f"{stem}_p{page}", Path(f"{stem}.pdf"), page, dpi, (0, 0, 1, 1), [], "<table></table>", Path("x.png")
    )


def test_the_pages_of_each_pdf_that_hold_no_gt_table() -> None:
    tables = [_table("eu-003", 1), _table("eu-003", 3), _table("eu-004", 1, 200), _table("eu-004", 2, 200)]
    counts = {Path("eu-003.pdf"): 4, Path("eu-004.pdf"): 2}
    jobs = table_free_jobs(tables, counts)
    assert [(j.pdf.name, j.pages, j.dpi) for j in jobs] == [("eu-003.pdf", [2, 4], 144)]  # eu-004 has none free
