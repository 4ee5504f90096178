"""`eval sql`: lookups built from labels and column aggregates, asked of the read-only store."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from helpers import DEV_DATA
from test_probes import rendered_gt

from worker.devtools.samples import TABLE_STYLES, financial_table, staffing_table
from worker.evaluation.sql_eval import evaluate_level, lookups, run_sql_eval

DEV = DEV_DATA


def test_rendered_tables_answer_every_lookup_and_aggregate_exactly():
    tables = [rendered_gt(financial_table(), "financial"), rendered_gt(staffing_table(), "staffing")]
    questions = lookups(tables[0], tables[0].header_rows, Counter())
    north = next(q for q in questions if q["value"] == "1,200")
    assert (north["row_label"], north["column"], north["group"]) == ("North", "2023 / Revenue", None)
    rows, _ = evaluate_level(tables, "none", 0)
    for row in rows:
        assert row["lookups"] > 5 and row["exact"] == row["answered"] == row["lookups"], row["failures"]
        assert row["aggregates_exact"] == row["aggregates"]
    # four numeric columns in the financial table; the staffing table's quarters hold a note row
    # spanning them, so too few of their cells are numbers for them to be numeric
    assert [r["aggregates"] for r in rows] == [4, 0]
    noisy, _ = evaluate_level(tables, "high", 0)  # noisy structure runs through, answers or not
    assert all("error" not in r for r in noisy)


@pytest.mark.parametrize("style", sorted(TABLE_STYLES))
def test_every_table_style_answers_its_lookups_exactly(style):
    """Per style (multi-level year headers, a stub head two rows tall, dates spanning two
    columns each, ...): every lookup by row label and column path answered exactly."""
    table = rendered_gt(TABLE_STYLES[style](), style)
    rows, _ = evaluate_level([table], "none", 0)
    assert rows[0]["lookups"] >= 6
    assert rows[0]["exact"] == rows[0]["answered"] == rows[0]["lookups"], (style, rows[0]["failures"])


@pytest.mark.skipif(not (DEV / "icdar2013-eu" / "gt.jsonl").is_file(), reason="no dev data (TABLESIGHT_DEV_DATA)")
def test_dev_set_lookups_with_oracle_structure_are_exact():
    """The acceptance figure: >= 99% of lookups answered exactly with oracle structure."""
    s = run_sql_eval(DEV, ["none"], seed=0, progress=False)["summary"]["none"]
    assert s["errors"] == 0 and s["lookups"] > 2000
    assert s["exact"] >= 0.99 and s["aggregates_exact"] >= 0.99, s


@pytest.mark.skipif(not (DEV / "pubtabnet" / "gt.jsonl").is_file(), reason="no dev data (TABLESIGHT_DEV_DATA)")
def test_eval_sql_cli(tmp_path, capsys):
    from worker.cli.main import main

    out = tmp_path / "sql.json"
    args = ["eval", "sql", "--data", str(DEV), "--levels", "none,medium", "--limit", "6", "--json", str(out)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "lookups" in text and "medium" in text
    results = json.loads(out.read_text())
    assert set(results["summary"]) == {"none", "medium"} and results["n_tables"] == 6
    assert main(["eval", "sql", "--data", str(tmp_path / "missing")]) == 1
    assert main(["eval", "sql", "--data", str(DEV), "--levels", "bogus", "--limit", "1"]) == 2
