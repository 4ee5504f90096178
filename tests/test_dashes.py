"""Placeholder dashes read from the pixels of empty cells (models.dashes), and end to end
through PP-OCR, whose text detector drops marks under 3 px on their short side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from models.dashes import dash_in, ink_mask, placeholder_dashes
from models.embedded.weights import MODELS, EmbeddedWeightsMissing, default_dir, locate
from worker.core.types import Cell, Word
from worker.devtools.samples import load_font

UNIT = 12.0  # the table's text height in these crops: 9-pt text at 144 dpi
WORDS = [Word("Benzene", (10, 5, 70, 17), 0.99), Word("100", (110, 5, 135, 17), 0.99)]


def _cell_image(draw_fn, size=(120, 24), frame: bool = False) -> Image.Image:
    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    if frame:
        draw.rectangle((0, 0, size[0] - 1, size[1] - 1), outline=0)
    draw_fn(draw)
    return image


def _found(image: Image.Image) -> tuple[float, float, float, float] | None:
    import numpy as np

    # real crops hold text too: the mask's ink level comes from it
    grey = np.asarray(image).copy()
    grey[0, 0] = 0
    return dash_in(ink_mask(grey), (0.0, 0.0, float(image.width), float(image.height)), UNIT)


def test_a_lone_dash_is_found_inside_its_frame() -> None:
    image = _cell_image(lambda d: d.rectangle((58, 11, 63, 12), fill=0), frame=True)
    box = _found(image)
    assert box is not None and box[0] == 58 and box[2] == 64


def test_a_ruling_line_across_the_cell_a_letter_two_marks_or_a_speck_are_not_dashes() -> None:
    assert _found(_cell_image(lambda d: d.line((0, 12, 119, 12), fill=0))) is None  # a rule
    assert _found(_cell_image(lambda d: d.rectangle((55, 6, 62, 17), fill=0))) is None  # a blob: a letter
    two = _cell_image(lambda d: (d.rectangle((40, 11, 45, 12), fill=0), d.rectangle((70, 11, 75, 12), fill=0)))
    assert _found(two) is None  # two marks: a broken rule, not a placeholder
    assert _found(_cell_image(lambda d: d.point((60, 12), fill=0))) is None  # a speck
    assert _found(_cell_image(lambda d: d.rectangle((30, 11, 90, 12), fill=0))) is None  # too long: an underline


def test_only_empty_body_cells_get_a_dash_sized_like_a_word() -> None:
    image = Image.new("L", (240, 48), 255)
    draw = ImageDraw.Draw(image)
    draw.rectangle((178, 35, 183, 36), fill=0)  # a dash in the empty body cell
    draw.rectangle((58, 11, 63, 12), fill=0)  # and one in the header cell, which has no text either
    draw.text((10, 26), "Benzene", fill=0)
    cells = [
        Cell(0, 0, colspan=2, text="", bbox=(0, 0, 240, 24), is_header=True),
        Cell(1, 0, text="Benzene", bbox=(0, 24, 120, 48)),
        Cell(1, 1, text="", bbox=(120, 24, 240, 48)),
    ]
    found = placeholder_dashes(image, cells, WORDS)
    assert [w.text for w in found] == ["-"]
    x0, y0, x1, y1 = found[0].bbox
    assert (x0, x1) == (178, 184) and 24 <= y0 < 35 and 36 < y1 <= 48  # a line's height about the bar
    assert placeholder_dashes(image, cells, []) == []  # no words: no text height to judge by


def _weights_absent() -> str | None:
    try:
        for model in MODELS:
            locate(model, default_dir(None))
    except EmbeddedWeightsMissing as exc:
        return str(exc)
    return None


@pytest.mark.skipif(_weights_absent() is not None, reason=f"embedded weights absent: {_weights_absent()}")
def test_a_scanned_ruled_table_keeps_its_dashes_in_their_cells(tmp_path: Path) -> None:
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
    pdf = tmp_path / "dashes.pdf"
    page.convert("RGB").save(pdf, resolution=150)

    settings = Settings(_env_file=None, engine="embedded", device="cpu", torch_threads=1, ocr={"engine": "ppocr"})
    store = LocalStorage(tmp_path / "out")
    manifest = extract_document(pdf, stages=load_stages(settings), storage=store, settings=settings)
    assert manifest["status"] == "complete" and len(manifest["tables"]) == 1
    table_id = manifest["tables"][0]["table_id"]
    record = json.loads((tmp_path / "out" / manifest["doc_id"] / "tables" / f"{table_id}.json").read_text())
    got = {(c["row"], c["col"]): c["text"].strip() for c in record["grid"]["cells"]}
    dashes = {(r, c) for r, row in enumerate(rows) for c, t in enumerate(row) if t == "-"}
    assert {k for k, v in got.items() if v == "-"} == dashes, got
    assert got[(1, 1)] == "1 000" and got[(3, 2)] == "20"
    assert any("placeholder dash" in r for r in record["grid"]["repairs"]), record["grid"]["repairs"]
