"""The output contract (DESIGN §3): keys under `<doc_id>/`, per-table files, page records, manifest.

Page records (`<doc_id>/pages/NNNN.json`) are what page workers write; the manifest is
always built from them, in process and through the queue alike, so both paths give the
same manifest for the same document.
"""

from __future__ import annotations

import io
import time
from typing import Any

from PIL import Image

from worker import __version__
from worker.exports import export_record
from worker.storage.base import Storage

MANIFEST_VERSION = 1


def doc_id_for(sha256: str) -> str:
    """A document's key prefix: the first 16 hex digits of its content hash (re-runs overwrite)."""
    return sha256[:16]


def manifest_key(doc_id: str) -> str:
    return f"{doc_id}/manifest.json"


def page_key(doc_id: str, page: int) -> str:
    return f"{doc_id}/pages/{page:04d}.json"


def table_id(page: int, index: int) -> str:
    return f"p{page:04d}-t{index:02d}"


def table_key(doc_id: str, tid: str, suffix: str) -> str:
    return f"{doc_id}/tables/{tid}{suffix}"


# Retrieval serialisations stored beside each table: name in `files` -> (key suffix, content type).
TEXT_FILES = {"md": (".md", "text/markdown; charset=utf-8"), "rows": (".rows.txt", "text/plain; charset=utf-8")}


def write_table(
    storage: Storage,
    doc_id: str,
    tid: str,
    crop: Image.Image,
    html: str,
    record: dict[str, Any],
    texts: dict[str, str] | None = None,
) -> dict[str, str]:
    """Write crop, HTML, serialisation texts (`TEXT_FILES`), CSV and Parquet (`worker.exports`,
    which also adds `schema` and `description` to the record) and JSON of one table; the JSON
    goes last so its presence means complete."""
    buf = io.BytesIO()
    crop.save(buf, format="PNG", optimize=False, compress_level=3)
    keys = {
        "png": table_key(doc_id, tid, ".png"),
        "html": table_key(doc_id, tid, ".html"),
        "json": table_key(doc_id, tid, ".json"),
    }
    storage.put_bytes(keys["png"], buf.getvalue(), "image/png")
    storage.put_text(keys["html"], html + "\n", "text/html; charset=utf-8")
    for name, text in (texts or {}).items():
        suffix, content_type = TEXT_FILES[name]
        keys[name] = table_key(doc_id, tid, suffix)
        storage.put_text(keys[name], text, content_type)
    keys.update(export_record(storage, table_key(doc_id, tid, ""), record))
    storage.put_json(keys["json"], record)
    return keys


def build_manifest(
    *,
    doc_id: str,
    source: str,
    sha256: str | None,
    kind: str | None,
    page_count: int,
    pages: list[int],
    page_records: list[dict[str, Any]],
    errors: list[dict[str, Any]],
    models: dict[str, Any],
    options: dict[str, Any],
    started: float,
) -> dict[str, Any]:
    """Merge page records into the manifest; status says whether every asked page succeeded."""
    tables: list[dict[str, Any]] = []
    timings: dict[str, float] = {}
    all_errors = list(errors)
    done = []
    for rec in sorted(page_records, key=lambda r: r["page"]):
        tables.extend(rec["tables"])
        all_errors.extend(rec.get("errors", []))
        for stage, seconds in rec.get("timings", {}).items():
            timings[stage] = round(timings.get(stage, 0.0) + seconds, 4)
        if not rec.get("errors"):
            done.append(rec["page"])
    if errors or (pages and not done):
        status = "failed"
    elif len(done) < len(pages):
        status = "partial"
    else:
        status = "complete"
    return {
        "manifest_version": MANIFEST_VERSION,
        "doc_id": doc_id,
        "status": status,
        "source": source,
        "sha256": sha256,
        "kind": kind,
        "page_count": page_count,
        "pages": pages,
        "pages_done": done,
        "tables": tables,
        "errors": all_errors,
        "models": models,
        "options": options,
        "timings": timings,
        "wall_seconds": round(time.time() - started, 3),
        "tool_version": f"tablesight {__version__}",
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
