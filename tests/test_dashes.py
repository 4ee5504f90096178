"""Placeholder dashes read from a table crop's pixels (models.dashes), and end to end through
PP-OCR, whose text detector drops marks under 3 px on their short side."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from helpers import weights_absent
from PIL import Image, ImageDraw

from models.dashes import placeholder_dashes
from worker.core.types import Word
from worker.devtools.samples import load_font

FONT = 26  # DejaVu Sans at this size: glyphs about 19-20 px tall


def _table(extra=None) -> tuple[Image.Image, list[Word]]:
    """A ruled two-row strip: "Benzene | 100 | <empty>" and "Lead | <empty> | 20", the words as
    an OCR would box them (padded), and whatever `extra` draws."""
    font = load_font(FONT)
    image = Image.new("L", (600, 120), 255)
    draw = ImageDraw.Draw(image)
    for x0, x1 in ((0, 250), (250, 420), (420, 599)):
        for y0, y1 in ((0, 60), (60, 119)):
            draw.rectangle((x0, y0, x1, y1), outline=0, width=2)
    words = []
    for text, x, y in (("Benzene", 12, 14), ("100", 310, 14), ("Lead", 12, 74), ("20", 495, 74)):
        draw.text((x, y), text, fill=0, font=font)
        x0, y0, x1, y1 = draw.textbbox((x, y), text, font=font)
        words.append(Word(text, (x0 - 4, y0 - 6, x1 + 4, y1 + 6), 0.99))
    if extra:
        extra(draw)
    return image, words


def test_a_lone_dash_in_a_ruled_cell_is_read_as_a_word_of_its_own() -> None:
    image, words = _table(lambda d: d.rectangle((500, 31, 507, 33), fill=0))
    found = placeholder_dashes(image, words)
    assert [w.text for w in found] == ["-"]
    x0, y0, x1, y1 = found[0].bbox
    assert (x0, x1) == (500, 508) and y0 < 31 and y1 > 34 and y1 - y0 < 40  # boxed like a line of text


def test_rules_letters_underlines_minus_signs_broken_rules_and_specks_are_not_dashes() -> None:
    assert placeholder_dashes(*_table()) == []  # the frame's rules, the words' glyphs
    cases = {
        "a letter the OCR missed": lambda d: d.rectangle((500, 24, 510, 40), fill=0),
        "an underline under a word": lambda d: d.rectangle((310, 46, 330, 47), fill=0),
        "a minus sign before a number": lambda d: d.rectangle((483, 90, 490, 92), fill=0),
        "a broken rule": lambda d: [d.rectangle((x, 30, x + 7, 31), fill=0) for x in (440, 452, 464, 476)],
        "a speck": lambda d: d.rectangle((500, 30, 502, 32), fill=0),
        "a long bar": lambda d: d.rectangle((440, 31, 520, 33), fill=0),
    }
    for what, draw in cases.items():
        assert placeholder_dashes(*_table(draw)) == [], what


def test_a_broken_rule_between_rows_beside_one_stray_mark_is_not_read_as_dashes() -> None:
    """A photocopy's dotted rule under a row, its pieces far apart, and one glyph-sized mark at
    their height by the frame: no text line runs there, so no piece is a dash; the same pieces
    on the row's text line are."""

    def rule_and_mark(y: int):
        def draw(d: ImageDraw.ImageDraw) -> None:
            for x in (140, 165, 190, 215, 440, 465, 490, 515, 540, 565):
                d.rectangle((x, y, x + 7, y + 1), fill=0)
            d.rectangle((585, 38, 591, 52), fill=0)  # a speck cluster or a piece of the frame

        return draw

    assert placeholder_dashes(*_table(rule_and_mark(45))) == []
    on_the_line = placeholder_dashes(*_table(rule_and_mark(27)))  # the first row's text line
    assert [w.text for w in on_the_line] == ["-"] * 10


def test_a_dash_the_ocr_read_inside_a_word_is_not_read_twice() -> None:
    image, words = _table(lambda d: d.rectangle((500, 31, 507, 33), fill=0))
    words.append(Word("-", (495, 20, 512, 44), 0.9))
    assert placeholder_dashes(image, words) == []
    assert placeholder_dashes(image, []) == []  # no words: no glyph height to judge by


def test_a_dash_the_ocr_boxed_a_pixel_high_is_not_read_twice() -> None:
    """PP-OCR boxes a lone dash one pixel high; on a blurred crop the bar's centre lay a pixel
    under that box, and the cell read "- -"."""
    image, words = _table(lambda d: d.rectangle((500, 31, 507, 33), fill=0))
    words.append(Word("-", (500, 30, 507, 31), 0.96))
    assert placeholder_dashes(image, words) == []


