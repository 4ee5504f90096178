"""A reviewer's corrections to a stored table, each kept as a new version of its record.

An edit changes cell texts, says how many leading rows are header rows, and/or marks the
table checked (`verified`). It is applied to the table's current record, and everything the
record feeds is written again from the corrected grid, with the functions extraction uses:
HTML, Markdown and row text, CSV and Parquet (so the SQL views), the description, and the
merged tables it is part of; the manifest lists the table as `verified` at its version.

Keys, beside the table's own `<doc>/tables/<id>.*`:

    <id>.original.<ext>        the extraction's files, copied once, before the first edit
    <id>.versions/NNNN.json    version N: who, when, what changed, and the whole record

Version 0 is the extraction's. An edit names the version it was made on (`base_version`);
one made on an older version is refused (VersionConflict), so two reviewers never overwrite
each other silently. Re-extracting the document (force) writes a new version-0 record.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from worker.contract import TableRecord
from worker.core.html_out import grid_to_html
from worker.core.serialise import TableContext, grid_from_dict, rows_text, serialisations
from worker.errors import TablesightError
from worker.outputs import TEXT_FILES, manifest_key, table_key
from worker.retrieval.exports import export_record
from worker.retrieval.logical_tables import attach_logical_tables
from worker.storage import Storage
from worker.timestamps import utc_now_iso

# what a table's corrected version rewrites (the crop stays as it is)
REWRITTEN = (".json", ".html", ".md", ".rows.txt", ".csv", ".parquet")
ORIGINAL = ".original"


class EditRefused(TablesightError, ValueError):
    """The edit names a cell that is not there, or header rows outside the table."""


class VersionConflict(TablesightError):
    """The edit was made on a version that is no longer the current one."""


@dataclass
class Edit:
    base_version: int
    cells: list[tuple[int, int, str]] = field(default_factory=list)
    header_rows: int | None = None
    verified: bool | None = None
    note: str | None = None


def original_key(key: str) -> str:
    """`<doc>/tables/<id><ext>` -> `<doc>/tables/<id>.original<ext>` (the id has no dot)."""
    folder, _, name = key.rpartition("/")
    ident, dot, rest = name.partition(".")
    return f"{folder}/{ident}{ORIGINAL}{dot}{rest}"


def version_key(doc_id: str, table_id: str, version: int) -> str:
    return table_key(doc_id, table_id, f".versions/{version:04d}.json")


def current_version(record: dict[str, Any]) -> int:
    return int((record.get("review") or {}).get("version") or 0)


def versions(storage: Storage, doc_id: str, table_id: str) -> list[dict[str, Any]]:
    """Every stored version entry (without its record), oldest first; [] before any edit."""
    keys = sorted(storage.list(table_key(doc_id, table_id, ".versions")))
    out = []
    for key in keys:
        entry = storage.get_json(key)
        entry.pop("record", None)
        out.append(entry)
    return out


def _apply(record: dict[str, Any], edit: Edit) -> list[dict[str, Any]]:
    """Change the record's grid in place; returns what changed (only real changes)."""
    grid = record["grid"]
    by_slot = {(int(c["row"]), int(c["col"])): c for c in grid["cells"]}
    changes: list[dict[str, Any]] = []
    for row, col, text in edit.cells:
        cell = by_slot.get((row, col))
        if cell is None:
            raise EditRefused(f"no cell starts at row {row}, column {col} (a spanned slot, or outside the grid)")
        text = " ".join(text.split())
        if cell.get("text", "") != text:
            changes.append({"cell": [row, col], "from": cell.get("text", ""), "to": text})
            cell["text"] = text
    if edit.header_rows is not None:
        n = edit.header_rows
        if not 0 <= n < int(grid["n_rows"]):
            raise EditRefused(f"header_rows must be between 0 and {int(grid['n_rows']) - 1}, not {n}")
        old = int(record["serialisations"].get("header_rows", grid.get("header_rows", 0)))
        if n != old or n != int(grid.get("header_rows", 0)):
            changes.append({"header_rows": [old, n]})
        grid["header_rows"] = n
        for cell in grid["cells"]:
            cell["is_header"] = int(cell["row"]) < n
    if edit.verified is not None:
        was = bool((record.get("review") or {}).get("verified"))
        if was != edit.verified:
            changes.append({"verified": [was, edit.verified]})
    return changes


