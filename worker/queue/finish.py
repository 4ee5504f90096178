"""Ending a job: count a page once, write the manifest once, or fail the whole job.

The manifest is built with `build_manifest` from the page records in storage, exactly as
the in-process path builds it. The task that counts the last page finalises; a SET NX
claim (keyed by its task id, which survives retries and redeliveries) makes that happen
once in effect, and a re-run of the same task may finish what it started.
"""

from __future__ import annotations

import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, cast

from worker.contract import ErrorEntry, Manifest, PageRecord, PageState
from worker.outputs import build_manifest, manifest_key, page_key
from worker.queue.runtime import Runtime
from worker.queue.state import TERMINAL, JobState
from worker.retrieval.logical_tables import attach_logical_tables
from worker.storage import Storage, StorageError
from worker.timestamps import utc_now_iso


class StateAndStore(Protocol):
    """What failing a job needs: its state in Redis and the store (a client has both, no Runtime)."""

    @property
    def state(self) -> JobState: ...

    @property
    def storage(self) -> Storage: ...


ACTIVE = frozenset({"queued", "running"})
_READ_THREADS = 16


def job_manifest_key(doc_id: str, job_id: str) -> str:
    """This job's own copy of its manifest (`<doc_id>/manifest.json` is the latest job's)."""
    return f"{doc_id}/jobs/{job_id}.json"


def finish_page(
    rt: Runtime,
    job_id: str,
    page: int,
    *,
    worker: str | None,
    tables: int = 0,
    seconds: float = 0.0,
    error: str | None = None,
    reused: bool = False,
) -> tuple[int, int, int]:
    """Count `page` as done (once); returns (counted by this call, pages done, pages total)."""
    info: dict[str, Any] = {
        "state": "failed" if error else "done",
        "worker": worker,
        "pid": os.getpid(),
        "finished_at": utc_now_iso(),
    }
    if error:
        info["error"] = error
    else:
        info.update(tables=tables, seconds=round(seconds, 3), reused=reused)
    return rt.state.mark_done(job_id, page, info, failed=bool(error))


def is_last(rt: Runtime, job_id: str) -> bool:
    done, total = cast(list[str | None], rt.state.r.hmget(rt.state.key(job_id), ["pages_done", "pages_total"]))
    return int(total or 0) > 0 and int(done or 0) >= int(total or 0)


def finalise(rt: Runtime, job_id: str, token: str, log: logging.LoggerAdapter[logging.Logger]) -> dict[str, Any] | None:
    """Write the manifest if every page is done and this caller holds the claim."""
    if not is_last(rt, job_id):
        return None
    hold = rt.settings.queue.task_time_limit * 2 + int(rt.settings.queue.retry_backoff_max)
    if not rt.state.claim_final(job_id, token, hold):
        return None
    job = rt.state.get(job_id)
    if job is None or job.get("status") in TERMINAL:
        return None
    infos = rt.state.pages(job_id)
    pages: list[int] = job["page_list"]

    def record(p: int) -> PageRecord:
        info = infos.get(p, {})
        if info.get("state") == PageState.FAILED:
            return PageRecord(page=p, errors=[ErrorEntry(page=p, reason=info.get("error", "failed"))])
        try:
            stored = rt.storage.get_json(page_key(job["doc_id"], p))
        except KeyError:
            return PageRecord(page=p, errors=[ErrorEntry(page=p, reason="page record missing from storage")])
        try:
            parsed = PageRecord.model_validate(stored)
        except ValueError as exc:  # corrupt or foreign: the page counts as failed, the job still ends
            reason = f"page record does not follow the output contract: {_first_line(exc)}"
            return PageRecord(page=p, errors=[ErrorEntry(page=p, reason=reason)])
        # which job and options wrote the page is the queue's business, not the manifest's
        return parsed.model_copy(update={"job_id": None, "page_options_hash": None, "models": None})

    with ThreadPoolExecutor(max_workers=min(_READ_THREADS, max(1, len(pages)))) as pool:
        records = list(pool.map(record, pages))
    manifest = build_manifest(
        doc_id=job["doc_id"],
        source=job.get("source", ""),
        sha256=job["sha256"],
        kind=job.get("kind"),
        page_count=job.get("page_count", 0),
        pages=pages,
        page_records=records,
        errors=[],
        models=job.get("models") or {},
        options=job["options"],
        started=float(job.get("created_ts") or time.time()),
    )
    manifest = manifest.model_copy(update={"job_id": job_id})
    if rt.settings.context.link_continued_tables:  # same as the in-process path (pipeline.extract_document)
        linked = attach_logical_tables(
            manifest.dump(), rt.storage, tolerance=rt.settings.context.continuation_column_tolerance
        )
        manifest = Manifest.model_validate(linked)
    _write_manifest(rt, job["doc_id"], job_id, manifest)
    reason = "; ".join(e.reason for e in manifest.errors[:3])
    ended = rt.state.transition(
        job_id,
        ACTIVE,
        manifest.status,
        finished_at=utc_now_iso(),
        tables=len(manifest.tables),
        manifest_key=job_manifest_key(job["doc_id"], job_id),
        reason=reason,
    )
    if ended:
        _callback_if_any(rt, job_id, log)
    log.info(
        "job %s: %d page(s), %d table(s), %d error(s)",
        manifest.status,
        len(pages),
        len(manifest.tables),
        len(manifest.errors),
    )
    data = manifest.dump()
    if rt.settings.vision.auto_read:
        _enqueue_vision_reads(data, rt, log)
    return data


