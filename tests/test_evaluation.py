"""Evaluation tooling: oracle objects, noise, TEDS normalisation and the oracle eval run.

All data is made up here (a small hand-drawn table and PIL images): the real evaluation set
is research-use only and never copied into tests.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from PIL import Image

from worker.core.html_out import grid_to_html
from worker.core.reconstruct import reconstruct
from worker.core.types import COLUMN, COLUMN_HEADER, ROW, SPANNING_CELL, TABLE
from worker.evaluation.dataset import GtCell, complete_grid, load_tables, thead_rows
from worker.evaluation.noise import LEVELS, add_noise, make_rng
from worker.evaluation.oracle import axis_bounds, layout_words, oracle_from_cells
from worker.evaluation.oracle_eval import format_table, run_oracle_eval
from worker.metrics.teds import is_rectangular, normalize_html, teds

# A 5x4 table: a two-row header whose first cell spans both header rows and whose group label
# spans two columns; a body cell spanning two rows; an empty cell; a two-line cell.
GT_HTML = (
    "<table><thead>"
    '<tr><td rowspan="2"><b>Region</b></td><td colspan="2">Sales &amp; costs</td><td>Note</td></tr>'
    "<tr><td>2023</td><td>2024</td><td><i>unit</i></td></tr>"
    "</thead><tbody>"
    '<tr><td>North</td><td>10</td><td>12</td><td rowspan="2">both years audited</td></tr>'
    "<tr><td>South</td><td>7</td><td></td></tr>"
    "<tr><td>East side\nregion</td><td>3 &lt; 4</td><td>5</td><td>-</td></tr>"
    "</tbody></table>"
)
ROW_Y = [(10, 22), (32, 44), (54, 66), (76, 88), (98, 122)]  # content top/bottom per row
COL_X = [(5, 70), (90, 120), (140, 170), (190, 260)]  # content left/right per column


def _box(r: int, c: int, rs: int = 1, cs: int = 1) -> tuple[float, float, float, float]:
    return (COL_X[c][0], ROW_Y[r][0], COL_X[c + cs - 1][1], ROW_Y[r + rs - 1][1])


def _raw_cells() -> list[dict]:
    spec = [
        (0, 0, 2, 1, "Region"),
        (0, 1, 1, 2, "Sales & costs"),
        (0, 3, 1, 1, "Note"),
        (1, 1, 1, 1, "2023"),
        (1, 2, 1, 1, "2024"),
        (1, 3, 1, 1, "unit"),
        (2, 0, 1, 1, "North"),
        (2, 1, 1, 1, "10"),
        (2, 2, 1, 1, "12"),
        (2, 3, 2, 1, "both years audited"),
        (3, 0, 1, 1, "South"),
        (3, 1, 1, 1, "7"),
        (4, 0, 1, 1, "East side\nregion"),
        (4, 1, 1, 1, "3 < 4"),
        (4, 2, 1, 1, "5"),
        (4, 3, 1, 1, "-"),
    ]
    return [
        {"row": r, "col": c, "rowspan": rs, "colspan": cs, "text": t, "bbox": list(_box(r, c, rs, cs))}
        for r, c, rs, cs, t in spec
    ]  # (3, 2) is empty and left out, as ICDAR does


def _cells() -> list[GtCell]:
    cells = complete_grid(_raw_cells(), 5, 4, header_rows=2)
    assert cells is not None
    return cells


def test_complete_grid_fills_missing_slots_and_rejects_overlap():
    cells = _cells()
    assert sum(c.rowspan * c.colspan for c in cells) == 20
    assert any((c.row, c.col, c.text, c.bbox) == (3, 2, "", None) for c in cells)
    assert all(c.is_header == (c.row < 2) for c in cells)
    overlapping = _raw_cells() + [{"row": 0, "col": 2, "rowspan": 1, "colspan": 1, "text": "x", "bbox": None}]
    assert complete_grid(overlapping, 5, 4, 0) is None
    assert thead_rows(GT_HTML) == 2 and thead_rows("<table><tr><td>a</td></tr></table>") == 0


def test_oracle_objects_rebuild_the_ground_truth_grid():
    oracle = oracle_from_cells(_cells(), 5, 4, (300, 140), header_rows=2)
    labels = [o.label for o in oracle.objects]
    assert labels.count(TABLE) == 1 and labels.count(ROW) == 5 and labels.count(COLUMN) == 4
    assert labels.count(SPANNING_CELL) == 3 and labels.count(COLUMN_HEADER) == 1
    assert all(o.score == 1.0 for o in oracle.objects)

    grid = reconstruct(oracle.objects, oracle.words, image_size=oracle.image_size)
    grid.owner_map()
    expected = sorted((c.row, c.col, c.rowspan, c.colspan) for c in _cells())
    assert grid.shape_signature() == expected
    assert grid.header_rows == 2
    text = {(c.row, c.col): c.text for c in grid.cells}
    assert text[(0, 1)] == "Sales & costs"
    assert text[(2, 3)] == "both years audited"
    assert text[(4, 0)] == "East side region"
    assert text[(3, 2)] == ""
    html = grid_to_html(grid)
    assert teds(html, GT_HTML) == 1.0
    assert teds(html, GT_HTML, structure_only=True) == 1.0


def test_bands_split_halfway_between_neighbouring_content():
    rb = axis_bounds(_cells(), 5, "row", 140)
    assert rb[1:-1] == [27.0, 49.0, 71.0, 93.0]
    assert rb[0] < 10 and rb[-1] > 122 and rb[-1] <= 140
    # a row with no content at all gets a band between its neighbours
    cells = [c for c in _cells() if c.row != 3 or c.is_span]
    cells = [GtCell(c.row, c.col, c.rowspan, c.colspan, c.text, None if c.row == 3 else c.bbox) for c in cells]
    rb2 = axis_bounds(cells, 5, "row", 140)
    assert all(a < b for a, b in zip(rb2, rb2[1:]))
    assert 66 < rb2[3] < rb2[4] < 98


def test_words_are_laid_out_per_token_inside_the_cell_box():
    cell = GtCell(0, 0, 1, 1, "East side\nregion", (0.0, 0.0, 90.0, 20.0))
    words = layout_words(cell)
    assert [w.text for w in words] == ["East", "side", "region"]
    assert words[0].bbox[1] == words[1].bbox[1] < words[2].bbox[1]
    assert all(0 <= w.bbox[0] < w.bbox[2] <= 90 and 0 <= w.bbox[1] < w.bbox[3] <= 20 for w in words)
    wrapped = layout_words(GtCell(0, 0, 1, 1, "a long wrapped line of text", (0, 0, 60, 30)), 10.0)
    assert len({w.bbox[1] for w in wrapped}) == 3
    assert layout_words(GtCell(0, 0, 1, 1, "x", None)) == []


def test_noise_is_deterministic_for_a_seed():
    oracle = oracle_from_cells(_cells(), 5, 4, (300, 140), header_rows=2)
    for name in LEVELS:
        a = add_noise(oracle.objects, name, make_rng(7, "t1", name))
        b = add_noise(oracle.objects, name, make_rng(7, "t1", name))
        assert a == b
    assert add_noise(oracle.objects, "none", make_rng(1, "t1", "none")) == oracle.objects
    high = [add_noise(oracle.objects, "high", make_rng(s, "t1", "high")) for s in range(5)]
    assert any(h != high[0] for h in high[1:])
    assert all(o.score <= 1.0 for h in high for o in h)
    with pytest.raises(ValueError):
        add_noise(oracle.objects, "extreme", random.Random(0))


def test_teds_normalisation_ignores_header_markup_not_spans():
    plain = (
        '<table><tr><td>Region</td><td colspan="2">Sales  &amp; costs</td></tr>'
        "<tr><td>N</td><td>1</td><td>2</td></tr></table>"
    )
    marked = (
        '<table><thead><tr><th><b>Region</b></th><th colspan="2">Sales &amp; <i>costs</i></th></tr>'
        "</thead><tbody><tr><td>N</td><td>1</td><td>2</td></tr></tbody></table>"
    )
    no_tr = (
        '<table><thead><th>Region</th><th colspan="2">Sales &amp; costs</th></thead>'
        "<tr><td>N</td><td>1</td><td>2</td></tr></table>"
    )
    assert normalize_html(plain) == normalize_html(marked) == normalize_html(no_tr)
    assert teds(marked, plain) == 1.0 and teds(no_tr, plain, structure_only=True) == 1.0
    changed = plain.replace('<td colspan="2">Sales  &amp; costs</td>', "<td>Sales &amp; costs</td><td></td>")
    assert teds(changed, plain) < 1.0
    assert teds(changed, plain, structure_only=True) < 1.0
    assert is_rectangular(plain) and not is_rectangular(
        "<table><tr><td>a</td></tr><tr><td>b</td><td>c</td></tr></table>"
    )
    assert teds("", plain) == 0.0


def _write_dataset(root: Path) -> None:
    """Two sources: a good spanning table (+ a flagged and a box-less record), a plain one."""
    (root / "alpha" / "images").mkdir(parents=True)
    (root / "beta" / "images").mkdir(parents=True)
    Image.new("L", (300, 140), 255).save(root / "alpha" / "images" / "t1.png")
    Image.new("L", (200, 80), 255).save(root / "beta" / "images" / "p1.png")
    good = {
        "image": "alpha/images/t1.png",
        "html": GT_HTML,
        "n_rows": 5,
        "n_cols": 4,
        "has_span": True,
        "gt_issue": False,
        "cells": _raw_cells(),
    }
    flagged = {**good, "gt_issue": True}
    boxless = {**good, "cells": [{**c, "bbox": None} for c in _raw_cells()]}
    plain_cells = [
        {
            "row": r,
            "col": c,
            "rowspan": 1,
            "colspan": 1,
            "text": f"v{r}{c}",
            "bbox": [10 + 60 * c, 10 + 25 * r, 40 + 60 * c, 22 + 25 * r],
        }
        for r in range(3)
        for c in range(3)
    ]
    plain_html = (
        "<table>"
        + "".join("<tr>" + "".join(f"<td>v{r}{c}</td>" for c in range(3)) + "</tr>" for r in range(3))
        + "</table>"
    )
    plain = {
        "image": "beta/images/p1.png",
        "html": plain_html,
        "n_rows": 3,
        "n_cols": 3,
        "has_span": False,
        "gt_issue": False,
        "cells": plain_cells,
    }
    with (root / "alpha" / "gt.jsonl").open("w") as fh:
        for rec in (good, flagged, boxless):
            fh.write(json.dumps(rec) + "\n")
    (root / "beta" / "gt.jsonl").write_text(json.dumps(plain) + "\n")


def test_dataset_loading_skips_and_counts(tmp_path: Path):
    _write_dataset(tmp_path)
    tables, skipped = load_tables(tmp_path)
    assert [(t.source, t.table_id) for t in tables] == [("alpha", "t1"), ("beta", "p1")]
    assert skipped == {"alpha": {"gt_issue": 1, "no_cell_bbox": 1}}
    assert tables[0].image_size == (300, 140) and tables[0].header_rows == 2
    assert load_tables(tmp_path, limit=1)[0][0].table_id == "t1"


def test_run_oracle_eval_end_to_end(tmp_path: Path):
    _write_dataset(tmp_path)
    res = run_oracle_eval(tmp_path, ["none", "high"], 3, progress=False)
    assert res["n_tables"] == 2 and res["levels"] == ["none", "high"]
    none = res["summary"]["none"]
    assert {k: none["all"][k] for k in ("n", "teds", "teds_struct")} == {"n": 2, "teds": 1.0, "teds_struct": 1.0}
    assert none["by_source"]["alpha"]["all"]["binding"] == 1.0  # every value under its own labels
    assert none["span"]["n"] == 1 and none["by_source"]["beta"]["all"]["teds"] == 1.0
    assert none["invalid"] == 0 and none["errors"] == 0
    high = res["summary"]["high"]
    assert high["errors"] == 0 and high["invalid"] == 0
    assert 0.0 <= high["all"]["teds"] <= 1.0
    assert len(res["tables"]) == 4
    again = run_oracle_eval(tmp_path, ["high"], 3, progress=False)
    assert again["summary"]["high"]["all"] == high["all"]
    text = format_table(res)
    assert "none" in text and "alpha" in text and "skipped" in text
    json.dumps(res)  # the CLI writes it as JSON
