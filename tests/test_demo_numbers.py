"""The demo sample's every number read right, end to end: real poppler, onnxruntime (embedded
engine) and tesseract, the sample generator's ground truth. A test, not a tolerance.

And a printed total that does not add up is flagged and sent to the vision read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from models.embedded.weights import default_dir, fetch
from worker.core.geometry import iou
from worker.devtools.samples import _spec, financial_table, make_page, make_scanned_pdf, write_sample
from worker.pipeline import extract_document, load_stages
from worker.settings import Settings
from worker.storage import LocalStorage

_NUMBERISH = re.compile(r"\d")


@pytest.fixture(scope="module")
def settings() -> Settings:
    fetch(default_dir(None))  # no-op when the pinned weights are present (what .ci/setup leaves)
    return Settings(_env_file=None, engine="embedded", device="cpu", torch_threads=1, ocr={"engine": "tesseract"})


def _run(pdf: Path, out: Path, settings: Settings) -> tuple[dict, dict[str, dict]]:
    manifest = extract_document(pdf, stages=load_stages(settings), storage=LocalStorage(out), settings=settings)
    folder = out / manifest["doc_id"] / "tables"
    records = {t["table_id"]: json.loads((folder / f"{t['table_id']}.json").read_text()) for t in manifest["tables"]}
    return manifest, records


@pytest.fixture(scope="module")
def demo(settings, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("demo-numbers")
    pages = write_sample(tmp / "sample.pdf")  # exactly what `tablesight demo` writes
    manifest, records = _run(tmp / "sample.pdf", tmp / "out", settings)
    return pages, manifest, records


def _matched(pages, records):
    for page_no, page in enumerate(pages, 1):
        on_page = [r for r in records.values() if r["page"] == page_no]
        for box, cells in zip(page.table_boxes, page.tables):
            record = max(on_page, key=lambda r: iou(tuple(r["bbox"]), tuple(box)))
            assert iou(tuple(record["bbox"]), tuple(box)) > 0.7
            yield record, cells


def test_every_number_of_the_demo_is_read_right_in_its_row_and_column(demo) -> None:
    pages, manifest, records = demo
    assert manifest["status"] == "complete" and len(records) == 3
    numbers = 0
    for record, cells in _matched(pages, records):
        predicted = {(c["row"], c["col"]): c["text"] for c in record["grid"]["cells"]}
        for cell in cells:
            if _NUMBERISH.search(cell["text"]):
                numbers += 1
                got = predicted.get((cell["row"], cell["col"]))
                assert got == cell["text"], (
                    f"{record['table_id']} ({cell['row']},{cell['col']}): {got!r} != {cell['text']!r}"
                )
    assert numbers == 44  # 2 years + 20 amounts; Q1-Q4 + 10 counts; 2 years + 6 figures


def test_quarter_labels_read_right_and_the_repair_is_recorded(demo) -> None:
    pages, _, records = demo
    staffing = records["p0002-t01"]
    header = {c["col"]: c["text"] for c in staffing["grid"]["cells"] if c["row"] == 0}
    assert [header[c] for c in range(2, 6)] == ["Q1", "Q2", "Q3", "Q4"]
    for fix in staffing.get("text_repairs") or []:  # each repair says what was read and why it changed
        assert fix["rule"] in ("numeric_column", "enumeration", "stray_marks") and fix["from"] != fix["to"]
        assert fix in staffing["structure"]["corrections"]


def test_the_demo_totals_are_checked_and_agree(demo) -> None:
    _, manifest, records = demo
    totals = records["p0001-t01"]["totals"]
    assert (totals["status"], totals["checked"], totals["agreed"], totals["mismatched"]) == ("agree", 4, 4, 0)
    assert {c["label"] for c in totals["checks"]} == {
        "Total / 2023 / Revenue",
        "Total / 2023 / Cost",
        "Total / 2024 / Revenue",
        "Total / 2024 / Cost",
    }
    for d in totals["decided"]:  # a reading the sum chose is on record, with both readings
        assert d["decided_by"] == "totals" and d["text"] != d["previous"] and len(d["readings"]) == 2
    entry = next(t for t in manifest["tables"] if t["table_id"] == "p0001-t01")
    assert not any("not adding up" in r for r in entry["reasons"])
    assert "totals" not in records["p0002-t02"]  # no total labelled: nothing claimed


def test_a_printed_total_that_does_not_add_up_is_flagged_for_the_vision_read(settings, tmp_path) -> None:
    rows = [
        [("Region", 2, 1), ("Product", 2, 1), ("2023", 1, 2), ("2024", 1, 2)],
        ["Revenue", "Cost", "Revenue", "Cost"],
        [("North", 2, 1), "Widgets", "1,200", "800", "1,350", "870"],
        ["Gadgets", "640", "410", "700", "455"],
        [("South", 2, 1), "Widgets", "980", "615", "1,010", "650"],
        ["Gadgets", "520", "330", "575", "360"],
        [("Total", 1, 2), "3,340", "2,155", "3,635", "2,835"],  # printed wrong: the members sum to 2,335
    ]
    spec = _spec(rows, header_rows=2)
    assert spec.shape == financial_table().shape
    page = make_page([spec], title="Annual report 2024: revenue and cost by region", seed=1)
    make_scanned_pdf(tmp_path / "wrong.pdf", [page.image], dpi=200, noise=True, seed=7)
    manifest, records = _run(tmp_path / "wrong.pdf", tmp_path / "out", settings)
    (record,) = records.values()
    totals = record["totals"]
    assert totals["status"] == "mismatch" and totals["agreed"] == 3 and totals["mismatched"] == 1
    (bad,) = [c for c in totals["checks"] if c["status"] == "mismatch"]
    assert bad["label"] == "Total / 2024 / Cost" and (bad["printed"], bad["computed"]) == (2835, 2335)
    assert totals["second_reader"] == "tesseract-digits" and totals["decided"] == []  # no reading can fix print
    assert any(r["rule"] == "totals_mismatch" for r in record["flags"]["rules"])
    assert record["flags"]["needs_vision"]
    (entry,) = manifest["tables"]
    assert entry["needs_vision"] and any("2835" in r for r in entry["reasons"])
