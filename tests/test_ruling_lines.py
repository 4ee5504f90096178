"""Ruling lines found on a table image: the positions reconstruction snaps boundaries onto,
from the same detection OCR uses to erase them."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from models.ocr import erase_rules
from models.rules import find_ruling_lines
from worker.core.reconstruct import reconstruct
from worker.core.types import StructureObject, Word


def _ruled(width: int = 300, height: int = 160) -> Image.Image:
    im = Image.new("L", (width, height), 255)
    d = ImageDraw.Draw(im)
    for y in (10, 50, 90, 150):
        d.line([(10, y), (290, y)], fill=0, width=2)
    for x in (10, 150, 290):
        d.line([(x, 10), (x, 150)], fill=0, width=1)
    d.rectangle([40, 60, 46, 80], fill=0)  # a glyph stroke: short, not a rule
    return im


def test_lines_found_where_drawn_and_glyphs_ignored():
    lines = find_ruling_lines(_ruled(), min_len=40)
    assert [round(y) for y in lines.h] == [10, 50, 90, 150]
    assert [round(x) for x in lines.v] == [10, 150, 290]


def test_erasure_and_positions_agree():
    im = _ruled()
    erased = erase_rules(im, 40)
    assert find_ruling_lines(erased, min_len=40).h == ()
    assert erased.getpixel((43, 70)) == 0  # the glyph survives


def test_rows_snap_onto_found_lines():
    lines = find_ruling_lines(_ruled(), min_len=40)
    objs = [StructureObject("table", 0.99, (10, 10, 290, 150))]
    objs += [StructureObject("table row", 0.9, (10, y0, 290, y1)) for y0, y1 in ((10, 58), (58, 97), (97, 150))]
    objs += [StructureObject("table column", 0.9, (x0, 10, x1, 150)) for x0, x1 in ((10, 150), (150, 290))]
    words = [
        Word(f"W{r}{c}", (30 + 140 * c, y - 8, 90 + 140 * c, y + 8))
        for r, y in enumerate((30, 70, 120))
        for c in (0, 1)
    ]
    grid = reconstruct(objs, words, (300.0, 160.0), lines=lines)
    assert [round(b[1]) for b in grid.row_bboxes] == [10, 50, 90]
    assert {(c.row, c.col): c.text for c in grid.cells} == {(r, c): f"W{r}{c}" for r in range(3) for c in range(2)}


def test_each_rule_knows_where_it_is_drawn_and_a_photocopys_breaks_do_not_part_it():
    im = Image.new("L", (300, 160), 255)
    d = ImageDraw.Draw(im)
    d.line([(10, 10), (290, 10)], fill=0, width=1)
    d.line([(10, 80), (60, 80)], fill=0, width=1)  # a rule a photocopy broke: one piece long enough
    for x0 in (*range(64, 250, 24), 270):  # to be found, the rest 21-px pieces 3 px apart
        d.line([(x0, 80), (x0 + 20, 80)], fill=0, width=1)
    d.line([(10, 150), (140, 150)], fill=0, width=1)  # stops halfway: a cell spans across
    d.line([(200, 150), (290, 150)], fill=0, width=1)
    d.rectangle([60, 140, 61, 152], fill=0)  # a letter's stem on the rule's line
    lines = find_ruling_lines(im, min_len=40)
    assert [round(y) for y in lines.h] == [10, 80, 150]
    top, broken, last = lines.h_runs
    assert top == ((10.0, 291.0),)
    # the pieces the rule's own detection drops (shorter than min_len) still say where it is drawn
    assert sum(b - a for a, b in broken) >= 0.85 * 281 and broken[0][0] == 10.0 and broken[-1][1] == 291.0
    assert last == ((10.0, 141.0), (200.0, 291.0))


def test_a_shaded_fill_on_a_rules_line_is_not_the_rule_drawn_on():
    im = Image.new("L", (300, 160), 255)
    d = ImageDraw.Draw(im)
    d.line([(10, 80), (150, 80)], fill=0, width=1)  # the rule stops where a shaded cell begins
    d.rectangle([151, 60, 290, 100], fill=90)
    lines = find_ruling_lines(im, min_len=40)
    assert [round(y) for y in lines.h] == [80]
    ((stretch,),) = lines.h_runs  # drawn up to the fill's edge (its outermost pixels have paper beside them)
    assert stretch[0] == 10.0 and 151.0 <= stretch[1] <= 154.0


def test_a_thin_vertical_rule_a_photocopy_broke_is_found_and_stacked_text_is_not():
    # eu-007 p3's photocopy: one-pixel column rules broken every 20-27 px by 1-3 px drop-outs,
    # no piece as long as a rule; beside them, letters' stems stacked a leading apart
    im = Image.new("L", (300, 120), 255)
    d = ImageDraw.Draw(im)
    d.line([(10, 10), (290, 10)], fill=0, width=1)
    d.line([(10, 110), (290, 110)], fill=0, width=1)
    y = 10
    for k, piece in enumerate((24, 20, 27, 22)):
        d.line([(150, y), (150, y + piece - 1)], fill=0, width=1)
        y += piece + (1, 3, 2, 1)[k]
    for y0 in range(14, 104, 17):  # a column of "l"s: 12 px stems, 5 px apart
        d.rectangle([60, y0, 61, y0 + 11], fill=0)
    lines = find_ruling_lines(im, min_len=40)
    assert [round(x) for x in lines.v] == [150]
    ((a, b),) = lines.v_runs[0]  # drawn from top to bottom: the drop-outs are no gaps
    assert a <= 11 and b >= 99


def test_serifs_along_a_text_line_are_no_rule():
    # a serif face's feet along a baseline: 4 px pieces 2 px apart over a whole phrase
    im = Image.new("L", (300, 60), 255)
    d = ImageDraw.Draw(im)
    for x0 in range(20, 260, 6):
        d.line([(x0, 30), (x0 + 3, 30)], fill=0, width=1)
    assert find_ruling_lines(im, min_len=40).h == ()


def test_a_rules_end_broken_by_single_pixel_drop_outs_is_still_drawn():
    # the left rule's top broken into 8 px pieces 1 px apart (eu-007 p3: the frame read open)
    im = Image.new("L", (200, 120), 255)
    d = ImageDraw.Draw(im)
    d.line([(10, 50), (10, 110)], fill=0, width=1)
    for y0 in (10, 19, 28, 37):
        d.line([(10, y0), (10, y0 + 7)], fill=0, width=1)
    d.line([(10, 46), (10, 48)], fill=0, width=1)
    ((a, b),) = find_ruling_lines(im, min_len=40).v_runs[0]
    assert a == 10.0 and b == 111.0


def test_letters_stacked_over_dense_rows_rules_and_a_dithered_fill_are_no_rule():
    # eu-020 p3's photocopy: capitals 14 px tall, 2-3 px clear of the rules between rows, one
    # over the other at the cells' left edges; a header band the photocopy dithered
    im = Image.new("L", (300, 200), 255)
    d = ImageDraw.Draw(im)
    for y in (10, 30, 50, 70, 90, 190):
        d.line([(10, y), (290, y)], fill=0, width=1)
    for y in (30, 50, 70):
        d.rectangle([40, y - 16, 42, y - 3], fill=0)  # a capital's stem and round side
        d.rectangle([40, y + 3, 44, y + 16], fill=0)
    rng = np.random.default_rng(0)
    dots = rng.random((80, 80)) < 0.7
    band = np.where(dots, 0, 255).astype(np.uint8)
    im.paste(Image.fromarray(band), (150, 100))
    assert find_ruling_lines(im, min_len=28).v == ()
