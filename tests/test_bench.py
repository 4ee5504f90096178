"""`tablesight bench`: it runs, reports what it promises, and the fast pipeline writes
exactly what the naive loop writes. Tiny random models and two generated pages keep it quick."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from helpers import DEV_DATA

from worker.cli.main import main
from worker.overlap import in_order


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from worker.devtools.bench import BenchOptions, run_bench
    from worker.settings import Settings

    settings = Settings(_env_file=None, device="cpu", bench_dir=tmp_path_factory.mktemp("bench-models"))
    return run_bench(BenchOptions(pages=2, size="tiny", models="random"), settings)


def test_report_has_the_promised_fields(report: dict) -> None:
    assert report["models"]["kind"] == "random/tiny" and report["answers"] == "oracle"
    assert report["corpus"]["pages"] == 2 and report["corpus"]["tables"] == 3  # pages of 1 and 2 tables
    for name in ("naive", "fast"):
        v = report["variants"][name]
        assert v["pages_per_s"] > 0 and v["wall_s"] > 0 and len(v["rounds_wall_s"]) == 1
        assert {"render", "detection", "structure", "ocr", "reconstruct", "storage"} <= set(v["stage_s"])
    assert report["speedup"] > 0 and report["process_peak_rss_mib"] > 0
    assert report["config"]["naive"]["batch_size"] == 1
    json.dumps(report)  # JSON-able as it stands


def test_fast_and_naive_outputs_are_identical(report: dict) -> None:
    outputs = report["outputs"]
    assert outputs["identical"] and outputs["equivalent"] and outputs["html_identical"], outputs["differences"]
    assert outputs["tables"] == 3 and outputs["files"] > 3 * 3  # png, html, json per table at least
    for kind in ("detection", "structure"):
        agreement = report["model_agreement"][kind]
        assert agreement["images"] > 0 and agreement["max_score_diff"] < 1e-3


def test_cli_prints_json_and_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from worker.settings import get_settings

    monkeypatch.setenv("TABLESIGHT_BENCH_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("TABLESIGHT_DEVICE", "cpu")
    get_settings.cache_clear()
    try:
        out = tmp_path / "bench.json"
        assert main(["bench", "--pages", "1", "--size", "tiny", "--variants", "fast", "--json", str(out)]) == 0
        table = capsys.readouterr().out
        assert "pages/s" in table and "fast" in table
        data = json.loads(out.read_text())
        assert list(data["variants"]) == ["fast"] and data["corpus"]["pages"] == 1
        assert main(["bench", "--variants", "slow"]) == 2
    finally:
        get_settings.cache_clear()


def test_size_buckets_limit_padding() -> None:
    from models.table_transformer import size_buckets

    shapes = [(1000, 500), (1000, 520), (1000, 900), (1000, 950), (1000, 560)]
    order = sorted(range(len(shapes)), key=lambda i: shapes[i][1] / shapes[i][0])
    assert list(size_buckets(order, shapes, 8, 0.2)) == [[0, 1, 4], [2, 3]]
    assert list(size_buckets(order, shapes, 2, 1.0)) == [[0, 1], [4, 2], [3]]
    assert list(size_buckets(order, shapes, 8, 0.0)) == [[0], [1], [4], [2], [3]]


def test_ocr_with_one_thread_reads_the_same_words() -> None:
    from models.ocr import ocr_words
    from worker.devtools.samples import key_figures_table, render_table

    image, _ = render_table(key_figures_table())
    one_thread = ocr_words(image, threads=1)
    assert len(one_thread) >= 10, "the sample table should give tesseract words to read"
    assert one_thread == ocr_words(image)


def test_in_order_keeps_order_overlaps_and_raises_in_turn() -> None:
    running, peak = [0], [0]
    lock = threading.Lock()

    def work(item: int) -> list[int]:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05 * (3 - item % 3))  # later items finish first
        with lock:
            running[0] -= 1
        if item == 4:
            raise ValueError("group 4 failed")
        return [item * 10, item * 10 + 1]

    got: list[int] = []
    with pytest.raises(ValueError, match="group 4"):
        for value in in_order(list(range(6)), work, lanes=2):
            got.append(value)
    assert got == [0, 1, 10, 11, 20, 21, 30, 31]  # everything before the failed group, in order
    assert peak[0] == 2
    assert list(in_order([1, 2], lambda i: [i], lanes=1)) == [1, 2]


def test_fingerprint_tells_crops_apart() -> None:
    from worker.devtools.samples import financial_table, render_table, staffing_table

    a, _ = render_table(financial_table())
    b, _ = render_table(staffing_table())
    from worker.devtools.bench_inputs import fingerprint

    assert fingerprint(a) == fingerprint(a.copy())
    assert fingerprint(a) != fingerprint(b) != fingerprint(a.crop((1, 0, a.width, a.height)))


def test_compare_outputs_tells_numeric_noise_from_real_differences(tmp_path: Path) -> None:
    from worker.devtools.bench_report import compare_outputs

    def store(name: str, score: float, html: str) -> Path:
        root = tmp_path / name / "doc" / "tables"
        root.mkdir(parents=True)
        (root / "t.json").write_text(json.dumps({"score": score, "text": "Q3", "timings": {"x": score}}))
        (root / "t.html").write_text(html)
        return tmp_path / name

    ref = store("ref", 0.5, "<table></table>")
    same = compare_outputs(ref, [store("same", 0.5, "<table></table>")])
    assert same["identical"] and same["equivalent"]
    noise = compare_outputs(ref, [store("noise", 0.5000001, "<table></table>")])
    assert not noise["identical"] and noise["equivalent"] and noise["html_identical"]
    real = compare_outputs(ref, [store("real", 0.5, "<table><tr></tr></table>")])
    assert not real["equivalent"] and not real["html_identical"]


DEV = DEV_DATA


def test_one_table_detector_finds_one_table_per_page(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    from PIL import Image, ImageDraw

    from models.table_transformer import DETECTION_LABELS, DETECTION_MAX_SIZE, TableTransformer
    from worker.core.detections import select_tables
    from worker.devtools.bench_real import ONE_TABLE_BOX, one_table_detector

    folder = one_table_detector(tiny_models["detection"], tmp_path)
    assert one_table_detector(tiny_models["detection"], tmp_path) == folder  # built once
    runner = TableTransformer.load(
        str(folder), device="cpu", runtime="torch", max_size=DETECTION_MAX_SIZE, expected_labels=DETECTION_LABELS
    )
    pages = [Image.new("RGB", (1700, 2200), "white"), Image.new("RGB", (2200, 1700), "white")]
    ImageDraw.Draw(pages[1]).rectangle((100, 100, 900, 800), outline="black", width=3)
    cx, cy, w, h = ONE_TABLE_BOX
    for page, objects in zip(pages, runner.predict(pages)):
        tables = select_tables(objects, threshold=0.5, rotated_threshold=0.5, merge_iou=0.5, page_size=page.size)
        assert len(tables) == 1 and not tables[0].rotated
        want = ((cx - w / 2) * page.width, (cy - h / 2) * page.height, (cx + w / 2) * page.width)
        assert all(abs(a - b) < 1.0 for a, b in zip(tables[0].bbox, want))


@pytest.mark.skipif(not (DEV / "icdar2013-eu" / "gt.jsonl").is_file(), reason="no dev data (TABLESIGHT_DEV_DATA)")
def test_real_corpus_rasterises_the_densest_pages_without_text(tmp_path: Path) -> None:
    from worker.devtools.bench_real import real_corpus
    from worker.inputs import open_document
    from worker.settings import Settings
    from worker.text_layer import pdf_words

    corpus = real_corpus(DEV, tmp_path / "corpus", 2, 100)
    listing = json.loads((corpus / "pages.json").read_text())["pages"]
    assert len(listing) == 2 and listing[0]["gt_cells"] >= listing[1]["gt_cells"] > 0
    pdfs = sorted(corpus.glob("*.pdf"))
    assert sorted(p.name for p in pdfs) == sorted({e["pdf"] for e in listing})
    settings = Settings(_env_file=None)
    for pdf in pdfs:
        doc = open_document(pdf, settings=settings)
        assert doc.page_count >= 1 and pdf_words(doc, 1, 100) == []  # a scan: no text layer
        assert doc.render(1, 100).width > 500  # a full page at the asked resolution