def _write(storage: Storage, record: dict[str, Any], header_set: bool) -> dict[str, str]:
    """Every file of the table from the corrected record (as `outputs.write_table`, crop aside)."""
    doc_id, tid = record["doc_id"], record["table_id"]
    grid = grid_from_dict(record["grid"])
    pages = [int(record["page"])]
    ser = serialisations(grid, TableContext.from_dict(record.get("context"), pages), table_id=tid)
    if header_set:
        ser["header_source"] = "reviewer"
    record["serialisations"] = ser
    for stale in ("schema", "description", "export_error"):
        record.pop(stale, None)
    storage.put_text(table_key(doc_id, tid, ".html"), grid_to_html(grid) + "\n", "text/html; charset=utf-8")
    texts = {"md": ser["markdown"] + "\n", "rows": rows_text(ser)}
    keys = {"png": table_key(doc_id, tid, ".png"), "html": table_key(doc_id, tid, ".html")}
    for name, text in texts.items():
        suffix, content_type = TEXT_FILES[name]
        keys[name] = table_key(doc_id, tid, suffix)
        storage.put_text(keys[name], text, content_type)
    keys.update(export_record(storage, table_key(doc_id, tid, ""), record))
    keys["json"] = table_key(doc_id, tid, ".json")
    storage.put_json(keys["json"], TableRecord.model_validate(record).dump())
    return keys


def _keep_originals(storage: Storage, doc_id: str, table_id: str, record: dict[str, Any]) -> None:
    """Before the first edit: the extraction's files as `.original`, and version 0."""
    for suffix in REWRITTEN:
        key = table_key(doc_id, table_id, suffix)
        target = original_key(key)
        if storage.exists(key) and not storage.exists(target):
            storage.put_bytes(target, storage.get_bytes(key), _content_type(suffix))
    zero = version_key(doc_id, table_id, 0)
    if not storage.exists(zero):
        made = str(storage.get_json(manifest_key(doc_id)).get("finished_at") or "")
        entry = {"version": 0, "by": "extraction", "at": made, "changes": [], "verified": False, "note": None}
        storage.put_json(zero, {**entry, "record": record})


def _content_type(suffix: str) -> str:
    return {
        ".json": "application/json",
        ".html": "text/html; charset=utf-8",
        ".csv": "text/csv; charset=utf-8",
        ".parquet": "application/vnd.apache.parquet",
    }.get(suffix, "text/plain; charset=utf-8")


def apply_edit(
    storage: Storage, doc_id: str, table_id: str, edit: Edit, *, by: str, link_tolerance: float | None = 0.03
) -> dict[str, Any]:
    """Store `edit` as the table's next version and rewrite its outputs; returns the version
    entry (KeyError: no such table; VersionConflict; EditRefused). Callers serialise edits of
    one table (the API holds a lock in Redis)."""
    record = storage.get_json(table_key(doc_id, table_id, ".json"))
    current = current_version(record)
    if edit.base_version != current:
        raise VersionConflict(
            f"{doc_id}/{table_id} is at version {current}, the edit was made on version {edit.base_version}: reload"
        )
    if current == 0:
        _keep_originals(storage, doc_id, table_id, copy.deepcopy(record))
    changes = _apply(record, edit)
    if not changes:
        return {"version": current, "by": by, "at": utc_now_iso(), "changes": [], "unchanged": True}
    was_verified = bool((record.get("review") or {}).get("verified"))
    verified = was_verified if edit.verified is None else edit.verified
    version, at = current + 1, utc_now_iso()
    record["review"] = {"version": version, "verified": verified, "by": by, "at": at, "changes": len(changes)}
    keys = _write(storage, record, header_set=edit.header_rows is not None)
    entry = {"version": version, "by": by, "at": at, "changes": changes, "verified": verified, "note": edit.note}
    storage.put_json(version_key(doc_id, table_id, version), {**entry, "record": storage.get_json(keys["json"])})
    _update_manifest(storage, doc_id, table_id, record, keys, link_tolerance)
    return entry


def _update_manifest(
    storage: Storage,
    doc_id: str,
    table_id: str,
    record: dict[str, Any],
    keys: dict[str, str],
    tolerance: float | None,
) -> None:
    """The manifest's entry: the shape, the files and `verified`/`version`; merged tables that
    hold this one are merged again from the corrected part (their originals kept first)."""
    manifest = storage.get_json(manifest_key(doc_id))
    review = record["review"]
    for entry in manifest.get("tables") or []:
        if entry.get("table_id") == table_id:
            entry["n_rows"], entry["n_cols"] = int(record["grid"]["n_rows"]), int(record["grid"]["n_cols"])
            entry["files"] = {**entry.get("files", {}), **keys}
            entry["verified"], entry["version"] = bool(review["verified"]), int(review["version"])
    merged = [lt for lt in manifest.get("logical_tables") or [] if table_id in lt.get("parts", [])]
    if merged and tolerance is not None:
        for lt in merged:
            for key in (lt.get("files") or {}).values():
                if storage.exists(key) and not storage.exists(original_key(key)):
                    storage.put_bytes(original_key(key), storage.get_bytes(key), "application/octet-stream")
        manifest = attach_logical_tables(manifest, storage, tolerance=tolerance)
    storage.put_json(manifest_key(doc_id), manifest)
