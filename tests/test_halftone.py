"""Shaded header bands a photocopy turned into screens of dots, read back (models.halftone).

A generated table whose header sits on a fill is thresholded with noise, as a photocopier or a
black-and-white scan does it: the fill becomes scattered dots, white on black for a dark fill,
black on white for a light one. The screen is found (and the body's text is not taken for one),
and after the descreened clean-up the real PP-OCR reads at least three of the band's four labels,
where the plain clean-up gives the light band at most two.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import weights_absent
from PIL import Image, ImageDraw, ImageFont

from models.embedded.weights import OCR_MODELS
from models.halftone import descreen, screen_mask
from models.page_normalise import soften_binary

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
LABELS = ["Country", "Domestic", "Imported", "Unknown"]
BAND = 40  # the header band's height (px)


def _photocopy(fill: int, letters: int, seed: int) -> Image.Image:
    """A header band of `letters` on `fill` (grey levels) over a black-on-white body, thresholded
    after noise: the fill's level sits near the threshold, so it comes out as dots."""
    font = ImageFont.truetype(FONT, 17)
    img = Image.new("L", (720, 150), 255)
    d = ImageDraw.Draw(img)
    d.rectangle((0, 0, 719, BAND - 1), fill=fill)
    for i, label in enumerate(LABELS):
        d.text((14 + 180 * i, 10), label, font=font, fill=letters)
    for r, row in enumerate([["Austria", "86.2", "13.8", "0"], ["Belgium", "0", "0", "100.0"]]):
        for i, text in enumerate(row):
            d.text((14 + 180 * i, 58 + 40 * r), text, font=font, fill=0)
    grey = np.asarray(img, dtype=np.float32)
    grey += np.random.default_rng(seed).normal(0.0, 30.0, grey.shape)
    return Image.fromarray(np.where(grey < 150, 0, 255).astype(np.uint8))


@pytest.mark.parametrize(("fill", "letters"), [(115, 255), (185, 0)], ids=["white-on-dark", "dark-on-light"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_screen_is_found_and_the_body_is_not(fill, letters, seed):
    ink = np.asarray(_photocopy(fill, letters, seed)) < 128
    mask = screen_mask(ink)
    assert mask[3 : BAND - 3].mean() > 0.9  # the band, its letters included
    assert mask[BAND + 6 :].mean() < 0.01  # text on white paper is no screen


def test_a_black_and_white_crop_without_a_screen_comes_back_as_it_was():
    grey = np.asarray(_photocopy(255, 0, 0), dtype=np.float32)
    assert descreen(grey) is grey


def test_the_screen_turns_to_paper_and_its_letters_to_ink():
    grey = np.asarray(_photocopy(115, 255, 0), dtype=np.float32)
    band = descreen(grey)[3 : BAND - 3]
    assert np.median(band) >= 245  # the dots are gone ...
    assert (band < 100).mean() > 0.04  # ... and the white letters are dark strokes


@pytest.mark.skipif(
    weights_absent(OCR_MODELS) is not None,
    reason="PP-OCR weights absent (tablesight models download --engine embedded)",
)
@pytest.mark.parametrize(("fill", "letters"), [(115, 255), (185, 0)], ids=["white-on-dark", "dark-on-light"])
@pytest.mark.parametrize("seed", [0, 1])
def test_ppocr_reads_the_screened_labels_once_descreened(fill, letters, seed):
    """The real recogniser reads the light band as noise after the plain clean-up (at most two
    labels), and nearly every label of either band after the descreened one. (The plain clean-up
    reads the dark band too since it inverts dark bands, models.dark_bands: tests/test_dark_bands.py.)"""
    import models.ppocr as ppocr

    engine = ppocr.load(threads=1, rule_min_px=28)
    crop = _photocopy(fill, letters, seed)

    def labels_read(image: Image.Image) -> int:
        header = [w.text for w in engine.read(image.convert("RGB")) if w.bbox[1] < BAND]
        return sum(label in header for label in LABELS)

    if letters == 0:
        assert labels_read(soften_binary(crop)) <= 2
    assert labels_read(soften_binary(crop, descreen=True)) >= 3
