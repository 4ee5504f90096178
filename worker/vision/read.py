"""Read one stored table with a vision model and store the checked result beside it.

`<doc_id>/tables/<table_id>.vision.html` holds the checked table, `.vision.json` the record:
backend, model, prompt version, latency, tokens, the raw answer, what was removed and
repaired, and the agreement with the detector's grid. The JSON is written last, so its
presence means the read is complete. A read that yields no table is stored as failed with
its reason. The same table read again with the same backend, model and prompt returns the
stored read (no model call) unless forced or the crop changed; a failure worth retrying
(timeout, 5xx) is redone.
A failed re-read never destroys an earlier good read: it is kept, with `last_failure` added.
Used in process (CLI, `extract --read-hard`) and by the queue's vision task alike.
"""

from __future__ import annotations

import hashlib
import io
import re
import time
from dataclasses import dataclass
from typing import Any

from PIL import Image

from models.vision import VisionError, VisionReader, load_reader, model_name
from worker.contract import VisionRead
from worker.errors import TablesightError
from worker.outputs import table_key
from worker.settings import Settings
from worker.storage.base import Storage
from worker.timestamps import utc_now_iso
from worker.vision.agreement import agreement
from worker.vision.check import check_answer
from worker.vision.prompt import PROMPT, PROMPT_VERSION

VISION_VERSION = 1
MAX_STORED_ANSWER = 100_000  # characters of the raw answer kept in the record
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_SUFFIXES = (".vision.html", ".vision.json", ".html", ".json", ".png")


class TableNotFound(TablesightError):
    """The table id names no stored table (or its crop is missing): never retry."""


@dataclass(frozen=True, slots=True)
class TableRef:
    doc_id: str
    table_id: str

    def __str__(self) -> str:
        return f"{self.doc_id}/{self.table_id}"

    def key(self, suffix: str) -> str:
        return table_key(self.doc_id, self.table_id, suffix)


def parse_table_ref(text: str) -> TableRef:
    """`<doc_id>/<table_id>`; `<doc_id>/tables/<table_id>[.png|.html|.json]` (a copied key) works too."""
    value = text.strip().strip("/")
    for suffix in _SUFFIXES:
        if value.endswith(suffix):
            value = value[: -len(suffix)]
            break
    parts = value.split("/")
    if len(parts) == 3 and parts[1] == "tables":
        parts = [parts[0], parts[2]]
    if len(parts) != 2 or not all(_ID.match(p) for p in parts):
        raise ValueError(f"{text!r} is not a table id: expected DOC_ID/TABLE_ID, e.g. 3f2a9c0d1e4b5a6c/p0001-t01")
    return TableRef(parts[0], parts[1])


def stored_read(storage: Storage, ref: TableRef) -> dict[str, Any] | None:
    try:
        return storage.get_json(ref.key(".vision.json"))
    except (KeyError, ValueError):
        return None


def _can_reuse_read(stored: dict[str, Any], backend: str, model: str, crop_sha256: str) -> bool:
    """Same backend, model, prompt and crop (a re-extraction may crop differently), and not a
    failure worth retrying."""
    same = (
        stored.get("backend"),
        stored.get("model"),
        stored.get("prompt_version"),
        (stored.get("image") or {}).get("sha256"),
    ) == (backend, model, PROMPT_VERSION, crop_sha256)
    return same and (stored.get("status") == "ok" or not stored.get("retryable", True))