def fail_job(
    rt: Runtime | StateAndStore, job: dict[str, Any], reason: str, log: logging.LoggerAdapter[logging.Logger]
) -> None:
    """The job cannot run at all (bad input, bad options, gave up): failed manifest, failed state."""
    job_id = job["job_id"]
    manifest = build_manifest(
        doc_id=job["doc_id"],
        source=job.get("source", ""),
        sha256=job.get("sha256"),
        kind=job.get("kind") or None,
        page_count=int(job.get("page_count") or 0),
        pages=[],
        page_records=[],
        errors=[{"reason": reason}],
        models={},
        options=job.get("options") or {},
        started=float(job.get("created_ts") or time.time()),
    ).model_copy(update={"job_id": job_id})
    try:
        _write_manifest(rt, job["doc_id"], job_id, manifest)
        where = job_manifest_key(job["doc_id"], job_id)
    except StorageError as exc:  # the reason still reaches the user through the job state
        log.error("cannot write the failed manifest: %s", exc)
        where = ""
    if rt.state.transition(job_id, ACTIVE, "failed", reason=reason, finished_at=utc_now_iso(), manifest_key=where):
        log.warning("job failed: %s", reason)
        _callback_if_any(rt, job_id, log)


def queue_callback(app: Any, job_id: str, log: logging.LoggerAdapter[logging.Logger]) -> None:
    """Queue the job's end-of-job callback, when it has one (best effort: the job has ended
    either way, and `callback_state` stays `pending` for anyone looking)."""
    from worker.queue.app import CALLBACK_TASK

    try:
        app.send_task(CALLBACK_TASK, args=(job_id,), task_id=f"{job_id}.callback")
    except Exception as exc:  # noqa: BLE001 - the broker is gone; the job state says pending
        log.error("could not queue the callback: %s", exc)


def _callback_if_any(rt: Runtime | StateAndStore, job_id: str, log: logging.LoggerAdapter[logging.Logger]) -> None:
    job = rt.state.get(job_id) or {}
    if not job.get("callback_url"):
        return
    client_app = getattr(rt, "app", None)
    if client_app is None:
        from worker.queue.app import app as client_app
    queue_callback(client_app, job_id, log)


def _write_manifest(rt: Runtime | StateAndStore, doc_id: str, job_id: str, manifest: Manifest) -> None:
    data = manifest.dump()
    rt.storage.put_json(job_manifest_key(doc_id, job_id), data)
    rt.storage.put_json(manifest_key(doc_id), data)


def _enqueue_vision_reads(manifest: dict[str, Any], rt: Runtime, log: logging.LoggerAdapter[logging.Logger]) -> None:
    """VISION_AUTO_READ: one vision task per needs_vision table (best effort: the job is done)."""
    from worker.queue.app import app
    from worker.queue.vision_client import enqueue_hard_tables

    try:
        ids = enqueue_hard_tables(app, manifest, rt.settings)
    except Exception as exc:  # noqa: BLE001 - the reads can still be asked for with `tablesight read`
        log.error("could not queue vision reads of the hard tables: %s", exc)
        return
    if ids:
        log.info("queued %d vision read(s) of hard tables", len(ids))


def _first_line(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return " ".join(lines[1:3])[:200] if len(lines) > 1 else (lines[0] if lines else type(exc).__name__)
