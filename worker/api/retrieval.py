"""Chunks and descriptions of a stored document, for the API.

Chunk assembly is imported here and nowhere else in the API: when it moves into its own
package (`worker.retrieval`), the import below is the one line to change.
"""

from __future__ import annotations

from typing import Any

from worker.cli.chunks import document_chunks  # -> worker.retrieval once chunk assembly moves there
from worker.core.chunks import approx_tokens
from worker.logical_tables import iter_logical_tables
from worker.outputs import manifest_key
from worker.storage import Storage
from worker.summary import describe, stored_summary


def chunks_of(storage: Storage, doc_id: str, max_tokens: int, max_rows: int = 0) -> list[dict[str, Any]]:
    """Every retrieval chunk of the document (KeyError when it is not stored)."""
    return document_chunks(storage, doc_id, max_tokens, approx_tokens, max_rows)


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
