"""`tablesight eval totals` on a small evaluation set made from the sample tables (real tesseract)."""

from __future__ import annotations

import html
import json
from pathlib import Path

from worker.devtools.samples import _spec, financial_table, render_table
from worker.evaluation.totals_eval import format_table, run_totals_eval


def _record(name: str, spec, root: Path) -> dict:
    image, cells = render_table(spec, scale=0.75)  # ~13 px digits: what a 144-dpi render gives
    image.save(root / "set" / "images" / f"{name}.png")
    n_rows, n_cols = spec.shape
    rows = "".join(
        "<tr>"
        + "".join(
            f'<td rowspan="{c["rowspan"]}" colspan="{c["colspan"]}">{html.escape(c["text"])}</td>'
            for c in cells
            if c["row"] == r
        )
        + "</tr>"
        for r in range(n_rows)
    )
    return {
        "image": f"set/images/{name}.png",
        "html": f"<table>{rows}</table>",
        "n_rows": n_rows,
        "n_cols": n_cols,
        "has_span": True,
        "gt_issue": False,
        "cells": [
            {k: c[k] for k in ("row", "col", "rowspan", "colspan", "text")} | {"bbox": list(c["text_bbox"])}
            for c in cells
        ],
    }


def test_eval_totals_on_ground_truth_and_ocr(tmp_path: Path) -> None:
    (tmp_path / "set" / "images").mkdir(parents=True)
    wrong = _spec(
        [[(c.text, c.rowspan, c.colspan) for c in row] for row in financial_table().rows[:-1]]
        + [[("Total", 1, 2), "3,340", "2,155", "3,635", "2,835"]],
        header_rows=2,
    )
    records = [_record("fin", financial_table(), tmp_path), _record("wrong", wrong, tmp_path)]
    (tmp_path / "set" / "gt.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    res = run_totals_eval(tmp_path, words="ocr", progress=False)
    s = res["summary"]
    assert s["tables"] == 2 and s["tables_with_totals"] == 2
    assert s["gt"] == {"checked": 8, "agreed": 7, "mismatched": 1, "unverified": 0}
    assert list(s["gt_mismatches"]) == ["set/wrong"]  # the printed total that does not add up
    ocr = s["ocr"]
    assert ocr["tables"] == 2 and ocr["false_alarms"] == ["Total / 2024 / Cost"]  # printed wrong, read right
    assert ocr["agreed_after"] >= 7 - ocr["misread_unchecked"]
    assert ocr["decided"] == ocr["decided_right"]  # whatever the sums chose is the truth
    text = format_table(res)
    assert "ground truth: 8 totals checked" in text and "set/wrong" in text
    json.dumps(res)
