"""The SQL store: CSV and Parquet beside every table, read-only DuckDB views, `tablesight sql`,
descriptions (and LLM summaries) for retrieval, and the chunks switch for large tables."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from helpers import store_manifest, store_table
from vision_fixtures import ChatServer

from worker.cli.main import main
from worker.core.types import Cell, TableGrid
from worker.settings import get_settings
from worker.sqlstore import QueryRefused, StoreError, open_sql_store
from worker.storage import LocalStorage

DOC = "00000000000000aa"
OTHER = "00000000000000bb"
EVIL = 'Table 1: Sales\'; DROP TABLE "p0001-t01"; --'


def sales_grid(n_sites: int = 3) -> TableGrid:
    """Two-level header, a projected row header, hostile text in a header and a cell."""
    cells = [
        Cell(0, 0, 2, 1, 'Region "quoted"', is_header=True),
        Cell(0, 1, 1, 2, "Sales (£m)", is_header=True),
        Cell(1, 1, text="2023", is_header=True),
        Cell(1, 2, text="2024", is_header=True),
        Cell(2, 0, 1, 3, "Europe", is_projected_row_header=True),
    ]
    r = 3
    for i in range(n_sites):
        name = "North'; DELETE FROM x; --" if i == 0 else f"Site {i}"
        cells += [Cell(r, 0, text=name), Cell(r, 1, text=f"{1000 + i:,}*"), Cell(r, 2, text=f"({i + 1})")]
        r += 1
    cells += [Cell(r, 0, text="Closed"), Cell(r, 1, text="–"), Cell(r, 2, text="n/a")]
    grid = TableGrid(r + 1, 3, cells, header_rows=2)
    grid.owner_map()
    return grid


def put_table(store: LocalStorage, doc: str, tid: str, grid: TableGrid, caption: str) -> dict:
    """Store the table `tid` (pNNNN-tKK) as the pipeline does; returns its manifest entry."""
    page, index = int(tid[1:5]), int(tid[7:9])
    return store_table(store, doc, grid, page=page, index=index, caption=caption)


@pytest.fixture
def store(tmp_path) -> LocalStorage:
    s = LocalStorage(tmp_path / "out")
    entries = [put_table(s, DOC, "p0001-t01", sales_grid(), EVIL), put_table(s, DOC, "p0002-t01", sales_grid(250), "")]
    store_manifest(s, DOC, entries)
    store_manifest(s, OTHER, [put_table(s, OTHER, "p0001-t01", sales_grid(1), "")])
    return s


def test_every_table_gets_csv_parquet_schema_and_description(store):
    record = store.get_json(f"{DOC}/tables/p0001-t01.json")
    names = [c["name"] for c in record["schema"]["columns"]]
    assert names == [
        "grid_row",
        "row_group",
        "region_quoted",
        "sales_m_2023",
        "sales_m_2023__text",
        "sales_m_2023__note",
        "sales_m_2024",
        "sales_m_2024__text",
    ]
    assert record["schema"]["n_rows"] == 4 and record["schema"]["row_label_column"] == "region_quoted"
    assert record["description"].startswith(f"Table p0001-t01: {EVIL}\nPage: 1\nRows: 4")
    table = pq.read_table(store.location(f"{DOC}/tables/p0001-t01.parquet"))
    assert table.column_names == names
    assert str(table.schema.field("sales_m_2023").type) == "int64"
    assert table.schema.field("sales_m_2024").metadata[b"label"].decode() == "Sales (£m) / 2024"
    assert json.loads(table.schema.metadata[b"tablesight.schema"])["caption"] == EVIL
    assert table.column("sales_m_2024").to_pylist() == [-1, -2, -3, None]
    rows = list(csv.reader(io.StringIO(Path(store.location(f"{DOC}/tables/p0001-t01.csv")).read_text())))
    assert rows[0] == names
    assert rows[1] == ["3", "Europe", "North'; DELETE FROM x; --", "1000", "1,000*", "*", "-1", "(1)"]
    assert rows[4] == ["6", "Europe", "Closed", "", "–", "", "", "n/a"]


def test_a_failed_export_costs_the_exports_not_the_table(tmp_path, monkeypatch, caplog):
    import worker.retrieval.exports

    def broken(*args, **kwargs):
        raise ValueError("no arrow today")

    monkeypatch.setattr(worker.retrieval.exports, "parquet_bytes", broken)
    s = LocalStorage(tmp_path / "out")
    entry = put_table(s, DOC, "p0001-t01", sales_grid(), "Caption")
    assert set(entry["files"]) == {"png", "html", "json", "md", "rows"}
    assert not s.exists(f"{DOC}/tables/p0001-t01.csv")
    record = s.get_json(entry["files"]["json"])
    assert record["export_error"] == "ValueError: no arrow today" and record["grid"]["n_rows"] == 7
    assert "exporting" in caplog.text


def test_lookups_and_the_catalog(store):
    with open_sql_store(store, [DOC]) as db:
        res = db.query(
            'SELECT sales_m_2023, sales_m_2023__text, row_group FROM "p0001-t01" WHERE region_quoted = ?',
            ["North'; DELETE FROM x; --"],
        )
        assert res.columns == ["sales_m_2023", "sales_m_2023__text", "row_group"]
        assert res.rows == [(1000, "1,000*", "Europe")]
        assert db.query('SELECT sum(sales_m_2023), count(sales_m_2024) FROM "p0002-t01"').rows == [
            (sum(1000 + i for i in range(250)), 250)
        ]
        tables = db.query("SELECT table_id, view, caption, n_rows FROM _tables ORDER BY table_id").rows
        assert tables == [("p0001-t01", '"p0001-t01"', EVIL, 4), ("p0002-t01", '"p0002-t01"', "", 251)]
        assert db.query("SELECT comment FROM duckdb_views() WHERE view_name = 'p0001-t01'").rows == [(EVIL,)]
        comments = db.query(
            "SELECT column_name, comment FROM duckdb_columns() WHERE table_name = 'p0001-t01' AND comment IS NOT NULL"
        ).rows
        assert ("sales_m_2024", "Sales (£m) / 2024 (£m)") in comments
        assert ("region_quoted", 'Region "quoted"') in comments
        label = db.query(
            "SELECT column_name FROM _columns WHERE table_id = 'p0002-t01' AND role = 'value' AND label = ?",
            ["Sales (£m) / 2024"],
        )
        assert label.rows == [("sales_m_2024",)]


REFUSED = [
    "CREATE TABLE t (a INT)",
    "CREATE VIEW v AS SELECT 1",
    "INSERT INTO _tables SELECT * FROM _tables",
    "UPDATE _tables SET caption = 'x'",
    "DELETE FROM _tables",
    'DROP VIEW "p0001-t01"',
    "ALTER TABLE _tables ADD COLUMN x INT",
    "COPY (SELECT 1) TO 'leak.csv'",
    "COPY _tables FROM 'x.csv'",
    "ATTACH 'other.duckdb' AS other",
    "DETACH catalog",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "PRAGMA enable_profiling",
    "EXPORT DATABASE 'dump'",
    "CALL duckdb_tables()",
    "SELECT 1; DROP TABLE _tables",
    "",
]


def test_statements_other_than_queries_are_refused(store):
    with open_sql_store(store, [DOC]) as db:
        for sql in REFUSED:
            with pytest.raises(QueryRefused):
                db.query(sql)
        assert db.query("SELECT count(*) FROM _tables").rows == [(2,)]  # nothing was changed


def test_the_database_itself_is_read_only(store, tmp_path):
    """Past the statement check (straight on the connection), DuckDB refuses writes itself."""
    import duckdb

    target = tmp_path / "leak.csv"
    with open_sql_store(store, [DOC]) as db:
        for sql in (
            "CREATE TABLE t (a INT)",
            "INSERT INTO _tables SELECT * FROM _tables",
            'DROP VIEW "p0001-t01"',
            f"COPY (SELECT * FROM \"p0001-t01\") TO '{target}'",
            f"ATTACH '{tmp_path / 'other.duckdb'}' AS other",
            "INSTALL httpfs",
            "SET enable_external_access = true",
            "SET allowed_directories = ['/']",
        ):
            with pytest.raises(duckdb.Error):
                db.con.execute(sql)
        with pytest.raises(StoreError, match="Permission"):  # a query reading outside the store
            db.query("SELECT * FROM read_csv('/etc/passwd')")
        assert db.query('SELECT count(*) FROM "p0001-t01"').rows == [(4,)]
    assert not target.exists() and not (tmp_path / "other.duckdb").exists()


def test_cli_formats_errors_and_all_documents(store, tmp_path, capsys):
    out = ["--store", str(tmp_path / "out")]
    sql = 'SELECT region_quoted, sales_m_2023 FROM "p0001-t01" ORDER BY grid_row'
    assert main(["sql", *out, DOC, sql]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].split("|")[0].strip() == "region_quoted" and text[-1] == "(4 rows)"
    assert "NULL" in text[-2] and "1000" in text[2]
    assert main(["sql", DOC, "--json", *out, sql]) == 0  # options may follow DOC_ID
    rows = json.loads(capsys.readouterr().out)
    assert rows[0] == {"region_quoted": "North'; DELETE FROM x; --", "sales_m_2023": 1000}
    assert main(["sql", *out, "--csv", DOC, sql]) == 0
    parsed = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert parsed[:2] == [["region_quoted", "sales_m_2023"], ["North'; DELETE FROM x; --", "1000"]]
    assert parsed[-1] == ["Closed", ""]
    assert main(["sql", *out, DOC, "DROP TABLE _tables"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: the store is read-only")
    assert main(["sql", *out, DOC, "SELECT * FROM nowhere"]) == 1
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert main(["sql", *out, "0000000000000fff", "SELECT 1"]) == 1
    assert "no such document" in capsys.readouterr().err
    assert main(["sql", *out, "../etc", "SELECT 1"]) == 2
    assert main(["sql", *out, DOC]) == 2
    capsys.readouterr()
    assert main(["sql", *out, "--all", "--json", "SELECT doc_id, table_id, view FROM _tables ORDER BY 1, 2"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(r["doc_id"], r["table_id"]) for r in listed] == [
        (DOC, "p0001-t01"),
        (DOC, "p0002-t01"),
        (OTHER, "p0001-t01"),
    ]
    view = listed[2]["view"]
    assert view == f'"{OTHER}"."p0001-t01"'
    assert main(["sql", *out, "--all", "--json", f"SELECT count(*) AS n FROM {view}"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"n": 2}]


def test_chunks_switch_to_one_description_chunk_above_the_row_threshold(store):
    from worker.core.chunks import approx_tokens
    from worker.retrieval.chunks import document_chunks

    unchanged = document_chunks(store, DOC, 256, approx_tokens)
    assert document_chunks(store, DOC, 256, approx_tokens, max_rows=0) == unchanged
    chunks = document_chunks(store, DOC, 256, approx_tokens, max_rows=200)
    small = [c for c in chunks if c["table_id"] == "p0001-t01"]
    assert small == [c for c in unchanged if c["table_id"] == "p0001-t01"]  # below the threshold: as before
    big = [c for c in chunks if c["table_id"] == "p0002-t01"]
    assert len([c for c in unchanged if c["table_id"] == "p0002-t01"]) > 10
    assert len(big) == 1 and big[0]["kind"] == "table_description" and big[0]["view"] == "p0002-t01"
    assert big[0]["n_rows"] == 251 and big[0]["row_range"] == [2, 253]
    assert big[0]["text"] == store.get_json(f"{DOC}/tables/p0002-t01.json")["description"]
    assert "Rows: 251, from \"North'; DELETE FROM x; --\" to 'Closed'" in big[0]["text"]
    assert "<tbody></tbody>" in big[0]["html"] and "Sales (£m)" in big[0]["html"]


@pytest.fixture
def llm(monkeypatch):
    import os

    for key in list(os.environ):
        if key.startswith("TABLESIGHT_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(os.environ.get("TMPDIR", "/tmp"))
    with ChatServer(default=("text", "Sales in £m by European site for 2023 and 2024.")) as server:
        for key, value in {
            "VISION_BACKEND": "openai",
            "VISION_URL": server.url,
            "VISION_MODEL": "served-llm",
            "VISION_RETRIES": "0",
            "VISION_TIMEOUT": "5",
            "CHUNK_TABLE_MAX_ROWS": "100",
        }.items():
            monkeypatch.setenv(f"TABLESIGHT_{key}", value)
        get_settings.cache_clear()
        yield server
    get_settings.cache_clear()


def test_describe_and_llm_summaries_on_a_loopback_server(store, llm, tmp_path, capsys):
    out = ["--store", str(tmp_path / "out")]
    assert main(["describe", *out, DOC]) == 0  # descriptions need no model
    assert capsys.readouterr().out.startswith(f"Table p0001-t01: {EVIL}") and not llm.requests
    assert main(["describe", *out, DOC, "p0002-t01", "--summarise", "--json"]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["summary"] == "Sales in £m by European site for 2023 and 2024."
    [request] = llm.requests
    assert request["model"] == "served-llm" and request["max_tokens"] == 300
    prompt = request["messages"][0]["content"]
    assert isinstance(prompt, str) and "Table p0002-t01" in prompt and "Site 1" in prompt
    stored = LocalStorage(tmp_path / "out").get_json(f"{DOC}/tables/p0002-t01.summary.json")
    assert stored["model"] == "served-llm" and stored["completion_tokens"] == 45
    assert main(["describe", *out, DOC, "p0002-t01", "--summarise"]) == 0  # stored: not asked again
    assert len(llm.requests) == 1 and capsys.readouterr().out.startswith("Summary: Sales in £m")
    assert main(["chunks", *out, DOC]) == 0  # the large table's one chunk leads with the summary
    chunks = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    big = [c for c in chunks if c["table_id"] == "p0002-t01"]
    assert len(big) == 1 and big[0]["text"].startswith("Summary: Sales in £m by European site")
    llm.default = ("status", 400)
    assert main(["describe", *out, DOC, "p0001-t01", "--summarise"]) == 1
    assert "summary failed" in capsys.readouterr().err
    assert not LocalStorage(tmp_path / "out").exists(f"{DOC}/tables/p0001-t01.summary.json")
    assert main(["describe", *out, DOC, "p0009-t01"]) == 1
