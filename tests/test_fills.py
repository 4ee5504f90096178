"""Header bands on a fill, flattened before OCR (models.fills), read by the real engines.

A generated header band of white letters on an orange fill, and one of black letters on a
grey fill, over an ordinary body: grey-level OCR reads such letters as noise at scan
resolution. After flattening, the fill is white, the letters dark, and PP-OCR reads the
labels; the body on white paper is left exactly as it was.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import weights_absent
from PIL import Image, ImageDraw, ImageFont

from models.embedded.weights import OCR_MODELS
from models.fills import flatten_fills

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
LABELS = ["Country", "Domestic", "Imported", "Unknown"]


def _table(fill: tuple[int, int, int], ink: tuple[int, int, int]) -> Image.Image:
    font = ImageFont.truetype(FONT, 15)
    img = Image.new("RGB", (640, 130), "white")
    d = ImageDraw.Draw(img)
    d.rectangle((0, 0, 639, 34), fill=fill)
    for i, label in enumerate(LABELS):
        d.text((12 + 160 * i, 8), label, font=font, fill=ink)
    for r, row in enumerate([["Austria", "86.2", "13.8", "0"], ["Belgium", "0", "0", "100.0"]]):
        for i, text in enumerate(row):
            d.text((12 + 160 * i, 50 + 36 * r), text, font=font, fill=(0, 0, 0))
    return img


@pytest.mark.parametrize(
    ("fill", "ink"), [((240, 150, 50), (255, 255, 255)), ((200, 200, 200), (0, 0, 0))], ids=["white-on-orange", "grey"]
)
def test_fill_turns_white_and_its_letters_dark(fill, ink):
    img = _table(fill, ink)
    flat = np.asarray(flatten_fills(img), dtype=np.int16)
    band = flat[2:33]
    assert np.median(band) >= 245  # the fill is paper now
    assert (band < 100).mean() > 0.03  # and the letters are ink
    grey = np.asarray(img.convert("L"), dtype=np.int16)
    assert np.array_equal(flat[40:], grey[40:])  # the body on white paper is untouched


def test_a_page_without_fills_comes_back_unchanged():
    img = _table((255, 255, 255), (0, 0, 0))
    assert np.array_equal(np.asarray(flatten_fills(img)), np.asarray(img.convert("L")))


@pytest.mark.skipif(
    weights_absent(OCR_MODELS) is not None,
    reason="PP-OCR weights absent (tablesight models download --engine embedded)",
)
def test_ppocr_reads_the_labels_of_a_white_on_dark_band_only_once_flattened():
    """PP-OCR, the default engine, reads white letters on a dark fill as noise; flattened,
    it reads every label, and so does the engine the registry loads."""
    import models.ppocr as ppocr

    engine = ppocr.load(threads=1, rule_min_px=28)
    img = _table((70, 90, 140), (255, 255, 255))

    def header(image: Image.Image) -> list[str]:
        return [w.text for w in engine.read(image) if w.bbox[1] < 34]

    assert not all(label in header(img) for label in LABELS)
    assert header(flatten_fills(img).convert("RGB")) == LABELS
    # the engine the registry loads flattens itself (worker.engines.ocr.FillFlattened)
    from helpers import isolated_settings

    from worker.engines.ocr import load_ocr_engine

    s = isolated_settings(ocr={"engine": "ppocr", "threads": 1})
    loaded = load_ocr_engine(s.ocr, 144, s.models)
    assert loaded.name == "ppocr" and [w.text for w in loaded.read(img) if w.bbox[1] < 34] == LABELS


def test_grey_scanned_paper_is_not_a_fill() -> None:
    """An office scan's paper (grey 220-240, with sensor noise) comes back as it was: taken
    for a fill, its noise lighter than its level turned into dark specks and OCR read nothing."""
    import numpy as np
    from PIL import Image, ImageDraw

    from models.fills import flatten_fills

    rng = np.random.default_rng(0)
    page = Image.new("L", (400, 200), 228)
    ImageDraw.Draw(page).text((20, 20), "Total 2,335", fill=30)
    noisy = np.clip(np.asarray(page, dtype=np.float32) + rng.normal(0, 6, (200, 400)), 0, 255).astype(np.uint8)
    scan = Image.fromarray(noisy)
    assert np.array_equal(np.asarray(flatten_fills(scan)), noisy)


def _grainy(img: Image.Image, sigma: float, seed: int) -> Image.Image:
    grey = np.asarray(img.convert("L"), dtype=np.float32)
    grain = np.random.default_rng(seed).normal(0.0, sigma, grey.shape)
    return Image.fromarray(np.clip(grey + grain, 0, 255).astype(np.uint8))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_band_under_sensor_grain_is_still_a_fill(seed: int) -> None:
    """Grain of 16 grey levels makes every block of a grey band vary more than a clean render's
    fill may; the paper around it is as grainy, so the band is still found and flattened."""
    scan = _grainy(_table((150, 150, 150), (255, 255, 255)), 16.0, seed)
    band = np.asarray(flatten_fills(scan), dtype=np.int16)[4:31]
    assert np.median(band) >= 215  # the fill is paper now, grain and all
    assert (band < 100).mean() > 0.03  # and the white letters are dark ink


@pytest.mark.skipif(
    weights_absent(OCR_MODELS) is not None,
    reason="PP-OCR weights absent (tablesight models download --engine embedded)",
)
def test_ppocr_reads_a_grainy_white_on_grey_band_once_flattened() -> None:
    import models.ppocr as ppocr

    engine = ppocr.load(threads=1, rule_min_px=28)
    scan = _grainy(_table((150, 150, 150), (255, 255, 255)), 16.0, 0)
    flat = flatten_fills(scan).convert("RGB")
    assert [w.text for w in engine.read(flat) if w.bbox[1] < 34] == LABELS
