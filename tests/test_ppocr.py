"""The PP-OCR engine (models.ppocr) with its real ONNX files on onnxruntime.

The files come out of the pinned rapidocr wheel (`.ci/setup` runs `tablesight models download
--engine embedded`, which fetches them); without them these tests skip and say so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from helpers import weights_absent
from PIL import Image, ImageDraw, ImageFilter

from models.embedded.weights import OCR_MODELS, PPOCR_DET, EmbeddedWeightsMissing, default_dir, locate
from models.ppocr.components import component_boxes
from worker.devtools.samples import load_font

FOLDER = default_dir(None)


needs_weights = pytest.mark.skipif(
    weights_absent(OCR_MODELS) is not None,
    reason=f"PP-OCR weights absent: {weights_absent(OCR_MODELS)} (tablesight models download --engine embedded)",
)


@pytest.fixture(scope="module")
def engine():
    import models.ppocr as ppocr

    return ppocr.load(threads=1, rule_min_px=28)


def _line(texts: list[str], size: int = 22, gap: int = 40) -> tuple[Image.Image, list[tuple[int, int, int, int]]]:
    """A white strip with `texts` drawn left to right in DejaVu Sans; and each text's ink box."""
    font = load_font(size)
    image = Image.new("L", (60 + sum(int(font.getlength(t)) + gap for t in texts), size * 3), 255)
    draw = ImageDraw.Draw(image)
    x, boxes = 30, []
    for text in texts:
        draw.text((x, size), text, fill=0, font=font)
        boxes.append(draw.textbbox((x, size), text, font=font))
        x += int(font.getlength(text)) + gap
    return image, boxes


def test_component_boxes_join_touching_pixels_and_diagonals() -> None:
    mask = np.zeros((10, 12), dtype=bool)
    mask[1:3, 1:4] = True
    mask[3, 4] = True  # diagonal to the first block: the same region
    mask[6:9, 6:11] = True
    mask[0, 11] = True
    boxes = sorted(map(tuple, component_boxes(mask).tolist()))
    assert boxes == [(1, 1, 5, 4), (6, 6, 11, 9), (11, 0, 12, 1)]
    assert component_boxes(np.zeros((4, 4), dtype=bool)).shape == (0, 4)


@needs_weights
def test_recogniser_reads_numbers_and_symbols_the_demo_needs(engine) -> None:
    image, _ = _line(["2,335", "Q1", "±", "35.5%", "1,204"])
    texts = [w.text for w in engine(image)]
    assert texts == ["2,335", "Q1", "±", "35.5%", "1,204"]


@needs_weights
def test_words_of_one_line_come_apart_at_spaces_with_their_own_boxes(engine) -> None:
    image, drawn = _line(["Margin of error (±)"], gap=0)
    words = engine(image, offset=(100, 50))
    assert [w.text for w in words] == ["Margin", "of", "error", "(±)"]
    xs = [w.bbox[0] for w in words]
    assert xs == sorted(xs) and all(a.bbox[2] < b.bbox[0] for a, b in zip(words, words[1:]))
    x0, y0, x1, y1 = drawn[0]
    assert abs(words[0].bbox[0] - (x0 + 100)) <= 3 and abs(words[-1].bbox[2] - (x1 + 100)) <= 3
    for w in words:  # every box lies on the drawn line, shifted by the offset
        assert y0 + 50 - 3 <= w.bbox[1] < w.bbox[3] <= y1 + 50 + 3
        assert 0.5 < w.confidence <= 1.0


@needs_weights
def test_detector_finds_each_row_of_a_ruled_table(engine) -> None:
    font = load_font(16)
    rows = [
        ("Region", "2023", "2024"),
        ("North", "1,200", "1,350"),
        ("South", "980", "1,010"),
        ("Total", "2,180", "2,360"),
    ]
    image = Image.new("L", (420, 40 + 34 * len(rows)), 255)
    draw = ImageDraw.Draw(image)
    for r, row in enumerate(rows):
        y = 20 + 34 * r
        draw.line((10, y - 6, 410, y - 6), fill=0, width=1)
        for c, text in enumerate(row):
            draw.text((20 + 140 * c, y), text, fill=0, font=font)
    for x in (10, 150, 290, 410):
        draw.line((x, 14, x, 20 + 34 * len(rows) - 6), fill=0, width=1)
    rgb = np.repeat(np.asarray(image)[:, :, None], 3, axis=2)
    boxes = engine.detector.detect(rgb)
    assert len(boxes) >= len(rows)
    centres = sorted({round(((b.y0 + b.y1) / 2 - 20) / 34) for b in boxes})
    assert centres == list(range(len(rows)))
    words = engine(image)
    by_row: dict[int, list[str]] = {}
    for w in words:
        by_row.setdefault(round((w.bbox[1] - 20) / 34), []).append(w.text)
    assert [by_row[r] for r in range(len(rows))] == [list(row) for row in rows]


