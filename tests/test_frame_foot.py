"""Text under a closed ruled frame that runs across the frame's column rules is cut off the
table's box; text that keeps to the columns is the table's (models.frame_foot)."""

from __future__ import annotations

from PIL import Image, ImageDraw, ImageFont

from models.frame_foot import cut_under_frame

DPI = 144
MARGINS = (8.0, 8.0)
LEFT, RIGHT, TOP, MID, BOTTOM = 300, 880, 180, 210, 240
COLUMNS = (LEFT, 470, 560, 690, RIGHT)
FRAME = (float(LEFT), float(TOP), float(RIGHT), float(BOTTOM))


def _page(sides: bool = True, under: str = "") -> Image.Image:
    """A boxed two-row table (eu-007 p5's "Products | Butter | Margarine | Low fat products"),
    with `under` drawn beneath it: "source" (a note starting left of the frame), "totals" (a
    row in the frame's columns) or nothing."""
    im = Image.new("L", (1190, 500), 255)
    d = ImageDraw.Draw(im)
    font = ImageFont.load_default(size=16)
    for y in (TOP, MID, BOTTOM):
        d.line([(LEFT, y), (RIGHT, y)], fill=0, width=2)
    for x in COLUMNS if sides else COLUMNS[1:-1]:
        d.line([(x, TOP), (x, BOTTOM)], fill=0, width=2)
    rows = (("Products", "Butter", "Margarine", "Low fat products"), ("Turnover Ffr. m.", "6028", "1385", "836"))
    for r, row in enumerate(rows):
        for x, text in zip(COLUMNS, row):
            d.text((x + 8, TOP + 6 + 30 * r), text, fill=0, font=font)
    if under == "source":
        d.text((250, 262), "Source: EUROSTAF, 1998", fill=0, font=font)
    elif under == "totals":
        for x, text in zip(COLUMNS, ("Total", "6028", "1385", "836")):
            d.text((x + 8, 250), text, fill=0, font=font)
    for x, y in ((650, 300), (655, 302), (420, 310)):  # specks a photocopy left
        d.rectangle([x, y, x + 3, y + 3], fill=0)
    return im


def test_a_source_line_running_across_the_frames_side_is_cut_off():
    # eu-007 p5 on a photocopy: the box reached 74 px under the frame, over the source line
    box = (292.0, 176.0, 895.0, 322.0)
    x0, y0, x1, y1 = cut_under_frame(_page(under="source"), box, FRAME, DPI, MARGINS)
    assert (x0, y0, x1) == box[:3]
    assert BOTTOM <= y1 and y1 + MARGINS[1] < 262  # the crop ends over the note, under the frame


def test_a_row_in_the_frames_columns_under_it_stays():
    box = (292.0, 176.0, 895.0, 322.0)
    assert cut_under_frame(_page(under="totals"), box, FRAME, DPI, MARGINS) == box


def test_a_frame_open_at_its_sides_cuts_nothing():
    # rules across and between the columns, none at the sides: not a closed box
    box = (292.0, 176.0, 895.0, 322.0)
    assert cut_under_frame(_page(sides=False, under="source"), box, FRAME, DPI, MARGINS) == box


def test_specks_under_the_frame_are_no_line():
    box = (292.0, 176.0, 895.0, 322.0)
    assert cut_under_frame(_page(), box, FRAME, DPI, MARGINS) == box