def read_table(
    storage: Storage,
    ref: TableRef | str,
    settings: Settings,
    *,
    backend: str | None = None,
    force: bool = False,
    reader: VisionReader | None = None,
    deadline: float | None = None,
    request_id: str | None = None,
) -> dict[str, Any]:
    """Read (or reuse) one table; returns its record (`cached: true` when reused).

    Raises TableNotFound for an unknown table, VisionError/WeightsNotFound when the reader
    cannot be set up at all (a configuration problem, the same for every table).
    """
    ref = parse_table_ref(ref) if isinstance(ref, str) else ref
    backend = backend or settings.vision.backend
    model = reader.model if reader is not None else model_name(settings, backend)
    table, image, crop_sha256 = _load_table(storage, ref)
    stored = stored_read(storage, ref)
    if stored is not None and not force and _can_reuse_read(stored, backend, model, crop_sha256):
        return {**stored, "cached": True}
    active = reader or load_reader(settings, backend)
    record = _base_record(ref, table, image, backend, model, request_id)
    record["image"]["sha256"] = crop_sha256
    t0 = time.perf_counter()
    try:
        answer = active.read(image, PROMPT, deadline=deadline)
    except VisionError as exc:
        record["latency_seconds"] = round(time.perf_counter() - t0, 3)
        return _store_failure(storage, ref, record, stored, "backend", str(exc), retryable=exc.transient)
    record.update(
        latency_seconds=round(time.perf_counter() - t0, 3),
        finish_reason=answer.finish_reason,
        attempts=answer.attempts,
        raw_answer=answer.text[:MAX_STORED_ANSWER],
        raw_answer_chars=len(answer.text),
        tokens={"prompt": answer.prompt_tokens, "completion": answer.completion_tokens},
    )
    checked = check_answer(answer.text, settings.vision.max_answer_chars)
    cut = {"length": "the token limit (VISION_MAX_NEW_TOKENS)", "time": "the read's deadline"}.get(
        answer.finish_reason or ""
    )
    if cut:
        checked.repairs.append(f"the answer was cut off by {cut}")
    record.update(removed=checked.removed, repairs=checked.repairs, caption=checked.caption)
    if not checked.ok:
        reason = (checked.reason or "no table") + (f" (cut off by {cut})" if cut else "")
        # the same model gives the same answer again, unless it only ran out of time
        return _store_failure(
            storage,
            ref,
            record,
            stored,
            checked.failure or "no-table",
            reason,
            retryable=answer.finish_reason == "time",
        )
    assert checked.grid is not None and checked.html is not None
    detector_html = _detector_html(storage, ref)
    record.update(
        status="ok",
        grid={"n_rows": checked.grid.n_rows, "n_cols": checked.grid.n_cols, "header_rows": checked.grid.header_rows},
        html_key=ref.key(".vision.html"),
        agreement=agreement(checked.html, checked.grid, detector_html),
    )
    storage.put_text(ref.key(".vision.html"), checked.html + "\n", "text/html; charset=utf-8")
    return _put_read(storage, ref, record)


def _put_read(storage: Storage, ref: TableRef, record: dict[str, Any]) -> dict[str, Any]:
    """Store a read record, checked against the contract (a misspelt key fails here, not later);
    returns it as stored."""
    stored = VisionRead.model_validate(record).dump()
    storage.put_json(ref.key(".vision.json"), stored)
    return stored


def _load_table(storage: Storage, ref: TableRef) -> tuple[dict[str, Any], Image.Image, str]:
    """The table's record, its crop, and the crop's sha256."""
    try:
        table = storage.get_json(ref.key(".json"))
    except KeyError:
        raise TableNotFound(f"no table {ref} in the store ({storage.location(ref.key('.json'))} is missing)") from None
    try:
        data = storage.get_bytes(ref.key(".png"))
        with Image.open(io.BytesIO(data)) as im:
            image = im.convert("RGB")
    except KeyError:
        raise TableNotFound(f"table {ref} has no crop ({storage.location(ref.key('.png'))} is missing)") from None
    except (OSError, ValueError) as exc:
        raise TableNotFound(f"table {ref}: its crop cannot be read: {exc}") from exc
    return table, image, hashlib.sha256(data).hexdigest()


def _detector_html(storage: Storage, ref: TableRef) -> str | None:
    try:
        return storage.get_bytes(ref.key(".html")).decode("utf-8", "replace")
    except KeyError:
        return None


def _base_record(
    ref: TableRef, table: dict[str, Any], image: Image.Image, backend: str, model: str, request_id: str | None
) -> dict[str, Any]:
    flags = table.get("flags") or {}
    return {
        "vision_version": VISION_VERSION,
        "doc_id": ref.doc_id,
        "table_id": ref.table_id,
        "status": "failed",
        "failure": None,
        "reason": None,
        "retryable": False,
        "backend": backend,
        "model": model,
        "prompt_version": PROMPT_VERSION,
        "created_at": utc_now_iso(),
        "request_id": request_id,
        "image": {"key": ref.key(".png"), "size": list(image.size)},
        "detector_flags": {k: flags.get(k) for k in ("score", "needs_vision", "reasons")},
        "latency_seconds": None,
        "finish_reason": None,
        "attempts": None,
        "tokens": {"prompt": None, "completion": None},
        "raw_answer": None,
        "raw_answer_chars": 0,
        "removed": [],
        "repairs": [],
        "caption": "",
        "grid": None,
        "html_key": None,
        "agreement": None,
    }


def _store_failure(
    storage: Storage,
    ref: TableRef,
    record: dict[str, Any],
    stored: dict[str, Any] | None,
    failure: str,
    reason: str,
    *,
    retryable: bool,
) -> dict[str, Any]:
    record.update(status="failed", failure=failure, reason=reason, retryable=retryable)
    if stored is not None and stored.get("status") == "ok":
        # keep the earlier good read (its .vision.html stays valid); note this attempt's failure
        _put_read(
            storage,
            ref,
            {
                **stored,
                "last_failure": {
                    k: record[k]
                    for k in (
                        "created_at",
                        "backend",
                        "model",
                        "prompt_version",
                        "failure",
                        "reason",
                        "retryable",
                        "request_id",
                        "raw_answer",
                    )
                },
            },
        )
        return {**record, "kept_previous": True}
    return _put_read(storage, ref, record)
