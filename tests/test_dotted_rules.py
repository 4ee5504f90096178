"""Dotted and broken rules drawn solid (models.dotted_rules): the rules a photocopy turned to
dots come back whole, the letters and a page without such rules are left as they are."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from helpers import weights_absent
from PIL import Image, ImageDraw, ImageFont

from models.dotted_rules import solid_rules
from worker.pipeline import extract_document, load_stages
from worker.settings import Settings
from worker.storage import LocalStorage

ROWS = ["Country | Domestic | Imported | Total"] + [
    f"{name} | {40 + 7 * i}.{i} | {3 + i}.{9 - i} | {1000 + 377 * i:,}"
    for i, name in enumerate(["Austria", "Belgium", "Bulgaria", "Cyprus", "Denmark", "Estonia", "Finland", "France"])
]
X0, Y0, PITCH, WIDTH = 120, 200, 34, 860


def _page(dotted: bool, seed: int = 0) -> Image.Image:
    """The table's rows, with a rule under each: dotted, some dots lost (as a photocopy leaves a
    thin grey rule), or none at all."""
    page = Image.new("L", (1190, 1684), 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=20)
    for i, line in enumerate(ROWS):
        for text, x in zip(line.split("|"), (0, 330, 520, 720)):
            draw.text((X0 + x, Y0 + i * PITCH), text.strip(), fill=0, font=font)
    rng = random.Random(seed)
    for i in range(len(ROWS) - 1) if dotted else ():
        y = _rule_y(i)
        for x in range(X0, X0 + WIDTH, 2):
            if rng.random() < 0.8:
                draw.rectangle((x, y, x, y), fill=0)
    return page


def _rule_y(i: int) -> int:
    return Y0 + i * PITCH + 28  # in the gap under row i's letters


def test_dotted_rules_are_drawn_solid_and_the_letters_are_left_alone() -> None:
    for seed in (0, 1, 2):
        page = _page(dotted=True, seed=seed)
        drawn = solid_rules(page)
        assert drawn is not None
        grey, before = np.asarray(drawn), np.asarray(page)
        inked = [float((grey[_rule_y(i), X0 : X0 + WIDTH - 2] < 128).mean()) for i in range(len(ROWS) - 1)]
        # 40% inked as dotted; whole but where the dots lost run longer than the gap closed
        assert min(inked) > 0.9 and sum(inked) / len(inked) > 0.97, (seed, inked)
        changed = np.argwhere(grey != before)
        # every pixel drawn lies on a rule's line, none on a letter
        assert set(changed[:, 0].tolist()) <= {_rule_y(i) for i in range(len(ROWS) - 1)}


def test_a_page_without_dotted_rules_has_nothing_to_draw() -> None:
    assert solid_rules(_page(dotted=False)) is None
    assert solid_rules(Image.new("L", (600, 800), 255)) is None


@pytest.mark.skipif(weights_absent() is not None, reason=f"embedded weights absent: {weights_absent()}")
def test_the_pipeline_finds_a_table_its_detector_lost_to_dotted_rules(tmp_path: Path) -> None:
    """The scanned page of a table ruled with dotted lines: the layout detector finds nothing on
    it, nor on it as it came in; with its rules drawn solid it finds the table, and the cells
    are read under their columns. With the fallback off the page yields no table."""
    pdf = tmp_path / "dotted.pdf"
    _page(dotted=True).convert("RGB").save(pdf, resolution=144.0)
    found = {}
    for on in (True, False):
        settings = Settings(
            _env_file=None,
            engine="embedded",
            device="cpu",
            ocr={"engine": "ppocr"},  # the product's choice once its files are there (tesseract misreads this font)
            normalise={"solid_dotted_rules": on},
            dpi=144,
        )
        manifest = extract_document(
            pdf, stages=load_stages(settings), storage=LocalStorage(tmp_path / f"out-{on}"), settings=settings
        )
        folder = tmp_path / f"out-{on}" / manifest["doc_id"] / "tables"
        found[on] = [json.loads((folder / f"{t['table_id']}.json").read_text()) for t in manifest["tables"]]
    assert found[False] == []
    (table,) = found[True]
    grid = table["grid"]
    rows: dict[int, dict[int, str]] = {}
    for cell in grid["cells"]:
        rows.setdefault(cell["row"], {})[cell["col"]] = cell["text"]
    assert grid["n_cols"] == 4 and grid["n_rows"] == len(ROWS)
    assert [rows[0][c] for c in range(4)] == ["Country", "Domestic", "Imported", "Total"]
    names = ["Austria", "Belgium", "Bulgaria", "Cyprus", "Denmark", "Estonia", "Finland", "France"]
    for i in range(len(names)):  # every number in its row and column
        assert [rows[i + 1][c] for c in (1, 2, 3)] == [f"{40 + 7 * i}.{i}", f"{3 + i}.{9 - i}", f"{1000 + 377 * i:,}"]
    # the labels too, but for an OCR slip on this font (it has read "Austria" as "Austr\u00eda")
    assert sum(rows[i + 1][0] == name for i, name in enumerate(names)) >= 7
