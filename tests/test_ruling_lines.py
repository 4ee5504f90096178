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
