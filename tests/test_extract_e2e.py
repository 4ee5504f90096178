"""`tablesight extract` end to end: generated scanned and born-digital PDFs, every file of the
contract (docs/architecture.md), duplicates merged, bad inputs failing one by one while others complete."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from contract_check import contract_problems
from helpers import bad_inputs
from PIL import Image

from worker.core.html_out import grid_to_html
from worker.core.html_parse import html_to_grid
from worker.core.reconstruct import reconstruct
from worker.core.replay import parse_payload
from worker.devtools.samples import financial_table, make_born_digital_pdf, make_page, write_sample
from worker.pipeline import extract_document, load_stages
from worker.settings import Settings
from worker.storage import LocalStorage


def tiny_model_settings(models: dict[str, Path], **kw) -> Settings:
    base = {
        "detection_model": str(models["same_table"]),
        "structure_model": str(models["structure_legacy"]),
        "device": "cpu",
        "dpi": 100,
        "torch_threads": 1,
        # the stand-in detector's one box per page is what these tests count: the ruled-grid finder
        # (tests/test_ruled_tables.py, tests/test_scans.py) would add the page's real table beside it,
        # and so would the aligned-text finder (tests/test_aligned_text.py)
        "normalise_ruled_tables": False,
        "normalise_aligned_tables": False,
    }
    return Settings(**{**base, **kw})


@pytest.fixture(scope="module")
def scanned_pdf(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("inputs") / "report.pdf"
    write_sample(path)
    return path


def check_contract(store: Path, manifest: dict) -> None:
    checked, problems = contract_problems(store)
    assert problems == [] and checked >= 2 + len(manifest["tables"])  # manifest, page(s), tables
    doc = store / manifest["doc_id"]
    on_disk = json.loads((doc / "manifest.json").read_text())
    assert on_disk == manifest
    for key in ("status", "source", "sha256", "page_count", "tables", "errors", "models", "timings", "tool_version"):
        assert key in manifest
    assert manifest["status"] == "complete" and manifest["errors"] == []
    assert manifest["pages_done"] == manifest["pages"]
    for entry in manifest["tables"]:
        tid = entry["table_id"]
        html = (doc / "tables" / f"{tid}.html").read_text()
        record = json.loads((doc / "tables" / f"{tid}.json").read_text())
        crop = Image.open(doc / "tables" / f"{tid}.png")
        grid = html_to_grid(html)
        assert (grid.n_rows, grid.n_cols) == (record["grid"]["n_rows"], record["grid"]["n_cols"])
        assert grid.repairs == []  # our HTML is always a clean rectangle
        assert list(crop.size) == record["structure"]["image_size"]
        assert record["page"] == entry["page"] and record["table_id"] == tid
        for key in ("bbox", "grid", "flags", "serialisations", "structure", "text_source", "detection_score"):
            assert key in record
        for cell in record["grid"]["cells"]:
            assert {"row", "col", "rowspan", "colspan", "text", "bbox", "is_header", "confidence"} <= set(cell)
        assert record["structure"]["objects"], "raw structure objects are stored for replay"
        assert record["structure"]["image"] == f"{tid}.png"


def test_scanned_pdf_every_file_of_the_contract(tiny_models, scanned_pdf, tmp_path):
    settings = tiny_model_settings(tiny_models)
    store = LocalStorage(tmp_path / "out")
    manifest = extract_document(scanned_pdf, stages=load_stages(settings), storage=store, settings=settings)
    check_contract(tmp_path / "out", manifest)
    # the stored payload (objects, words and the crop's ruling lines) replays to the same HTML
    for entry in manifest["tables"]:
        folder = tmp_path / "out" / manifest["doc_id"] / "tables"
        record = json.loads((folder / f"{entry['table_id']}.json").read_text())
        lines = record["structure"]["lines"]  # positions, and where each rule found is drawn
        assert {"h", "v"} <= set(lines) <= {"h", "v", "h_runs", "v_runs"}
        for key in ("h", "v"):
            assert len(lines.get(f"{key}_runs", [])) == len(lines[key])
        item = parse_payload(record["structure"])
        grid = reconstruct(
            item.objects,
            item.words,
            item.image_size,
            settings.structure.thresholds(),
            settings.structure.duplicate_overlap,
            item.lines,
            settings.refine.rules(),
        )
        assert grid_to_html(grid) == (folder / f"{entry['table_id']}.html").read_text().rstrip("\n")
    # every detection query predicts the same table: one table per page, not fifteen
    assert [t["page"] for t in manifest["tables"]] == [1, 2]
    assert all(t["text_source"] == "ocr" for t in manifest["tables"])
    assert manifest["models"]["detection"]["id"] == str(tiny_models["same_table"])
    # re-running the same content writes the same keys (idempotent by content hash)
    again = extract_document(scanned_pdf, stages=load_stages(settings), storage=store, settings=settings)
    assert again["doc_id"] == manifest["doc_id"] and again["tables"] == manifest["tables"]


def test_born_digital_pdf_uses_the_text_layer(tiny_models, tmp_path):
    pdf = tmp_path / "digital.pdf"
    make_born_digital_pdf(pdf, financial_table())
    settings = tiny_model_settings(tiny_models)
    store = LocalStorage(tmp_path / "out")
    # a random detector boxes some arbitrary region: read the whole page as the table instead
    manifest = extract_document(pdf, stages=load_stages(settings, tables="page"), storage=store, settings=settings)
    check_contract(tmp_path / "out", manifest)
    assert [t["text_source"] for t in manifest["tables"]] == ["text-layer"]
    record = json.loads((tmp_path / "out" / manifest["doc_id"] / "tables" / "p0001-t01.json").read_text())
    words = {w["text"] for w in record["structure"]["words"]}
    assert {"Region", "Widgets", "1,200"} <= words


def test_page_mode_images_and_tiff(tiny_models, tmp_path):
    page = make_page([financial_table()], page_size_px=(1000, 900), seed=3).image
    tiff = tmp_path / "scan.tiff"
    page.save(tiff, save_all=True, append_images=[page.rotate(0)])
    settings = tiny_model_settings(tiny_models)
    store = LocalStorage(tmp_path / "out")
    manifest = extract_document(tiff, stages=load_stages(settings, tables="page"), storage=store, settings=settings)
    check_contract(tmp_path / "out", manifest)
    assert manifest["kind"] == "image" and [t["page"] for t in manifest["tables"]] == [1, 2]
    assert manifest["tables"][0]["bbox"] == [0, 0, 1000, 900]


def test_bad_inputs_fail_one_by_one_and_the_rest_completes(tiny_models, scanned_pdf, tmp_path):
    bad = bad_inputs(
        tmp_path / "bad", "corrupt", "encrypted", "empty", "zero pages", "huge page", "not a pdf", "missing"
    )
    env = {
        **os.environ,
        "TABLESIGHT_DETECTION_MODEL": str(tiny_models["same_table"]),
        "TABLESIGHT_STRUCTURE_MODEL": str(tiny_models["structure"]),
        "TABLESIGHT_DPI": "100",
        "TABLESIGHT_DEVICE": "cpu",
        "TABLESIGHT_MAX_PAGE_PIXELS": "20000000",
        "TABLESIGHT_NORMALISE__RULED_TABLES": "false",  # as in tiny_model_settings
        "TABLESIGHT_NORMALISE__ALIGNED_TABLES": "false",
    }
    files = [str(b.path) for b in bad.values()] + [str(scanned_pdf)]
    proc = subprocess.run(
        [sys.executable, "-m", "worker.cli.main", "extract", *files, "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == len(bad)
    for bad_input in bad.values():
        line = next(line for line in errors if str(bad_input.path) in line)
        assert bad_input.reason in line.lower(), line
        manifest_path = Path(line.rsplit("(manifest: ", 1)[1].rstrip(")"))
        manifest = json.loads(manifest_path.read_text())
        assert manifest["status"] == "failed" and manifest["errors"][0]["reason"]
    assert f"{scanned_pdf}: 2 table(s) on 2 page(s)" in proc.stdout
