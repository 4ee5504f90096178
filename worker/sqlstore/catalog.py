"""A read-only DuckDB database of views over stored tables' Parquet files.

One view per table, named by its table id (`"p0001-t01"`, a merged table
`"p0001-t01-to-p0002-t01"`; the hyphen means the name must be double-quoted), with the
caption as the view's comment and each column's header path as the column's comment. One
document's views sit in the default schema; with every document (`--all`) each document
is a schema named by its doc id (`"0123456789abcdef"."p0001-t01"`). Two tables list what is
there: `_tables` (doc_id, table_id, view, caption, pages, n_rows, description) and
`_columns` (doc_id, table_id, view, column_name, type, role, label, unit).

Read-only three ways: statements other than queries are refused (`guard`); the catalog is a
database file opened read_only; and file access is limited to the store (no COPY ... TO,
ATTACH, INSTALL or reads elsewhere) with the configuration locked. Parquet is read by
DuckDB's own reader: from the folder, or for `s3://` through httpfs when that extension is
installed, else through the project's Storage client (`remote`), so offline nodes work.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worker.contract.reads import read_manifest, read_table
from worker.errors import TablesightError
from worker.outputs import manifest_key
from worker.sqlstore.guard import check_query
from worker.storage.base import Storage, StorageError, validate_key
from worker.storage.local import LocalStorage

logger = logging.getLogger(__name__)

TABLES = "_tables"
COLUMNS = "_columns"


class StoreError(TablesightError):
    """The store cannot be opened or a query failed; the message is for the user."""


def quote_ident(name: str) -> str:
    """A double-quoted SQL identifier: any text is safe inside it."""
    return '"' + str(name).replace("\x00", "").replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """A single-quoted SQL string literal."""
    return "'" + str(text).replace("\x00", "").replace("'", "''") + "'"


@dataclass
class ViewInfo:
    doc_id: str
    table_id: str
    view: str
    key: str
    caption: str
    pages: list[int]
    n_rows: int
    description: str
    columns: list[dict[str, Any]]


@dataclass
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    seconds: float = 0.0


@dataclass
class SqlStore:
    """An open read-only store; `query` runs one query. Close it (or use `with`)."""

    con: Any
    views: list[ViewInfo]
    reader: str
    warnings: list[str] = field(default_factory=list)
    _tmp: str | None = None

    def query(self, sql: str, params: list[Any] | None = None) -> QueryResult:
        import duckdb

        try:
            check_query(self.con, sql)
            started = time.perf_counter()
            cur = self.con.execute(sql, params or [])
            names = [d[0] for d in cur.description or []]
            rows = cur.fetchall()
        except duckdb.Error as exc:
            raise StoreError(_first_line(exc)) from exc
        return QueryResult(names, rows, time.perf_counter() - started)

    def close(self) -> None:
        try:
            self.con.close()
        finally:
            if self._tmp:
                shutil.rmtree(self._tmp, ignore_errors=True)
                self._tmp = None

    def __enter__(self) -> SqlStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _tables_of(storage: Storage, doc_id: str) -> tuple[list[ViewInfo], list[str]]:
    """The views of one document: every table and merged table with a Parquet export."""
    try:
        manifest = read_manifest(storage, manifest_key(validate_key(doc_id))).dump()
    except KeyError:
        raise StoreError(f"{doc_id}: no such document in {storage.location(doc_id)}") from None
    warnings = []
    entries = [(t["table_id"], t) for t in manifest.get("tables") or []]
    entries += [(t["logical_id"], t) for t in manifest.get("logical_tables") or []]
    out = []
    for tid, entry in entries:
        files = entry.get("files") or {}
        if "parquet" not in files:
            warnings.append(f"{doc_id}/{tid}: no Parquet export (extracted by an older version: extract it again)")
            continue
        # a merged table's record has no model of its own; a page table's is a TableRecord
        record = storage.get_json(files["json"]) if "logical_id" in entry else read_table(storage, files["json"]).dump()
        ser = record.get("serialisations") or {}
        schema = record.get("schema") or {}
        pages = [int(p) for p in ser.get("pages") or record.get("pages") or []]
        out.append(
            ViewInfo(
                doc_id,
                tid,
                tid,
                files["parquet"],
                str(ser.get("caption") or ""),
                pages,
                int(schema.get("n_rows", 0)),
                str(record.get("description") or ""),
                list(schema.get("columns") or []),
            )
        )
    return out, warnings


def _httpfs(con: Any, storage: Any) -> bool:
    """Load DuckDB's httpfs extension (when installed on this node) and give it the store's
    endpoint and credentials; False when it is not available."""
    try:
        con.execute("LOAD httpfs")
    except Exception as exc:  # not installed (offline node): the Storage reader takes over
        logger.debug("httpfs not available: %s", _first_line(exc))
        return False
    import boto3

    creds = boto3.session.Session().get_credentials()  # the chain the store's own client resolves
    frozen = creds.get_frozen_credentials() if creds is not None else None
    parts = ["TYPE s3"]
    if frozen is not None:
        parts += [f"KEY_ID {quote_literal(frozen.access_key)}", f"SECRET {quote_literal(frozen.secret_key)}"]
        if frozen.token:
            parts.append(f"SESSION_TOKEN {quote_literal(frozen.token)}")
    region = storage.client.meta.region_name
    if region:
        parts.append(f"REGION {quote_literal(region)}")
    if storage.endpoint_url:
        endpoint = str(storage.endpoint_url)
        parts.append(f"USE_SSL {'true' if endpoint.startswith('https://') else 'false'}")
        parts.append(f"ENDPOINT {quote_literal(endpoint.split('://', 1)[-1].rstrip('/'))}")
        parts.append("URL_STYLE 'path'")
    con.execute(f"CREATE TEMPORARY SECRET tablesight_store ({', '.join(parts)})")
    return True


def _reader(storage: Storage, con: Any, prefer: str) -> tuple[str, Any, list[str]]:
    """How Parquet is read: ('local', None, allowed dirs), ('httpfs', None, allowed) or
    ('storage', fsspec filesystem, allowed)."""
    if isinstance(storage, LocalStorage):
        root = str(storage.root)
        return "local", None, [root + "/"]
    from worker.storage.s3 import S3Storage

    if isinstance(storage, S3Storage) and prefer in ("auto", "httpfs") and _httpfs(con, storage):
        base = f"s3://{storage.bucket}/{storage.prefix}"
        return "httpfs", None, [base]
    if prefer == "httpfs":
        raise StoreError("DuckDB's httpfs extension is not installed on this node (set TABLESIGHT_SQL_S3_READER=auto)")
    from worker.sqlstore.remote import PROTOCOL, StorageFileSystem

    return "storage", StorageFileSystem(storage), [f"{PROTOCOL}://", f"{PROTOCOL}:///"]


def _url(storage: Storage, reader: str, key: str) -> str:
    if reader == "local":
        return str(Path(storage.location(key)))
    if reader == "httpfs":
        return f"s3://{storage.bucket}/{storage.prefix}{key}"  # type: ignore[attr-defined]
    from worker.sqlstore.remote import PROTOCOL

    return f"{PROTOCOL}://{key}"


def open_sql_store(
    storage: Storage, doc_ids: list[str] | None = None, *, all_documents: bool = False, s3_reader: str = "auto"
) -> SqlStore:
    """Build the catalog of views for `doc_ids` (or every document) and open it read-only."""
    import duckdb

    if all_documents:
        doc_ids = storage.documents()
    if not doc_ids:
        raise StoreError(f"no documents in {storage.location('x').removesuffix('x')}")
    views: list[ViewInfo] = []
    warnings: list[str] = []
    for doc_id in doc_ids:
        found, notes = _tables_of(storage, doc_id)
        views += found
        warnings += notes
    tmp = tempfile.mkdtemp(prefix="tablesight-sql-")
    path = str(Path(tmp) / "catalog.duckdb")
    try:
        con = duckdb.connect(path, config={"autoinstall_known_extensions": False})
        reader, fs, allowed = _reader(storage, con, s3_reader)
        if fs is not None:
            con.register_filesystem(fs)
        _build(con, storage, reader, views, all_documents)
        con.close()
        con = duckdb.connect(path, read_only=True, config={"autoinstall_known_extensions": False})
        if reader == "httpfs":
            _httpfs(con, storage)
        if fs is not None:
            con.register_filesystem(fs)
        con.execute("SET allowed_directories = " + "[" + ", ".join(quote_literal(a) for a in allowed) + "]")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except duckdb.Error as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise StoreError(_first_line(exc)) from exc
    except (StorageError, StoreError):
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return SqlStore(con, views, reader, warnings, tmp)


def _build(con: Any, storage: Storage, reader: str, views: list[ViewInfo], per_doc_schema: bool) -> None:
    import pyarrow as pa

    for v in views:
        schema = quote_ident(v.doc_id) + "." if per_doc_schema else ""
        if per_doc_schema:
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_ident(v.doc_id)}")
        name = schema + quote_ident(v.view)
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet({quote_literal(_url(storage, reader, v.key))})")
        con.execute(f"COMMENT ON VIEW {name} IS {quote_literal(v.caption or 'Table ' + v.table_id)}")
        for c in v.columns:
            label = " / ".join(c.get("path") or [])
            if c.get("unit"):
                label = f"{label} ({c['unit']})" if label else f"({c['unit']})"
            if label:
                con.execute(f"COMMENT ON COLUMN {name}.{quote_ident(c['name'])} IS {quote_literal(label)}")
    view_names = {
        (v.table_id, v.doc_id): (f"{quote_ident(v.doc_id)}." if per_doc_schema else "") + quote_ident(v.view)
        for v in views
    }
    tables = pa.table(
        {
            "doc_id": pa.array([v.doc_id for v in views], type=pa.string()),
            "table_id": pa.array([v.table_id for v in views], type=pa.string()),
            "view": pa.array([view_names[v.table_id, v.doc_id] for v in views], type=pa.string()),
            "caption": pa.array([v.caption for v in views], type=pa.string()),
            "pages": pa.array([v.pages for v in views], type=pa.list_(pa.int64())),
            "n_rows": pa.array([v.n_rows for v in views], type=pa.int64()),
            "description": pa.array([v.description for v in views], type=pa.string()),
        }
    )
    cols = [(v, c) for v in views for c in v.columns]
    columns = pa.table(
        {
            "doc_id": pa.array([v.doc_id for v, _ in cols], type=pa.string()),
            "table_id": pa.array([v.table_id for v, _ in cols], type=pa.string()),
            "view": pa.array([view_names[v.table_id, v.doc_id] for v, _ in cols], type=pa.string()),
            "column_name": pa.array([c["name"] for _, c in cols], type=pa.string()),
            "type": pa.array([c.get("type") for _, c in cols], type=pa.string()),
            "role": pa.array([c.get("role") for _, c in cols], type=pa.string()),
            "label": pa.array([c.get("label") for _, c in cols], type=pa.string()),
            "unit": pa.array([c.get("unit") for _, c in cols], type=pa.string()),
        }
    )
    con.register("tablesight_tables_arrow", tables)
    con.register("tablesight_columns_arrow", columns)
    con.execute(f"CREATE TABLE {TABLES} AS SELECT * FROM tablesight_tables_arrow")
    con.execute(f"CREATE TABLE {COLUMNS} AS SELECT * FROM tablesight_columns_arrow")
    con.unregister("tablesight_tables_arrow")
    con.unregister("tablesight_columns_arrow")
