"""`tablesight eval retrieval` on born-digital PDFs made here (an ICDAR-style gt.jsonl beside them):
questions from the truth, BM25 and hashing over both documents and their prose, the strict
reader; plus the reader and the retrievers on their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worker.core.html_out import grid_to_html
from worker.core.types import Cell, TableGrid
from worker.devtools.samples import financial_table, make_born_digital_pdf, staffing_table
from worker.evaluation.probes import Probe
from worker.evaluation.retrieval.questions import topic
from worker.evaluation.retrieval.reader import holds, read
from worker.evaluation.retrieval.retrievers import Bm25, Hashing, make_retriever

DPI = 144


def _gt_record(name: str, table, page_h: float) -> dict:
    s = DPI / 72
    cells = []
    for c in table.cells:
        x0, y0, x1, y1 = c["bbox"]
        cells.append(
            {
                "row": c["row"],
                "col": c["col"],
                "rowspan": c["rowspan"],
                "colspan": c["colspan"],
                "text": c["text"],
                "pdf_bbox_pt": [x0, page_h - y1, x1, page_h - y0],
                "bbox": [(x0 - 60) * s, (y0 - 110) * s, (x1 - 60) * s, (y1 - 110) * s],
            }
        )
    n_rows = max(c["row"] + c["rowspan"] for c in table.cells)
    n_cols = max(c["col"] + c["colspan"] for c in table.cells)
    grid = TableGrid(n_rows, n_cols, [Cell(c["row"], c["col"], c["rowspan"], c["colspan"], c["text"]) for c in cells])
    x0 = min(c["bbox"][0] for c in table.cells)
    y0 = min(c["bbox"][1] for c in table.cells)
    x1 = max(c["bbox"][2] for c in table.cells)
    y1 = max(c["bbox"][3] for c in table.cells)
    return {
        "image": f"tiny/images/{name}_p1_t1_r0.png",
        "html": grid_to_html(grid),
        "source": "tiny",
        "pdf": f"tiny/pdf/{name}.pdf",
        "page": 1,
        "table_id": "1",
        "render_dpi": DPI,
        "crop_px_in_page": [(x0 - 8) * s, (y0 - 8) * s, (x1 + 8) * s, (y1 + 8) * s],
        "n_rows": n_rows,
        "n_cols": n_cols,
        "has_span": True,
        "gt_issue": False,
        "cells": cells,
    }


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("retrieval-data")
    (root / "tiny" / "pdf").mkdir(parents=True)
    records = []
    for name, spec, title in (
        ("fin", financial_table, "Table 1. Revenue and cost by region"),
        ("staff", staffing_table, "Table 2. Staff by site and quarter"),
    ):
        table = make_born_digital_pdf(root / "tiny" / "pdf" / f"{name}.pdf", spec(), title=title)
        records.append(_gt_record(name, table, table.page_size_pt[1]))
    (root / "tiny" / "gt.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return root


def test_eval_retrieval_oracle_end_to_end(tiny_data, tmp_path, capsys) -> None:
    from worker.cli.main import main

    out = tmp_path / "res.json"
    rc = main(
        [
            "eval",
            "retrieval",
            "--data",
            str(tiny_data),
            "--work",
            str(tmp_path / "work"),
            "--sources",
            "oracle",
            "--variants",
            "table/lean/64",
            "--kinds",
            "every",
            "--json",
            str(out),
            "--records",
            str(tmp_path / "records.jsonl"),
        ]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    assert "| oracle | chunks | bm25 |" in printed and "kind: multilevel" in printed
    res = json.loads(out.read_text())
    assert res["documents"] == 2 and res["tables"] == 2
    assert res["questions"]["labels"] == res["cells"] > 20
    by = {(r["representation"], r["retriever"]): r["kinds"] for r in res["results"]}
    # flattened text is found but never read; structure is read right
    assert by[("naive", "bm25")]["all"]["answer"] == 0.0 and by[("naive", "bm25")]["all"]["find@5"] > 0.5
    for rep in ("markdown", "rows", "chunks", "chunks table/lean/64"):
        labels = by[(rep, "bm25")]["labels"]
        assert labels["answer"] >= 0.9 and labels["other"] == 0.0, (rep, labels)
    assert by[("chunks", "bm25")]["multilevel"]["answer"] >= 0.9  # 2024 / Revenue under the spanning year
    assert (tmp_path / "work" / "documents-v2-all.pickle").exists()  # the parsed documents, reused
    records = [json.loads(x) for x in (tmp_path / "records.jsonl").read_text().splitlines()]
    answered = [r for r in records if r["representation"] == "chunks" and r["outcome"] == "answer"]
    assert answered and all(r["read"] == r["value"] and r["from"].startswith(r["doc"]) for r in answered)
    assert {r["source"] for r in records} == {"oracle"} and {r["kind"] for r in records} >= {"labels", "multilevel"}


def test_eval_retrieval_refuses_bad_arguments(tiny_data, tmp_path, capsys) -> None:
    from worker.cli.main import main

    base = ["eval", "retrieval", "--data", str(tiny_data), "--work", str(tmp_path)]
    assert main([*base, "--sources", "ocr"]) == 2
    assert main([*base, "--retrievers", "embedder"]) == 2  # no --embedder folder
    assert main(["eval", "retrieval", "--data", str(tmp_path / "none"), "--work", str(tmp_path)]) == 1
    assert "error" in capsys.readouterr().err


def _probe(value: str, rows: tuple[str, ...], cols: tuple[str, ...], stub: tuple[str, ...] = ()) -> Probe:
    return Probe("t", 1, 2, value, rows, cols, stub)


def test_reader_is_strict_on_labelled_lines_and_pipe_rows() -> None:
    text = (
        "Table: Sites\nPage: 1\n\n"
        "Region: North; Product: Widgets; 2023 / Revenue: 1,200; 2024 / Revenue: 1,350\n"
        "Region: North; Product: Gadgets; 2023 / Revenue: 640; 2024 / Revenue: 700"
    )
    assert read(text, _probe("1,350", ("North",), ("2024", "Revenue"), ("Widgets",))) == "1,350"
    assert read(text, _probe("700", ("North",), ("2024", "Revenue"), ("Gadgets",))) == "700"
    assert read(text, _probe("1", ("South",), ("2024", "Revenue"))) is None  # no line for the row
    assert read(text, _probe("1", ("North",), ("2025",))) is None  # no segment for the column
    pipes = (
        "Table: Sites\n\n| Region | 2023 / Revenue | 2024 / Revenue |\n|---|---|---|\n"
        "| Europe | | |\n| North | 1,200 | 1,350 |"
    )
    assert read(pipes, _probe("1,350", ("Europe", "North"), ("2024", "Revenue"))) == "1,350"
    assert read(pipes, _probe("1,350", ("Asia", "North"), ("2024", "Revenue"))) is None
    # the row label as a whole word, and the exact head preferred (Q4 2009, not Q1 2009 - Q4 2009)
    span = "Q1 2009 - Q4 2009; Total: 9\nQ4 2009; Total: 4"
    assert read(span, _probe("4", ("Q4 2009",), ("Total",))) == "4"
    assert holds(text, _probe("700", ("Gadgets",), ())) and not holds(text, _probe("70", ("Gadgets",), ()))


def test_retrievers_rank_the_unit_holding_the_words() -> None:
    texts = ["Revenue by region North 2024", "Staff by site Lyon Oslo", "Prose about something else"]
    for r in (Bm25(texts), Hashing(texts)):
        assert r.search(["Lyon staff"], 2)[0][0] == 1
        assert r.search(["north revenue"], 1) == [[0]]
        assert r.search(["zzz"], 3) == [[]]  # nothing shared: nothing ranked
    with pytest.raises(ValueError, match="--embedder"):
        make_retriever("embedder", texts)


def test_caption_topic_drops_the_table_number() -> None:
    assert topic("Table 4. Household characteristics: 2003") == "Household characteristics: 2003"
    assert topic("TABLE 2 — Staff") == "Staff"
    assert topic("Staff by site") == "Staff by site"


def test_cached_extraction_is_serialised_again_by_the_code_under_test(tmp_path: Path) -> None:
    """A table stored with an older serialiser (no doubt marks, a stale description) is read by
    `eval retrieval` through today's serialiser, so a chunker change is measured without
    extracting again; the stored caption and notes are kept."""
    from worker.core.doubt import UNSURE_MARK
    from worker.core.serialise import TableContext, serialisations
    from worker.evaluation.retrieval.corpus import stored_tables
    from worker.storage import LocalStorage

    rows = [["Variable", "Mean", "Std. Dev."], ["Age", "50.8", "15.9 21"], ["Men", "0.47", "0.50"]]
    grid = TableGrid(
        3, 3, [Cell(r, c, text=t, is_header=r == 0) for r, row in enumerate(rows) for c, t in enumerate(row)]
    )
    stale = serialisations(grid, TableContext("Table C1: Summary statistics", ["Source: SAVE 2009."], [3]), "p0003-t01")
    stale["description"] = "stale"
    stale["markdown"] = stale["markdown"].replace(UNSURE_MARK, "")
    store = LocalStorage(tmp_path)
    store.put_json("d1/manifest.json", {"doc_id": "d1", "tables": [{"table_id": "p0003-t01", "page": 3}]})
    store.put_json(
        "d1/tables/p0003-t01.json",
        {"table_id": "p0003-t01", "page": 3, "grid": grid.to_dict(), "serialisations": stale, "context": {}},
    )
    (t,) = stored_tables(store, "d1", "eu-027")
    assert t.ser["description"].startswith("Table: Table C1: Summary statistics\nPage: 3")
    assert "Source: SAVE 2009." in t.ser["description"]
    assert f"| Age | 50.8 | 15.9 21{UNSURE_MARK} |" in t.ser["markdown"]
    assert "| Men | 0.47 | 0.50 |" in t.ser["markdown"]
