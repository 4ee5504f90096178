"""Whether a page lies sideways, where its ink lines up about as sharply both ways.

A page whose table has tall, bold column rules lines its ink up into columns nearly as sharply as
its text lines line it up into rows; on such a page the ink alone is unsure which way the lines
run (on a bold photocopy of one dev page it turned an upright page by 90 degrees). There the real
tesseract OSD decides; the page comes out upright whichever way it went in.
"""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw, ImageFont

from models.page_normalise import SIDEWAYS_RATIO, UNSURE_SIDEWAYS, NormaliseOptions, normalise_page, sideways_ratio

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"


def _ruled_page(rows: int, lines: int, rule_px: int) -> Image.Image:
    """An A4 page at 144 dpi: `lines` lines of prose over a table of `rows` rows of figures
    between six column rules `rule_px` thick."""
    page = Image.new("L", (1190, 1684), 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.truetype(FONT, 15)
    for r in range(lines):
        draw.text(
            (150, 120 + 26 * r),
            "Correlation coefficients of the spread and yield differences for the series",
            font=font,
            fill=0,
        )
    top = 160 + 26 * lines
    for r in range(rows):
        y = top + 60 * r
        draw.text((150, y), "Q1 2009 – Q4 2009", font=font, fill=0)
        for c in range(5):
            draw.text((480 + 130 * c, y), f"{(r * 7 + c * 3) % 90 / 100:.2f}", font=font, fill=0)
    for c in range(6):
        x = 460 + 130 * c
        draw.rectangle((x, top - 20, x + rule_px - 1, top + 60 * rows), fill=0)
    return page


@pytest.mark.parametrize(("rows", "lines", "rule_px"), [(6, 15, 3), (5, 10, 2)])
@pytest.mark.parametrize("turned", [False, True])
def test_an_unsure_page_is_turned_by_osd_only_when_it_lies_sideways(rows, lines, rule_px, turned):
    page = _ruled_page(rows, lines, rule_px)
    scan = page.rotate(90, expand=True) if turned else page
    ratio = sideways_ratio(scan)
    assert UNSURE_SIDEWAYS[0] <= ratio <= UNSURE_SIDEWAYS[1]  # the ink alone cannot tell ...
    assert ratio <= SIDEWAYS_RATIO  # ... and would leave the turned page sideways
    done = normalise_page(scan, NormaliseOptions(deskew=False))
    assert done.transform.quarter_turns % 2 == (1 if turned else 0)
    assert done.image.size == page.size


def test_without_osd_the_ink_alone_decides():
    """What the second opinion mends: by the ink alone, the turned page stays sideways."""
    scan = _ruled_page(6, 15, 3).rotate(90, expand=True)
    done = normalise_page(scan, NormaliseOptions(deskew=False, osd_when_unsure=False))
    assert done.transform.quarter_turns % 2 == 0
