"""The page-diff tool's pure parts (worker.devtools.page_diff): which GT tables a page list names,
and how our HTML is diffed against the GT's, slot by slot or by nearest text."""

from __future__ import annotations

from pathlib import Path

from worker.devtools.page_diff import char_confusions, diff_table, select_tables
from worker.evaluation.pages_eval import GtPageTable

GT = "<table><tr><td></td><td colspan='2'>to air</td></tr><tr><td>Lead</td><td>200</td><td>-</td></tr></table>"


def _table(stem: str, page: int) -> GtPageTable:
    return GtPageTable(f"{stem}_p{page}", Path(f"{stem}.pdf"), page, 144, (0, 0, 1, 1), [], GT, Path("x.png"))


def test_pages_name_a_pdf_or_one_of_its_pages() -> None:
    tables = [_table("eu-003", 1), _table("eu-004", 2), _table("eu-004", 3)]
    assert [t.table_id for t in select_tables(tables, "eu-004")] == ["eu-004_p2", "eu-004_p3"]
    assert [t.table_id for t in select_tables(tables, "eu-003, eu-004:3")] == ["eu-003_p1", "eu-004_p3"]


def test_same_shape_grids_are_diffed_slot_by_slot() -> None:
    ours = "<table><tr><td></td><td colspan='2'>to air</td></tr><tr><td>Lead</td><td>20</td><td></td></tr></table>"
    d = diff_table(GT, ours)
    assert d["same_shape"] and d["gt_shape"] == d["ours_shape"] == "2x3 spans 1x2@0,1"
    assert [(c["slot"], c["gt"], c["ours"]) for c in d["cells"]] == [((1, 1), "200", "20"), ((1, 2), "-", "")]
    assert char_confusions("Lead", "Lcad") == [("e", "c")]


def test_other_shapes_are_diffed_by_nearest_text() -> None:
    ours = "<table><tr><td>to air</td></tr><tr><td>Leed</td></tr><tr><td>200</td></tr></table>"
    d = diff_table(GT, ours)
    assert not d["same_shape"]
    assert {c["gt"]: c["ours"] for c in d["cells"]} == {"Lead": "Leed", "-": "<none>"}