def test_missing_or_corrupt_ppocr_weights_name_the_file_and_the_fix(tmp_path) -> None:
    import models.ppocr as ppocr

    with pytest.raises(
        EmbeddedWeightsMissing, match=r"PP-OCRv6_det_small.onnx is missing.*models download --engine embedded"
    ):
        ppocr.load(tmp_path)
    (tmp_path / "embedded").mkdir()
    (tmp_path / "embedded" / PPOCR_DET.file).write_bytes(b"not a model")
    with pytest.raises(EmbeddedWeightsMissing, match=r"is corrupt"):
        ppocr.load(tmp_path)


def test_ocr_engine_auto_falls_back_to_tesseract_without_the_files(tmp_path) -> None:
    from worker.engines.ocr import load_ocr_engine, resolve_ocr_engine
    from worker.settings import Settings

    settings = Settings(_env_file=None, models_dir=tmp_path, ocr={"engine": "auto"})
    assert settings.ocr.engine == "auto"
    engine, why = resolve_ocr_engine(settings.ocr.engine, settings.models.models_dir)
    assert engine == "tesseract" and "PP-OCR weights unavailable" in why
    assert load_ocr_engine(settings.ocr, 144, settings.models).name == "tesseract"
    explicit = Settings(_env_file=None, models_dir=tmp_path, ocr={"engine": "ppocr"})
    with pytest.raises(EmbeddedWeightsMissing, match="models download --engine embedded"):
        load_ocr_engine(explicit.ocr, 144, explicit.models)


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """The demo's two-page scanned sample through the embedded engine, read by PP-OCR."""
    if weights_absent(OCR_MODELS):
        pytest.skip(f"PP-OCR weights absent: {weights_absent(OCR_MODELS)}")
    from models.embedded.weights import TABLE_MODELS
    from worker.devtools.samples import write_sample
    from worker.pipeline import extract_document, load_stages
    from worker.settings import Settings
    from worker.storage import LocalStorage

    try:
        for model in TABLE_MODELS:
            locate(model, FOLDER)
    except EmbeddedWeightsMissing as exc:
        pytest.skip(f"embedded table weights absent: {exc}")
    tmp = tmp_path_factory.mktemp("ppocr-demo")
    pages = write_sample(tmp / "sample.pdf")
    settings = Settings(_env_file=None, engine="embedded", ocr={"engine": "ppocr"}, device="cpu", torch_threads=1)
    store = LocalStorage(tmp / "out")
    manifest = extract_document(tmp / "sample.pdf", stages=load_stages(settings), storage=store, settings=settings)
    folder = Path(tmp / "out" / manifest["doc_id"] / "tables")
    records = [json.loads((folder / f"{t['table_id']}.json").read_text()) for t in manifest["tables"]]
    return pages, manifest, records


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def test_demo_sample_through_embedded_and_ppocr_has_its_cells_in_place(demo_run) -> None:
    from worker.core.geometry import iou

    pages, manifest, records = demo_run
    assert manifest["status"] == "complete"
    assert manifest["models"]["ocr"]["id"] == "ppocr"
    assert {manifest["models"][r]["sha256"] for r in ("ocr_detection", "ocr_recognition")} == {
        m.sha256 for m in OCR_MODELS
    }
    hits = total = 0
    wrong_numbers = []
    for page_no, page in enumerate(pages, 1):
        on_page = [r for r in records if r["page"] == page_no]
        assert len(on_page) == len(page.tables)
        for box, cells in zip(page.table_boxes, page.tables):
            record = max(on_page, key=lambda r: iou(tuple(r["bbox"]), tuple(box)))
            predicted = {(c["row"], c["col"]): c for c in record["grid"]["cells"]}
            for cell in cells:
                got = predicted.get((cell["row"], cell["col"]))
                ok = got is not None and _norm(got["text"]) == _norm(cell["text"])
                total += 1
                hits += ok
                if not ok and re.fullmatch(r"[\d.,%]+", cell["text"].strip()):
                    wrong_numbers.append((cell["text"], got and got["text"]))
    assert total == 71
    assert hits / total >= 0.9, (hits, total)
    assert not wrong_numbers  # the Total row's 2,335 (tesseract: 2,535) and every other number
    texts = {c["text"] for r in records for c in r["grid"]["cells"]}
    assert {"2,335", "Q1", "35.5%", "1,204"} <= texts and "Ql" not in texts


