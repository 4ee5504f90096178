"""Which tables to read without being asked: the `needs_vision` ones of a finished document.

`extract --read-hard` (or VISION_AUTO_READ) reads them in process; the queue enqueues one
vision task per table instead (worker.queue.vision_client.enqueue_hard_tables).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from worker.settings import Settings
from worker.storage.base import Storage
from worker.vision.read import TableNotFound, TableRef, read_table

logger = logging.getLogger(__name__)


def hard_tables(manifest: dict[str, Any]) -> list[TableRef]:
    """The manifest's tables flagged `needs_vision`, in page order."""
    return [TableRef(manifest["doc_id"], t["table_id"]) for t in manifest.get("tables", []) if t.get("needs_vision")]


def read_hard_tables(
    storage: Storage,
    manifest: dict[str, Any],
    settings: Settings,
    *,
    backend: str | None = None,
    force: bool = False,
    on_read: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Read every hard table of one document in process; one table's failure spoils no other.

    A reader that cannot be set up at all (no model, bad URL) raises: every table would fail alike.
    """
    results = []
    for ref in hard_tables(manifest):
        try:
            result = read_table(storage, ref, settings, backend=backend, force=force)
        except TableNotFound as exc:
            result = {"doc_id": ref.doc_id, "table_id": ref.table_id, "status": "failed", "reason": str(exc)}
        results.append(result)
        if on_read:
            on_read(result)
    return results
