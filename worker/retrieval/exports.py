"""CSV and Parquet of every table, beside its HTML: the files the SQL store reads.

The typed column view (`worker.core.columns`) becomes `<key>.csv` (for people and
spreadsheets) and `<key>.parquet` (typed, with the header path of each column and the
whole schema in its metadata, for DuckDB and dataframes); the table JSON gets the schema
and the retrieval description. Physical tables and merged logical tables alike.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections.abc import Sequence
from typing import Any

from worker.core.columns import TypedTable, typed_from_serialisations
from worker.core.describe import describe_table
from worker.core.serialise import TableContext, grid_from_dict, serialisations
from worker.core.types import TableGrid
from worker.storage.base import Storage, StorageError

logger = logging.getLogger(__name__)

PARQUET_SCHEMA_KEY = b"tablesight.schema"
EXPORT_SUFFIXES = {
    "csv": (".csv", "text/csv; charset=utf-8"),
    "parquet": (".parquet", "application/vnd.apache.parquet"),
}


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def csv_text(typed: TypedTable) -> str:
    """RFC 4180 CSV with a header row of column names; NULL is an empty field."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([c.name for c in typed.columns])
    for row in typed.rows:
        writer.writerow([_cell(v) for v in row])
    return buf.getvalue()


def arrow_table(typed: TypedTable, extra: dict[str, Any] | None = None) -> Any:
    """A pyarrow Table with typed columns; each field's metadata holds its header path."""
    import pyarrow as pa

    types = {"integer": pa.int64(), "number": pa.float64(), "text": pa.string()}
    fields = [
        pa.field(c.name, types[c.kind], metadata={b"label": " / ".join(c.path).encode("utf-8")}) for c in typed.columns
    ]
    arrays = [pa.array([row[i] for row in typed.rows], type=f.type) for i, f in enumerate(fields)]
    meta = {PARQUET_SCHEMA_KEY: json.dumps({**typed.schema(), **(extra or {})}, ensure_ascii=False).encode("utf-8")}
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=meta))


def parquet_bytes(typed: TypedTable, extra: dict[str, Any] | None = None) -> bytes:
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(arrow_table(typed, extra), buf, compression="zstd")
    return buf.getvalue()


def typed_of_record(record: dict[str, Any]) -> tuple[TableGrid, dict[str, Any], TypedTable] | None:
    """Grid, serialisations and typed view of a table record (None when it holds no grid)."""
    if not isinstance(record.get("grid"), dict):
        return None
    grid = grid_from_dict(record["grid"])
    ser = record.get("serialisations")
    if not isinstance(ser, dict) or "header_rows" not in ser:
        pages = [int(record["page"])] if "page" in record else []
        ser = serialisations(
            grid, TableContext.from_dict(record.get("context"), pages), str(record.get("table_id", ""))
        )
    return grid, ser, typed_from_serialisations(grid, ser)


def export_table(
    storage: Storage,
    key_base: str,
    table_id: str,
    typed: TypedTable,
    *,
    caption: str = "",
    pages: Sequence[int] = (),
    notes: Sequence[str] = (),
) -> tuple[dict[str, str], dict[str, Any], str]:
    """Write `<key_base>.csv` and `.parquet`; returns their keys, the schema and the description."""
    description = describe_table(typed, table_id=table_id, caption=caption, pages=pages, notes=notes, view=table_id)
    schema = typed.schema()
    keys = {name: key_base + suffix for name, (suffix, _) in EXPORT_SUFFIXES.items()}
    extra = {"table_id": table_id, "caption": caption, "pages": list(pages)}
    data = parquet_bytes(typed, extra)  # both made before either is written: no half export
    storage.put_text(keys["csv"], csv_text(typed), EXPORT_SUFFIXES["csv"][1])
    storage.put_bytes(keys["parquet"], data, EXPORT_SUFFIXES["parquet"][1])
    return keys, schema, description


def export_record(storage: Storage, key_base: str, record: dict[str, Any]) -> dict[str, str]:
    """Exports of a table record about to be stored: writes the files and adds `schema` and
    `description` to the record; returns the keys written ({} for a record without a grid).

    A failure here costs the exports, not the table: it is logged and noted in the record as
    `export_error` (storage errors still propagate, so the write is retried as a whole).
    """
    try:
        return _export_record(storage, key_base, record)
    except StorageError:
        raise
    except Exception as exc:  # the table itself is fine: keep it, say what is missing
        logger.exception("exporting %s failed", key_base)
        record["export_error"] = f"{type(exc).__name__}: {exc}"
        return {}


def _export_record(storage: Storage, key_base: str, record: dict[str, Any]) -> dict[str, str]:
    found = typed_of_record(record)
    if found is None:
        return {}
    _, ser, typed = found
    tid = str(record.get("table_id") or record.get("logical_id") or "")
    keys, schema, description = export_table(
        storage,
        key_base,
        tid,
        typed,
        caption=str(ser.get("caption") or ""),
        pages=[int(p) for p in ser.get("pages") or record.get("pages") or []],
        notes=[str(n) for n in ser.get("notes") or []],
    )
    record["schema"] = schema
    record["description"] = description
    return keys
