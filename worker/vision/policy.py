"""Which tables to read without being asked: the `needs_vision` ones of a finished document.

`extract --read-hard` (or VISION_AUTO_READ) reads them in process; the queue enqueues one
vision task per table instead (worker.queue.vision_client.enqueue_hard_tables).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from models.vision import VisionError, model_name
from worker.errors import TablesightError
from worker.settings import ModelSettings, Settings, VisionSettings
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


def read_line(ref: str, record: dict[str, Any], where: str | None) -> str:
    """One line for a person about one read: ok with its shape and TEDS, or why it failed."""
    if record.get("status") != "ok":
        note = " (an earlier good read is kept)" if record.get("kept_previous") else ""
        return f"{ref}: failed: {record.get('reason')}{note}"
    grid = record.get("grid") or {}
    teds = (record.get("agreement") or {}).get("teds")
    vs = f", TEDS {teds:.3f} vs detector" if isinstance(teds, (int, float)) else ""
    cached = " (stored read)" if record.get("cached") else ""
    return f"{ref}: ok{cached} {grid.get('n_rows')}x{grid.get('n_cols')}{vs} -> {where or record.get('html_key')}"


def read_hard(
    storage: Storage,
    manifest: dict[str, Any],
    settings: Settings,
    say: Callable[[str], None],
    warn: Callable[[str], None],
) -> bool:
    """`extract --read-hard`: read the document's needs_vision tables in process, one line each.

    False when the reader cannot be set up (no model, bad URL): the caller stops there. A
    table the model could not read is reported and stored as a failed read, not an error.
    """

    def report(record: dict[str, Any]) -> None:
        ref = f"{record.get('doc_id')}/{record.get('table_id')}"
        where = storage.location(record["html_key"]) if record.get("html_key") else None
        say(f"  vision read {read_line(ref, record, where)}")

    try:
        read_hard_tables(storage, manifest, settings, on_read=report)
    except TablesightError as exc:
        warn(f"error: vision read: {exc}")
        return False
    return True


def reader_problem(vision: VisionSettings, models: ModelSettings, backend: str | None = None) -> str | None:
    """Why no read can work with these settings (no model name, bad URL), checked without a model call."""
    try:
        model_name(vision, models, backend)
    except VisionError as exc:
        return str(exc)
    if (backend or vision.backend) == "openai" and not vision.url.startswith(("http://", "https://")):
        return f"vision URL {vision.url!r} must start with http:// or https://"
    return None
