"""OCR once per scanned page (OCR__PAGE_PASS): the tables and their caption strips of a page read in one
pass over merged regions, with the words split back per table. The scanned sample through the
embedded engine both ways: fewer OCR calls, the same tables, cells and captions."""

from __future__ import annotations

import json
from difflib import SequenceMatcher
from pathlib import Path

import pytest

from worker.devtools.samples import write_sample
from worker.pipeline import extract_document, load_stages
from worker.pipeline.page_ocr import merge_boxes
from worker.settings import Settings
from worker.storage import LocalStorage


def test_merge_boxes_joins_overlaps_transitively_and_keeps_the_rest() -> None:
    boxes = [(0, 0, 10, 10), (50, 50, 60, 60), (5, 5, 20, 20), (18, 18, 30, 30)]
    assert merge_boxes(boxes) == [(0, 0, 30, 30), (50, 50, 60, 60)]
    assert merge_boxes([(0, 0, 10, 10), (10, 0, 20, 10)]) == [(0, 0, 10, 10), (10, 0, 20, 10)]  # touching only
    assert merge_boxes([]) == []


def _run(pdf: Path, out: Path, page_ocr: bool) -> tuple[dict, list[tuple[int, int]], dict[str, dict]]:
    settings = Settings(_env_file=None, engine="embedded", device="cpu", ocr={"page_pass": page_ocr})
    stages = load_stages(settings)
    calls: list[tuple[int, int]] = []
    inner = stages.ocr

    def counted(image):  # type: ignore[no-untyped-def]
        calls.append(image.size)
        return inner(image)

    stages.ocr = counted
    manifest = extract_document(pdf, stages=stages, storage=LocalStorage(out), settings=settings)
    folder = out / manifest["doc_id"] / "tables"
    records = {t["table_id"]: json.loads((folder / f"{t['table_id']}.json").read_text()) for t in manifest["tables"]}
    return manifest, calls, records


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, tuple[dict, list, dict]]:
    tmp = tmp_path_factory.mktemp("page-ocr")
    write_sample(tmp / "sample.pdf")
    return {flag: _run(tmp / "sample.pdf", tmp / f"out-{flag}", flag) for flag in (False, True)}


def test_one_pass_per_region_instead_of_three_calls_per_table(both: dict) -> None:
    (_, per_crop, records), (_, per_page, _) = both[False], both[True]
    tables = len(records)
    assert tables >= 2
    assert len(per_crop) > 2 * tables  # the crop and (most of) its two strips each
    assert len(per_page) <= len(both[True][0]["pages_done"]) * 2 < len(per_crop)


def test_the_same_tables_cells_and_captions(both: dict) -> None:
    (m_old, _, old), (m_new, _, new) = both[False], both[True]
    assert m_old["status"] == m_new["status"] == "complete"
    assert sorted(old) == sorted(new)
    same = total = 0
    for table_id, record in old.items():
        theirs = {(c["row"], c["col"]): c["text"] for c in new[table_id]["grid"]["cells"]}
        for cell in record["grid"]["cells"]:
            total += 1
            same += theirs.get((cell["row"], cell["col"])) == cell["text"]
        for key in ("caption", "notes"):  # OCR of prose: a word may split or merge at another crop edge
            a, b = str(record["context"][key]).split(), str(new[table_id]["context"][key]).split()
            assert bool(a) == bool(b) and SequenceMatcher(None, a, b).ratio() >= 0.8, (key, a, b)
    assert total > 20 and same / total >= 0.9, f"{same}/{total} cells read alike"
