"""Chunks and descriptions of a stored document, for the API.

Chunk assembly (`worker.retrieval`) is imported here and nowhere else in the API, with the
product's chunk layout, so the API serves what the CLI and the Python API serve.
"""

from __future__ import annotations

from typing import Any

from worker.core.chunks import approx_tokens
from worker.outputs import manifest_key
from worker.retrieval.chunks import LAYOUT, PREAMBLE, document_chunks
from worker.retrieval.descriptions import describe, stored_summary
from worker.retrieval.logical_tables import iter_logical_tables
from worker.storage import Storage


def chunks_of(storage: Storage, doc_id: str, max_tokens: int, max_rows: int = 0) -> list[dict[str, Any]]:
    """Every retrieval chunk of the document (KeyError when it is not stored)."""
    return document_chunks(storage, doc_id, max_tokens, approx_tokens, max_rows, layout=LAYOUT, preamble=PREAMBLE)


def descriptions_of(storage: Storage, doc_id: str) -> list[dict[str, Any]]:
    """Each table's retrieval description (merged tables once) and its stored LLM summary."""
    manifest = storage.get_json(manifest_key(doc_id))
    entries = {t["table_id"]: t for t in manifest.get("tables") or []}
    out = []
    for table in iter_logical_tables(storage, manifest):
        summary = stored_summary(storage, doc_id, table)
        parts = [entries.get(p, {}) for p in table.parts]
        out.append(
            {
                "table_id": table.table_id,
                "parts": table.parts,
                "pages": table.pages,
                "description": describe(table),
                "summary": summary.get("summary") if summary else None,
                "verified": bool(parts) and all(p.get("verified") for p in parts),
                "version": max((int(p.get("version") or 0) for p in parts), default=0),
            }
        )
    return out
