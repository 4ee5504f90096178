"""Bold labels on a photocopied light grey band, read again with the band's dots cleared
(models.bold_screens, worker.pipeline.table.read_bold_screens).

A generated table whose header band is light grey with bold black labels is thresholded with
noise, as a photocopier does it: the band becomes a field of black dots (a quarter to two fifths
ink) over the labels. The real PP-OCR then finds no line in the band at all; after the second
read, at least three of its four labels are read. Thin labels on the same band, which the
opening would erase, are left alone, and a dark band whose white labels the first read already
has gets nothing added.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import weights_absent
from PIL import Image, ImageDraw, ImageFont

from models.bold_screens import bold_screens, opening
from models.embedded.weights import OCR_MODELS
from models.page_normalise import soften_binary
from worker.core.types import Word
from worker.pipeline.screen_labels import read_bold_screens

BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
REGULAR = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
LABELS = ["Country", "Domestic", "Imported", "Unknown"]
BAND = 40  # the header band's height (px)
COLUMN_RULES = (170, 350, 530)


def _photocopy(fill: int, seed: int, font: str = BOLD, letters: int = 0) -> Image.Image:
    """A ruled table whose header band is `fill` grey with `letters` labels, thresholded after noise."""
    face = ImageFont.truetype(font, 17)
    img = Image.new("L", (720, 150), 255)
    d = ImageDraw.Draw(img)
    d.rectangle((0, 0, 719, BAND - 1), fill=fill)
    for x in COLUMN_RULES:
        d.line((x, 0, x, 149), fill=0, width=2)
    d.line((0, BAND, 719, BAND), fill=0, width=2)
    for i, label in enumerate(LABELS):
        d.text((14 + 180 * i, 10), label, font=face, fill=letters)
    for r, row in enumerate([["Austria", "86.2", "13.8", "0"], ["Belgium", "0", "0", "100.0"]]):
        for i, text in enumerate(row):
            d.text((14 + 180 * i, 58 + 40 * r), text, font=face, fill=0)
    grey = np.asarray(img, dtype=np.float32) + np.random.default_rng(seed).normal(0.0, 30.0, (150, 720))
    return Image.fromarray(np.where(grey < 150, 0, 255).astype(np.uint8))


def test_the_opening_keeps_strokes_three_pixels_wide_and_drops_dots():
    mask = np.zeros((20, 20), dtype=bool)
    mask[2:18, 4:7] = True  # a stroke 3 px wide
    mask[5, 12] = mask[9, 15] = mask[10, 15] = True  # a dot and a pair
    opened = opening(mask, 3)
    assert opened[2:18, 4:7].all()
    assert not opened[:, 10:].any()


@pytest.mark.parametrize("fill", [165, 175])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_light_band_of_bold_labels_is_given_back_cleared(fill, seed):
    image = _photocopy(fill, seed)
    grey = np.asarray(image)
    assert (grey[5 : BAND - 5, 360:370] < 128).mean() > 0.2  # between labels: a field of dots
    bands = bold_screens(grey)
    assert len(bands) == 1
    (x0, y0, x1, y1), pixels = bands[0]
    assert y0 <= 2 and BAND - 2 <= y1 <= BAND + 12 and x1 - x0 > 600  # the band, not the body
    cleared = pixels < 128
    assert cleared[5 - y0 : BAND - 5 - y0, 360 - x0 : 370 - x0].mean() < 0.02  # the dots are gone ...
    assert cleared[:, 170 - x0 : 172 - x0].mean() > 0.9  # ... the column rule kept ...
    assert cleared[12 - y0 : 28 - y0, 14 - x0 : 90 - x0].mean() > 0.15  # ... and the label's strokes


def test_thin_labels_on_a_band_are_not_given_back():
    """A regular weight's strokes are narrower than the opening: it would erase them."""
    assert bold_screens(np.asarray(_photocopy(170, 0, font=REGULAR))) == []


def test_a_crop_without_a_band_gives_nothing_back():
    assert bold_screens(np.asarray(_photocopy(255, 0))) == []


def test_a_first_read_in_the_band_is_kept_and_junk_under_a_new_word_goes():
    image = _photocopy(170, 0)
    country = Word("Cuntry", (14.0, 10.0, 80.0, 30.0), 0.9)  # read the first time: stays as it was
    speck = Word(".", (200.0, 14.0, 204.0, 18.0), 0.4)  # junk where a new word lands: goes

    def second_read(_: Image.Image) -> list[Word]:
        return [Word("Country", (14.0, 10.0, 84.0, 30.0), 0.99), Word("Domestic", (194.0, 10.0, 280.0, 30.0), 0.98)]

    words, added = read_bold_screens(image, [country, speck], second_read)
    assert added == 1
    assert [w.text for w in words] == ["Cuntry", "Domestic"]


@pytest.mark.skipif(
    weights_absent(OCR_MODELS) is not None,
    reason="PP-OCR weights absent (tablesight models download --engine embedded)",
)
@pytest.mark.parametrize(("fill", "letters"), [(170, 0), (180, 0), (115, 255)], ids=["light", "lighter", "dark"])
@pytest.mark.parametrize("seed", [1, 2])
def test_ppocr_reads_the_bold_labels_of_a_light_band_on_the_second_read(fill, letters, seed):
    import models.ppocr as ppocr

    engine = ppocr.load(threads=1, rule_min_px=28)
    image = _photocopy(fill, seed, letters=letters)
    first = engine.read(soften_binary(image).convert("RGB"))
    words, added = read_bold_screens(image, first, engine.read)
    header = {w.text for w in words if w.bbox[1] < BAND}
    if letters:  # white labels on a dark band: read the first time, nothing added
        assert sum(label in {w.text for w in first} for label in LABELS) >= 3
        assert added == 0
        return
    assert not [w for w in first if w.bbox[1] < BAND]  # the band's dots hide every line
    assert sum(label in header for label in LABELS) >= 3
    body = [w.text for w in words if w.bbox[1] > BAND + 5]
    assert "Austria" in body and "100.0" in body  # the body as read the first time