@pytest.mark.skipif(weights_absent() is not None, reason=f"embedded weights absent: {weights_absent()}")
@pytest.mark.parametrize("copy", ["grey", "black-and-white"])
def test_a_scanned_ruled_table_keeps_its_dashes_in_their_cells(tmp_path: Path, copy: str) -> None:
    """A grey scan, and a black-and-white copy, whose crop the models read with its specks wiped
    (and its dashes with them): the dashes are looked for on the crop as cut."""
    from worker.pipeline import extract_document, load_stages
    from worker.settings import Settings
    from worker.storage import LocalStorage

    rows = [
        ["Substance", "to air", "to water", "to land"],
        ["Benzene", "1 000", "200", "-"],
        ["Cadmium", "10", "-", "5"],
        ["Lead", "-", "20", "20"],
        ["Mercury", "10", "1", "-"],
    ]
    font = load_font(26)
    widths, height = [330, 190, 190, 190], 50
    page = Image.new("L", (1240, 1754), 255)  # A4 at 150 dpi
    draw = ImageDraw.Draw(page)
    x_origin, y_origin = 150, 300
    for r, row in enumerate(rows):
        x = x_origin
        for c, text in enumerate(row):
            draw.rectangle((x, y_origin + r * height, x + widths[c], y_origin + (r + 1) * height), outline=0, width=2)
            w = draw.textlength(text, font=font)
            tx = x + 12 if c == 0 else x + (widths[c] - w) / 2
            draw.text((tx, y_origin + r * height + 10), text, fill=0, font=font)
            x += widths[c]
    draw.text((x_origin, 200), "Table 1. Releases by medium, kg/year", fill=0, font=font)
    scan = tmp_path / "dashes.png"
    if copy == "black-and-white":  # a thresholded copy, pixels as they are (a PDF render would antialias them)
        page = page.point(lambda v: 0 if v < 128 else 255)
    page.save(scan, dpi=(150, 150))

    settings = Settings(_env_file=None, engine="embedded", device="cpu", torch_threads=1, ocr={"engine": "ppocr"})
    store = LocalStorage(tmp_path / "out")
    manifest = extract_document(scan, stages=load_stages(settings), storage=store, settings=settings, dpi=150)
    assert manifest["status"] == "complete" and len(manifest["tables"]) == 1
    table_id = manifest["tables"][0]["table_id"]
    record = json.loads((tmp_path / "out" / manifest["doc_id"] / "tables" / f"{table_id}.json").read_text())
    got = {(c["row"], c["col"]): c["text"].strip() for c in record["grid"]["cells"]}
    dashes = {(r, c) for r, row in enumerate(rows) for c, t in enumerate(row) if t == "-"}
    assert {k for k, v in got.items() if v == "-"} == dashes, got
    assert got[(1, 1)] == "1 000" and got[(3, 2)] == "20"
    assert any("placeholder dash" in r for r in record["grid"]["repairs"]), record["grid"]["repairs"]


def test_a_short_piece_of_a_rule_beside_its_long_pieces_is_not_a_dash() -> None:
    """Photocopy, dev eu-012 p5: a rule under a row broke into long pieces and one short enough
    to look like a dash, which a mark at its height let pass ("- 44"). A bar at the height of a
    flat mark longer than any dash is a piece of that rule; alone in its cell, it is a dash."""

    def broken(d: ImageDraw.ImageDraw) -> None:
        d.rectangle((260, 45, 330, 46), fill=0)  # a long piece of the rule
        d.rectangle((500, 45, 507, 46), fill=0)  # a short piece, dash-shaped
        d.rectangle((585, 38, 591, 52), fill=0)  # a mark at its height (a speck, the frame)

    assert placeholder_dashes(*_table(broken)) == []


def test_a_dash_turned_with_a_skewed_page_is_still_a_dash() -> None:
    """Skew-5 scan of dev eu-001 p1: deskewed, a 5 px dash came back 3 px high (its ends a pixel
    apart in height, its edges grey), under twice as wide as high, and two thirds of the table's
    dashes were lost."""
    image, words = _table(lambda d: d.rectangle((500, 31, 506, 34), fill=0))  # 7 x 4 px
    assert [w.text for w in placeholder_dashes(image, words)] == ["-"]


def test_a_clump_of_a_halftone_screen_is_not_a_dash_and_a_dash_on_paper_beside_it_is() -> None:
    """A shaded cell a photocopy turned into a screen of dots: among the dots, clumps as flat
    and solid as a dash. They lie on the row's text line, alone among dots too small to be
    marks; eleven such read as dashes split eu-017 p2's five columns into eleven."""

    def screen_with_clump(d: ImageDraw.ImageDraw) -> None:
        rng = random.Random(0)
        for y in range(4, 58, 3):  # the last cell of the first row, shaded
            for x in range(424, 596, 3):
                if rng.random() < 0.45:
                    d.point((x, y), fill=0)
        d.rectangle((500, 31, 507, 33), fill=0)  # a clump flat as a dash

    def copied(image: Image.Image, words: list[Word]) -> tuple[Image.Image, list[Word]]:
        """Black and white, as a photocopier prints it: only there is a shade a screen of dots."""
        return image.point(lambda v: 0 if v < 128 else 255), words

    assert placeholder_dashes(*copied(*_table(screen_with_clump))) == []

    def screen_below_and_dash_on_paper(d: ImageDraw.ImageDraw) -> None:
        rng = random.Random(1)
        for y in range(64, 116, 3):  # the second row's empty cell, shaded, a clump in it
            for x in range(254, 416, 3):
                if rng.random() < 0.45:
                    d.point((x, y), fill=0)
        d.rectangle((330, 90, 337, 92), fill=0)
        d.rectangle((500, 31, 507, 33), fill=0)  # the first row's empty cell: a dash on paper

    found = placeholder_dashes(*copied(*_table(screen_below_and_dash_on_paper)))
    assert [(w.text, w.bbox[0]) for w in found] == [("-", 500)]


def test_a_bar_the_crops_border_cuts_is_no_dash() -> None:
    # eu-026 p5: the crop ended in the tops of a note's letters, and one of them read as a dash;
    # here a bar on a row's line that the crop's right border cuts (whatever it is part of)
    image, words = _table(lambda d: d.rectangle((552, 31, 559, 33), fill=0))
    assert [w.text for w in placeholder_dashes(image.crop((0, 0, 570, 120)), words)] == ["-"]
    assert placeholder_dashes(image.crop((0, 0, 558, 120)), words) == []
