"""`tablesight sql` on an S3 store (moto's server mode on loopback): tables written by the same
`write_table` as extraction, read by DuckDB's Parquet reader through the store's own S3 client
(DuckDB's httpfs extension is not installed on offline nodes), read-only as on a folder."""

from __future__ import annotations

import json
import uuid

import boto3
import pytest
from helpers import store_manifest
from moto.server import ThreadedMotoServer
from test_sql_store import DOC, EVIL, OTHER, put_table, sales_grid

from worker.cli.main import main
from worker.settings import get_settings
from worker.sqlstore import QueryRefused, StoreError, open_sql_store
from worker.storage import open_storage


@pytest.fixture(scope="module")
def s3_endpoint():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3_url(s3_endpoint, monkeypatch):
    import os

    for key in list(os.environ):
        if key.startswith("TABLESIGHT_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(os.environ.get("TMPDIR", "/tmp"))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    bucket = f"sql-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1").create_bucket(Bucket=bucket)
    url = f"s3://{bucket}/runs/one"
    store = open_storage(url, s3_endpoint_url=s3_endpoint)
    store_manifest(store, DOC, [put_table(store, DOC, "p0001-t01", sales_grid(), EVIL)])
    store_manifest(store, OTHER, [put_table(store, OTHER, "p0001-t01", sales_grid(5), "")])
    monkeypatch.setenv("TABLESIGHT_STORAGE_URL", url)
    monkeypatch.setenv("TABLESIGHT_S3_ENDPOINT_URL", s3_endpoint)
    get_settings.cache_clear()
    yield url
    get_settings.cache_clear()


def test_sql_over_s3(s3_url, s3_endpoint, capsys):
    query = "SELECT sales_m_2023 FROM \"p0001-t01\" WHERE region_quoted = 'Site 2'"
    assert main(["sql", "--json", DOC, query]) == 0
    assert json.loads(capsys.readouterr().out) == [{"sales_m_2023": 1002}]
    assert main(["sql", "--all", "--json", "SELECT doc_id, n_rows FROM _tables ORDER BY doc_id"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"doc_id": DOC, "n_rows": 4}, {"doc_id": OTHER, "n_rows": 6}]
    assert main(["sql", "--all", "--json", f'SELECT sum(sales_m_2023) AS s FROM "{OTHER}"."p0001-t01"']) == 0
    assert json.loads(capsys.readouterr().out) == [{"s": sum(1000 + i for i in range(5))}]
    assert main(["sql", DOC, "COPY (SELECT 1) TO 's3://x/y.csv'"]) == 2
    storage = open_storage(s3_url, s3_endpoint_url=s3_endpoint)
    with open_sql_store(storage, [DOC]) as db:
        assert db.reader in ("storage", "httpfs")
        with pytest.raises(QueryRefused):
            db.query("CREATE TABLE t AS SELECT 1")
        with pytest.raises(StoreError):  # outside the store's prefix: refused by DuckDB itself
            db.query("SELECT * FROM read_parquet('/etc/hostname')")
        assert db.query("SELECT comment FROM duckdb_views() WHERE view_name = 'p0001-t01'").rows == [(EVIL,)]


def test_httpfs_asked_for_but_missing_is_one_clear_error(s3_url, monkeypatch, capsys):
    import duckdb

    try:
        duckdb.connect().execute("LOAD httpfs")
        pytest.skip("httpfs is installed on this node")
    except duckdb.Error:
        pass
    monkeypatch.setenv("TABLESIGHT_SQL_S3_READER", "httpfs")
    get_settings.cache_clear()
    assert main(["sql", DOC, "SELECT 1"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "httpfs extension is not installed" in err[0]
