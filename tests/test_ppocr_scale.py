"""The scale PP-OCR finds a caption strip's lines at (models.ppocr.scale): pure planning, then the
real detector on a large-text line, whose boxes must come back in the image's own pixels."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from models.embedded.weights import OCR_MODELS, EmbeddedWeightsMissing, default_dir, locate
from models.page_normalise import estimate_x_height
from models.ppocr.scale import MIN_SCALE, detection_scale, dpi_floor
from worker.devtools.samples import load_font


def test_text_near_the_target_is_detected_as_it_is() -> None:
    assert detection_scale(11.0, 12.0) == 1.0
    assert detection_scale(15.6, 12.0) == 1.0  # within the band
    assert detection_scale(6.0, 12.0) == 1.0  # small text is never enlarged here


def test_large_text_is_brought_to_the_target() -> None:
    assert detection_scale(24.0, 12.0) == 0.5
    assert detection_scale(16.0, 12.0) == 0.75


def test_unknown_sizes_and_a_zero_target_leave_the_scale_alone() -> None:
    assert detection_scale(0.0, 12.0) == 1.0
    assert detection_scale(24.0, 0.0) == 1.0


def test_an_implausible_x_height_is_not_followed_all_the_way() -> None:
    assert detection_scale(500.0, 12.0) == MIN_SCALE


def test_no_strip_is_reduced_below_the_reference_resolution() -> None:
    assert dpi_floor(144) == dpi_floor(96) == 1.0  # a render-sized page: never reduced
    assert dpi_floor(300) == 0.48 and dpi_floor(200) == 0.72


class _Scales:
    """A detector that records the scale it is asked for and finds nothing."""

    def __init__(self) -> None:
        self.scales: list[float] = []

    def detect(self, rgb: np.ndarray, scale: float = 1.0) -> list:
        self.scales.append(scale)
        return []


def test_strips_and_crops_are_reduced_only_above_the_reference_dpi_and_each_by_its_setting() -> None:
    from models.ppocr.engine import PpOcr

    image, _ = _strip(44, "Total emissions")
    fake = _Scales()
    engine = PpOcr(fake, None, det_x_height=12.0)  # type: ignore[arg-type]
    engine.detect_lines(image)  # det_min_scale 1: a 144-dpi run
    engine.det_min_scale = dpi_floor(300)
    engine.detect_lines(image)
    engine.read(image)  # a table crop, PPOCR_CROP_X_HEIGHT 0: at its own scale
    engine.crop_x_height = 12.0
    engine.read(image)
    engine.det_min_scale = 1.0
    engine.read(image)
    assert fake.scales[0] == 1.0 and 0.25 <= fake.scales[1] < 0.6 and fake.scales[2] == 1.0
    assert fake.scales[3] == fake.scales[1] and fake.scales[4] == 1.0


def _strip(size: int, text: str) -> tuple[Image.Image, tuple[int, int, int, int]]:
    font = load_font(size)
    image = Image.new("L", (int(font.getlength(text)) + 4 * size, size * 4), 255)
    draw = ImageDraw.Draw(image)
    draw.text((2 * size, size), text, fill=0, font=font)
    return image, draw.textbbox((2 * size, size), text, font=font)


def test_the_x_height_estimate_follows_the_text_size() -> None:
    small, _ = _strip(16, "reason and measure")
    large, _ = _strip(48, "reason and measure")
    assert 6 <= estimate_x_height(small) <= 12
    assert 2.5 <= estimate_x_height(large) / estimate_x_height(small) <= 3.5


def _absent() -> bool:
    try:
        for model in OCR_MODELS:
            locate(model, default_dir(None))
    except EmbeddedWeightsMissing:
        return True
    return False


@pytest.mark.skipif(_absent(), reason="PP-OCR weights absent (tablesight models download --engine embedded)")
def test_strip_lines_found_reduced_are_boxed_and_read_in_full_size_pixels() -> None:
    import models.ppocr as ppocr

    image, (x0, y0, x1, y1) = _strip(44, "Total emissions 2,180")
    full = ppocr.load(threads=1, rule_min_px=60)
    reduced = ppocr.load(threads=1, rule_min_px=60, det_x_height=12.0)
    reduced.det_min_scale = dpi_floor(300)
    assert detection_scale(estimate_x_height(image), 12.0) < 0.6
    found = reduced.detect_lines(image)
    assert len(found.boxes) == 1
    bx0, by0, bx1, by1 = found.boxes[0]
    assert bx0 <= x0 + 4 and bx1 >= x1 - 4 and by0 <= y0 + 4 and by1 >= y1 - 4  # the whole line, full-size pixels
    assert bx1 - bx0 < (x1 - x0) * 1.2 and by1 - by0 < (y1 - y0) * 2.0
    (at_full,) = full.detect_lines(image).boxes  # drawn in by the standoff: the box found at full size
    assert all(abs(a - b) <= 3 for a, b in zip(found.boxes[0], at_full)), (found.boxes[0], at_full)
    assert found.rgb.shape[:2] == np.asarray(image).shape  # read from the full-size image
    read = [w.text for line in reduced.read_lines(found, range(1)) for w in line]
    assert read == [w.text for w in full(image)] == ["Total", "emissions", "2,180"]
    assert reduced(image) == full(image)  # a table crop (`read`) at its own scale: PPOCR_CROP_X_HEIGHT 0
    crops = ppocr.load(threads=1, rule_min_px=60, crop_x_height=12.0)
    crops.det_min_scale = dpi_floor(300)
    # found on the reduced copy, read at full size: the same words and boxes; the line box may differ
    # by the standoff's pixels, so a number's confidence (its least sure digit's) by a hair
    got, want = crops(image), full(image)
    assert [(w.text, w.bbox) for w in got] == [(w.text, w.bbox) for w in want]
    assert all(abs((a.confidence or 0) - (b.confidence or 0)) < 0.01 for a, b in zip(got, want))
