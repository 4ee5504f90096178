"""Deleting a document: every key under `<doc_id>/` (input, pages, tables, exports, reads,
summaries, review versions, job manifests) from the store, the job state that points at it
from Redis, and one entry in the deletion log.

The log is append-only: each deletion is a new object `deletions/<time>-<doc_id>-<nonce>.json`
(nothing ever rewrites one), so it works the same on a folder and on S3 and two API replicas
deleting at once cannot lose each other's entry. It names the document, its source name and
content hash, who asked and how many keys went; never the content.
"""

from __future__ import annotations

import json
import re
import secrets
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, cast

from worker.errors import TablesightError
from worker.outputs import manifest_key
from worker.queue.state import TERMINAL, JobState
from worker.storage import Storage
from worker.timestamps import utc_now_iso

LOG_PREFIX = "deletions"
_SCAN_LIMIT = 50_000


class DocumentBusy(TablesightError):
    """A job of the document is still queued or running: cancel it first."""


def jobs_of(state: JobState, doc_id: str) -> list[dict[str, Any]]:
    """The jobs in Redis whose document is `doc_id` (a bounded scan)."""
    pattern = re.compile(rf"^{re.escape(state.prefix)}:job:[0-9a-f]{{32}}$")
    keys = []
    for n, key in enumerate(state.r.scan_iter(match=f"{state.prefix}:job:*", count=1000)):
        if n >= _SCAN_LIMIT:
            break
        if pattern.match(key):
            keys.append(key)
    fields = ["job_id", "doc_id", "status", "sha256", "options_hash"]
    with state.r.pipeline() as pipe:
        for key in keys:
            pipe.hmget(key, fields)
        rows = cast(list[list[str | None]], pipe.execute())
    return [dict(zip(fields, row)) for row in rows if row[1] == doc_id]


def delete_document(storage: Storage, state: JobState, doc_id: str, *, by: str) -> dict[str, Any]:
    """Remove the document everywhere (KeyError when nothing is stored under it; DocumentBusy
    while one of its jobs runs); returns the log entry, also written to the deletion log."""
    jobs = jobs_of(state, doc_id)
    busy = [j["job_id"] for j in jobs if j.get("status") not in TERMINAL]
    if busy:
        raise DocumentBusy(f"document {doc_id} has a job still queued or running ({busy[0]}): cancel it first")
    try:
        manifest = storage.get_json(manifest_key(doc_id))
    except KeyError:
        manifest = {}
    keys = storage.list(doc_id)
    if not keys:
        raise KeyError(doc_id)
    with ThreadPoolExecutor(max_workers=8) as pool:
        deleted = sum(pool.map(storage.delete, keys))
    sha256 = manifest.get("sha256") or next((j["sha256"] for j in jobs if j.get("sha256")), None)
    forgotten = _forget_jobs(state, jobs, sha256)
    now = datetime.now(UTC)
    entry = {
        "doc_id": doc_id,
        "deleted_at": utc_now_iso(),
        "by": by,
        "keys_deleted": deleted,
        "jobs_forgotten": forgotten,
        "source": manifest.get("source"),
        "sha256": sha256,
        "log_key": f"{LOG_PREFIX}/{now:%Y%m%dT%H%M%S}{now.microsecond:06d}Z-{doc_id}-{secrets.token_hex(3)}.json",
    }
    storage.put_bytes(entry["log_key"], json.dumps(entry, indent=1).encode("utf-8"), "application/json")
    return entry


def _forget_jobs(state: JobState, jobs: list[dict[str, Any]], sha256: str | None) -> int:
    """The document's jobs and dedup keys go, so the same file sent again runs again."""
    keys: list[str] = []
    for j in jobs:
        keys += [state.key(j["job_id"], part) for part in ("", "done", "pages", "attempts", "final")]
    if sha256:
        keys += list(state.r.scan_iter(match=f"{state.prefix}:dedup:{sha256}:*", count=1000))
    if keys:
        state.r.delete(*keys)
    return len(jobs)


def deletion_log(storage: Storage, limit: int = 100) -> list[dict[str, Any]]:
    """The newest entries of the deletion log, newest first."""
    keys = sorted(storage.list(LOG_PREFIX), reverse=True)[:limit]
    return [storage.get_json(k) for k in keys]
