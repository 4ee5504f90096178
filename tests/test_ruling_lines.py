"""Ruling lines found on a table image: the positions reconstruction snaps boundaries onto,
from the same detection OCR uses to erase them."""

from __future__ import annotations

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
