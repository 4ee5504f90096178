"""Cancelling a job: the state goes to `cancelled` at once (one Lua transition, so a job that
ends at the same moment is either finished or cancelled, never both), queued tasks are revoked
and skip themselves anyway (every task checks the state first), and a running page task stops
at its next page boundary (`stop_at_boundary`). The pages done by then are kept and listed in
a `cancelled` manifest, or removed from storage, as the request chose.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from worker.contract import DocStatus, ErrorEntry, PageRecord
from worker.errors import TablesightError
from worker.outputs import build_manifest, manifest_key, page_key
from worker.queue.finish import ACTIVE, StateAndStore, _write_manifest, job_manifest_key, queue_callback
from worker.queue.state import TERMINAL
from worker.storage import Storage
from worker.timestamps import utc_now_iso

REASON = "cancelled by request"


class JobAlreadyEnded(TablesightError):
    """The job ended (complete, partial or failed) before the cancel arrived."""


def page_task_ids(job_id: str, pages: list[int]) -> list[str]:
    """Every id a task of this job can have (a group's id is its first page, whatever the grouping)."""
    return [f"{job_id}.doc"] + [f"{job_id}.p{p:04d}" for p in pages]


def remove_page_outputs(storage: Storage, doc_id: str, page: int) -> int:
    """Delete one page's record and every file of its tables; returns how many keys went."""
    key = page_key(doc_id, page)
    try:
        record = PageRecord.model_validate(storage.get_json(key))
    except (KeyError, ValueError):
        record = None
    keys: set[str] = set()
    if record is not None:
        prefix = f"{doc_id}/tables/"
        for table in record.tables:
            keys |= {k for k in storage.list(f"{doc_id}/tables") if k.startswith(f"{prefix}{table.table_id}.")}
            keys |= set(table.files.values())
    removed = sum(1 for k in sorted(keys) if storage.delete(k))
    return removed + storage.delete(key)  # the page record last: while it is there, so may its tables be


def stop_at_boundary(state: Any, job_id: str) -> str | None:
    """Asked by a page task after each page: None to go on, or, when the job was cancelled
    meanwhile, `keep` or `remove` (what to do with the pages this task wrote)."""
    current = state.get(job_id) or {}
    if current.get("status") != "cancelled":
        return None
    return "remove" if current.get("cancel_remove") == 1 else "keep"


def remove_after_stop(storage: Storage, doc_id: str, pages: list[int]) -> int:
    """A stopped task's pages, all of them: the pipeline may have written pages ahead of the
    one it stopped after (its lanes overlap), and those go too."""
    return sum(remove_page_outputs(storage, doc_id, p) for p in pages)


def cancel_job(
    client: Any, job_id: str, *, remove: bool = False, log: logging.LoggerAdapter[logging.Logger] | None = None
) -> dict[str, Any]:
    """Cancel `job_id` (JobNotFound, JobAlreadyEnded); returns its status afterwards. Cancelling a
    cancelled job again answers its status."""
    from worker.queue.client import JobNotFound

    log = log or logging.LoggerAdapter(logging.getLogger(__name__), {"job_id": job_id})
    state = client.state
    job = state.get(job_id)
    if job is None:
        raise JobNotFound(f"no job {job_id} (unknown, or its state expired)")
    if job.get("status") == "cancelled":
        return client.status(job_id)
    if job.get("status") in TERMINAL:
        raise JobAlreadyEnded(f"job {job_id} already ended: {job['status']}")
    fields = {"finished_at": utc_now_iso(), "reason": REASON, "cancel_remove": 1 if remove else 0}
    if not state.transition(job_id, ACTIVE, "cancelled", **fields):
        job = state.get(job_id) or {}
        if job.get("status") == "cancelled":
            return client.status(job_id)
        raise JobAlreadyEnded(f"job {job_id} already ended: {job.get('status')}")
    pages: list[int] = list(job.get("page_list") or [])
    try:
        client.app.control.revoke(page_task_ids(job_id, pages))
    except Exception as exc:  # noqa: BLE001 - revoking is an optimisation: tasks check the state
        log.warning("could not broadcast the revoke: %s", exc)
    _record(client, job, pages, remove)
    if job.get("callback_url"):
        queue_callback(client.app, job_id, log)
    return client.status(job_id)


def _record(rt: StateAndStore, job: dict[str, Any], pages: list[int], remove: bool) -> None:
    """The cancelled job's manifest: the pages done so far (or none, when they were removed)."""
    job_id, doc_id = job["job_id"], job["doc_id"]
    done = sorted(rt.state.done_pages(job_id))
    records: list[PageRecord] = []
    for p in done:
        if remove:
            remove_page_outputs(rt.storage, doc_id, p)
            continue
        try:
            stored = PageRecord.model_validate(rt.storage.get_json(page_key(doc_id, p)))
            records.append(stored.model_copy(update={"job_id": None, "page_options_hash": None, "models": None}))
        except (KeyError, ValueError):
            records.append(PageRecord(page=p, errors=[ErrorEntry(page=p, reason="page record missing from storage")]))
    manifest = build_manifest(
        doc_id=doc_id,
        source=job.get("source", ""),
        sha256=job.get("sha256"),
        kind=job.get("kind") or None,
        page_count=int(job.get("page_count") or 0),
        pages=pages,
        page_records=records,
        errors=[{"reason": REASON + (" (finished pages removed)" if remove else "")}],
        models=job.get("models") or {},
        options=job.get("options") or {},
        started=float(job.get("created_ts") or time.time()),
    ).model_copy(update={"job_id": job_id, "status": DocStatus.CANCELLED})
    if remove:
        rt.storage.put_json(job_manifest_key(doc_id, job_id), manifest.dump())
        _drop_missing_tables(rt.storage, doc_id)
    else:
        _write_manifest(rt, doc_id, job_id, manifest)
    rt.state.update(
        job_id, manifest_key=job_manifest_key(doc_id, job_id), tables=len(manifest.tables), pages_kept=len(records)
    )


def _drop_missing_tables(storage: Storage, doc_id: str) -> None:
    """After a removal: the document's manifest (an earlier job's) no longer lists removed tables."""
    try:
        data = storage.get_json(manifest_key(doc_id))
    except KeyError:
        return
    kept = [t for t in data.get("tables") or [] if (key := (t.get("files") or {}).get("json")) and storage.exists(key)]
    if len(kept) != len(data.get("tables") or []):
        storage.put_json(manifest_key(doc_id), {**data, "tables": kept})
