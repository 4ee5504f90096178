"""Cell probes: find and bind on serialised rows and chunks, with oracle and noisy structure."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from helpers import DEV_DATA

from worker.devtools.samples import TABLE_STYLES, financial_table, render_table, staffing_table
from worker.evaluation.dataset import GtCell, GtTable
from worker.evaluation.probes import Probe, binds, check, evaluate_table, make_probes, run_probes_eval

DEV = DEV_DATA


def probe(value: str, rows: tuple[str, ...], cols: tuple[str, ...]) -> Probe:
    return Probe("t", 0, 1, value, rows, cols)


def test_bind_needs_the_row_head_and_the_column_path_next_to_the_value():
    line = "Region: North; Product: Widgets; 2023 / Revenue: 1,200; 2023 / Cost: 800"
    assert binds(line, probe("1,200", ("North",), ("2023", "Revenue")))
    assert not binds(line, probe("800", ("North",), ("2023", "Revenue")))  # wrong column
    assert not binds(line, probe("1,200", ("South",), ("2023", "Revenue")))  # wrong row
    assert not binds(line, probe("1,20", ("North",), ("2023", "Revenue")))  # a value is whole
    assert not binds("Widgets; North: 1,200", probe("1,200", ("North",), ()))  # a label is not a row head
    assert binds("UK; PBUK 1996: 65.2; LDA: 67", probe("67", ("UK",), ("LDA",)))


def test_find_takes_the_first_unit_with_all_labels_and_prefers_an_exact_row_label():
    lines = ["Germany: Q1 2009 – Q4 2009; Portugal: -0.01", "Germany: Q4 2009; Portugal: 0.17"]
    assert check(lines, probe("0.17", ("Q4 2009",), ("Portugal",))) == (True, True)
    lines = ["PBUK; Total: 3", "UK; Total: 5"]
    assert check(lines, probe("5", ("UK",), ("Total",))) == (True, True)  # `UK` is not in `PBUK`
    chunk = "Table: T\nColumns: Name | Total\n\nName: Total; Total: 9"
    assert check([chunk], probe("9", ("Total",), ("Total",))) == (True, True)  # the header is no row
    assert check(["Name: Ann; Score: 1"], probe("2", ("Bob",), ("Score",))) == (False, False)


def rendered_gt(spec, name: str) -> GtTable:
    image, cells = render_table(spec)
    gt = [
        GtCell(c["row"], c["col"], c["rowspan"], c["colspan"], c["text"], c["text_bbox"], c["is_header"]) for c in cells
    ]
    n_rows, n_cols = spec.shape
    return GtTable(
        "samples",
        name,
        Path("unused.png"),
        "",
        n_rows,
        n_cols,
        sorted(gt, key=lambda c: (c.row, c.col)),
        True,
        spec.header_rows,
        _image_size=image.size,
    )


def test_probes_on_rendered_tables_bind_with_oracle_structure():
    for spec, name in ((financial_table(), "financial"), (staffing_table(), "staffing")):
        table = rendered_gt(spec, name)
        skipped: Counter[str] = Counter()
        probes = make_probes(table, table.header_rows, skipped)
        assert probes and all(p.col > 0 for p in probes)
        result = evaluate_table(table, "none", 0, 60, Counter())
        assert result["chunks"] > 1, "a small budget makes several chunks"
        for key in ("rows_find", "rows_bind", "chunks_find", "chunks_bind"):
            assert result[key] == result["probes"], (name, key, result["failures"])
        evaluate_table(table, "high", 0, 60, Counter())  # noisy structure runs through
    fin = make_probes(rendered_gt(financial_table(), "f"), 2, Counter())
    first = next(p for p in fin if p.value == "1,200")
    assert first.row_labels == ("North",) and first.col_labels == ("2023", "Revenue")


@pytest.mark.parametrize("style", sorted(TABLE_STYLES))
def test_every_table_style_binds_every_probe_with_oracle_structure(style):
    """Per style (multi-level year headers, a stub head two rows tall, dates spanning two
    columns each, ...): every probe found and bound, in row lines and in chunks."""
    table = rendered_gt(TABLE_STYLES[style](), style)
    result = evaluate_table(table, "none", 0, 60, Counter())
    assert result["probes"] >= 6
    for key in ("rows_find", "rows_bind", "chunks_find", "chunks_bind"):
        assert result[key] == result["probes"], (style, key, result["failures"])


@pytest.mark.skipif(not (DEV / "icdar2013-eu" / "gt.jsonl").is_file(), reason="no dev data (TABLESIGHT_DEV_DATA)")
def test_dev_set_bind_rate_with_oracle_structure(tmp_path):
    """The acceptance figure: >= 99% bound, on rows and on chunks, with oracle structure."""
    results = run_probes_eval(DEV, ["none"], seed=0, max_tokens=256, progress=False)
    s = results["summary"]["none"]
    assert s["errors"] == 0 and s["probes"] > 2000
    assert s["rows_bind"] >= 0.99 and s["chunks_bind"] >= 0.99, s
    assert s["rows_find"] >= 0.99 and s["chunks_find"] >= 0.99, s


@pytest.mark.skipif(not (DEV / "pubtabnet" / "gt.jsonl").is_file(), reason="no dev data (TABLESIGHT_DEV_DATA)")
def test_eval_probes_cli(tmp_path, capsys):
    from worker.cli.main import main

    out = tmp_path / "probes.json"
    assert (
        main(["eval", "probes", "--data", str(DEV), "--levels", "none,medium", "--limit", "12", "--json", str(out)])
        == 0
    )
    text = capsys.readouterr().out
    assert "rows bind" in text and "medium" in text
    results = json.loads(out.read_text())
    assert set(results["summary"]) == {"none", "medium"} and results["n_tables"] == 12
    assert main(["eval", "probes", "--data", str(tmp_path / "missing")]) == 1
    assert main(["eval", "probes", "--data", str(DEV), "--levels", "bogus", "--limit", "1"]) == 2