@needs_weights
def test_pruned_recogniser_is_kept_beside_its_weights_and_reads_the_same(tmp_path, engine) -> None:
    """The CJK-free head is pruned once per weights file (models.ppocr.recognise._latin_model);
    a second start opens the kept file, and a folder that cannot keep it prunes in memory instead."""
    import shutil

    from models.embedded.weights import PPOCR_REC
    from models.ppocr.recognise import TextRecogniser

    source = shutil.copy(locate(PPOCR_REC, FOLDER), tmp_path / "rec.onnx")
    first = TextRecogniser(Path(source), threads=1)
    kept = sorted(p.name for p in tmp_path.glob("rec.latin-*.onnx"))
    assert len(kept) == 1
    second = TextRecogniser(Path(source), threads=1)
    assert first.characters == second.characters == engine.recogniser.characters
    image, _ = _line(["Total", "1,234.5"])
    crop = np.repeat(np.asarray(image.convert("L"))[:, :, None], 3, axis=2)
    assert second.read([crop])[0].text == first.read([crop])[0].text == engine.recogniser.read([crop])[0].text
    assert "1,234.5" in second.read([crop])[0].text

    # a folder that refuses the file (here: a directory in its place) leaves the pruning in memory
    (tmp_path / kept[0]).unlink()
    (tmp_path / kept[0]).mkdir()
    third = TextRecogniser(Path(source), threads=1)
    assert third.characters == first.characters
    assert (tmp_path / kept[0]).is_dir() and not list(tmp_path.glob("*.part"))


LABELS = ["Total", "Finland", "Domestic", "Imported", "Ireland", "Austria", "Netherlands", "Unemployed"]
NAMES = ["Heptachlor", "Simazine", "Sainsbury", "Eurostat", "Trichloroethylene", "Guichard"]


def _photocopied(text: str, size: int, bold: bool, rng: np.random.Generator, cut: int = 200) -> np.ndarray:
    """`text` as a photocopy keeps it: drawn, blurred, noisy, then thresholded (at 200 of 255
    the strokes swell and the bowls fill in), as the recogniser's 3-channel line crop."""
    font = load_font(size, bold=bold)
    image = Image.new("L", (int(font.getlength(text)) + 20, size * 2), 255)
    ImageDraw.Draw(image).text((10, size // 3), text, fill=0, font=font)
    blurred = np.asarray(image.filter(ImageFilter.GaussianBlur(0.8)), dtype=float)
    grey = blurred + rng.normal(0, 25, blurred.shape)
    binary = np.where(grey < cut, 0, 255).astype(np.uint8)
    return np.repeat(binary[:, :, None], 3, axis=2)


@needs_weights
def test_the_word_list_reads_photocopied_labels_the_greedy_reading_breaks() -> None:
    """Labels with filled-in strokes: the greedy reading gets about half right (`Tatal`,
    `treland`); read again against the word list, most come right, and none it read right is
    broken. Names the list lacks, read cleanly, stay exactly as read."""
    from models.embedded.weights import PPOCR_REC
    from models.ppocr.recognise import RecogniseConfig, TextRecogniser

    path = locate(PPOCR_REC, FOLDER)
    greedy, listed = (
        TextRecogniser(path, threads=1, config=RecogniseConfig(lexicon=lexicon), sha256=PPOCR_REC.sha256)
        for lexicon in ("off", "en")
    )
    rng = np.random.default_rng(0)
    lines = [(w, _photocopied(w, size, bold, rng)) for size in (13, 15) for bold in (False, True) for w in LABELS]
    before = [r.text for r in greedy.read([crop for _, crop in lines])]
    after = [r.text for r in listed.read([crop for _, crop in lines])]
    right_before = sum(b == w for b, (w, _) in zip(before, lines))
    right_after = sum(a == w for a, (w, _) in zip(after, lines))
    broken = [w for b, a, (w, _) in zip(before, after, lines) if b == w and a != w]
    assert right_after >= right_before + 6, (before, after)
    assert not broken, broken
    clean = [np.asarray(_line([name])[0].convert("RGB")) for name in NAMES]
    assert [r.text for r in listed.read(clean)] == [r.text for r in greedy.read(clean)] == NAMES
