"""Upright or upside down: a page whose ink test leans upside down, but not surely, is settled by
tesseract's OSD (models.page_normalise). A photocopy's strokes took an upright dev page to 0.79
and it was turned over, every cell then read upside down."""

from __future__ import annotations

from PIL import Image, ImageDraw

from models.page_normalise import SURE_UPSIDE_DOWN, UPSIDE_DOWN_RATIO, NormaliseOptions, ascender_ratio, normalise_page
from worker.devtools.samples import load_font

# words with descenders and few ascenders: upright, the ink under the baseline nearly matches
# the ink over the x-height band
WORDS = ["gym", "query", "spray", "pygmy", "gypsy", "jury", "map", "syrup", "energy", "money", "quay", "pray"]
WORDS += ["bulk", "field", "the", "hold", "lid", "bid", "kit", "dial", "hill"]


def _page() -> Image.Image:
    page = Image.new("L", (1190, 1684), 255)
    draw = ImageDraw.Draw(page)
    font = load_font(22)
    for i in range(40):
        draw.text((100, 100 + i * 36), " ".join(WORDS[(i + k) % len(WORDS)] for k in range(8)), fill=0, font=font)
    return page


def test_a_page_that_leans_upside_down_by_its_ink_is_settled_by_osd_both_ways() -> None:
    page = _page()
    assert SURE_UPSIDE_DOWN <= ascender_ratio(page) < UPSIDE_DOWN_RATIO  # the ink test alone would turn it over
    assert normalise_page(page, NormaliseOptions()).transform.quarter_turns == 0
    assert normalise_page(page.rotate(180), NormaliseOptions()).transform.quarter_turns == 2
    # without OSD the ink test decides, as before
    assert normalise_page(page, NormaliseOptions(osd_when_unsure=False)).transform.quarter_turns == 2
