"""The job API: enqueue a document, follow its progress, fetch its manifest.

    from worker.queue import client
    job_id = client.enqueue("report.pdf", {"pages": "1-3", "dpi": 200})
    client.status(job_id)        # {"status": "running", "pages_done": 1, "pages_total": 3, "pages": {...}}
    manifest = client.wait(job_id, timeout=600)
    task = client.request_read(f"{manifest['doc_id']}/p0001-t01")  # vision read of one table
    client.wait_read(task)

The input is uploaded to storage under a content-addressed key (`<doc_id>/source/input.bin`);
only ids travel through the broker, so any node can fetch it. The same document with the
same options maps to the same job (its id and result come back) unless `force=True`.
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from worker.contract import JobStatus
from worker.contract.reads import read_manifest
from worker.engines import queue_engine
from worker.errors import TablesightError
from worker.inputs import parse_page_ranges
from worker.queue.app import DOCUMENT_TASK, make_app
from worker.queue.callbacks import check_url
from worker.queue.finish import fail_job, job_manifest_key, queue_callback
from worker.queue.state import TERMINAL, JobState, options_hash, valid_job_id
from worker.settings import Settings, get_settings
from worker.storage import Storage, storage_for
from worker.timestamps import utc_now_iso

OPTION_KEYS = ("dpi", "pages", "tables", "engine")
_log = logging.LoggerAdapter(logging.getLogger(__name__), {})


class JobNotFound(TablesightError, KeyError):
    """No such job (never created, or its state expired from Redis)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "job not found"


class JobNotFinished(TablesightError):
    """The job is still queued or running."""


class JobTimeout(TablesightError, TimeoutError):
    """`wait` ran out of time; the job goes on."""


def source_key(doc_id: str) -> str:
    return f"{doc_id}/source/input.bin"


def normalise_options(options: dict[str, Any] | None, settings: Settings) -> dict[str, Any]:
    """Complete and check the options (ValueError when bad): the same document and options
    always give the same dict, so they dedupe."""
    options = dict(options or {})
    unknown = set(options) - set(OPTION_KEYS)
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)}; known: {list(OPTION_KEYS)}")
    dpi = int(options.get("dpi") or settings.inputs.dpi)
    if not 36 <= dpi <= 1200:
        raise ValueError(f"dpi must be between 36 and 1200, not {dpi}")
    pages = options.get("pages")
    pages = None if pages is None or str(pages).strip().lower() in ("", "all") else str(pages).replace(" ", "")
    if pages is not None:
        parse_page_ranges(pages, 1_000_000)  # syntax only; the range is checked against the document
    tables = options.get("tables") or "detect"
    if tables not in ("detect", "page"):
        raise ValueError(f"tables must be 'detect' or 'page', not {tables!r}")
    # the engine is fixed per job, so one job's pages never mix engines across a fleet
    # `auto` settles to the fleet's default without a look-up: the enqueuing machine is not a worker
    engine = queue_engine(options.get("engine"), settings)
    return {"dpi": dpi, "pages": pages, "tables": tables, "engine": engine}


def check_callback(url: str, settings: Settings) -> None:
    """Refuse (CallbackRefused, a ValueError) a callback this deployment will not send."""
    if not settings.api.callback_secret:
        from worker.queue.callbacks import CallbackRefused

        raise CallbackRefused("callbacks need TABLESIGHT_API_CALLBACK_SECRET set (they are signed)")
    check_url(url, settings.api.callback_hosts)


class JobClient:
    """Talks to the job state in Redis, the storage and the broker named by `settings`."""

    def __init__(self, settings: Settings | None = None, *, storage: Storage | None = None) -> None:
        self.settings = settings or get_settings()
        self.state = JobState.from_settings(self.settings)
        self._storage = storage
        self._app = None

    @property
    def storage(self) -> Storage:
        if self._storage is None:
            self._storage = storage_for(self.settings)
        return self._storage

    @property
    def app(self):  # noqa: ANN201 - a Celery app
        if self._app is None:
            self._app = make_app(self.settings)
        return self._app

    def close(self) -> None:
        if self._app is not None:
            self._app.close()
        self.state.r.close()

    def enqueue(
        self,
        path_or_bytes: str | Path | bytes,
        options: dict[str, Any] | None = None,
        *,
        name: str | None = None,
        force: bool = False,
        callback_url: str | None = None,
        sha256: str | None = None,
    ) -> str:
        """Upload the input and queue its job; returns the job id (an existing one for a duplicate).

        A path is hashed and uploaded in blocks (`sha256` skips the hashing when the caller
        already has it), so large files are never held in memory. `callback_url` gets a signed
        POST when the job ends (worker.queue.callbacks); a duplicate's job gets it too."""
        from worker.outputs import doc_id_for

        opts = normalise_options(options, self.settings)
        if callback_url:
            check_callback(callback_url, self.settings)
        data: bytes | None = None
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            data = bytes(path_or_bytes)
            name = name or "document"
            size = len(data)
            sha256 = hashlib.sha256(data).hexdigest()
            path = None
        else:
            path = Path(path_or_bytes)
            size = path.stat().st_size  # FileNotFoundError etc. are the caller's to report
            name = name or path.name
            if sha256 is None:
                with path.open("rb") as fh:
                    sha256 = hashlib.file_digest(fh, "sha256").hexdigest()
        ohash = options_hash(opts)
        if not force:
            existing = self._reusable_job(sha256, ohash)
            if existing:
                self._attach_callback(existing, callback_url)
                self._send_if_unsent(existing, data, path)
                return existing
        job_id = uuid.uuid4().hex
        doc_id = doc_id_for(sha256)
        job = {
            "job_id": job_id,
            "doc_id": doc_id,
            "sha256": sha256,
            "source": name[:255],
            "input_key": source_key(doc_id),
            "options": opts,
            "options_hash": ohash,
            "force": force,
            "status": "queued",
            "pages_total": 0,
            "pages_done": 0,
            "pages_failed": 0,
            "created_at": utc_now_iso(),
            "created_ts": f"{time.time():.3f}",
            "size": size,
        }
        if callback_url:
            job.update(callback_url=callback_url, callback_state="pending", callback_attempts=0)
        self.state.create(job_id, job)  # before the dedup key, so a racing client finds a live job
        holder = self.state.remember(sha256, ohash, job_id, replace=force)
        if holder != job_id:
            if self._active_or_done(holder):  # another client enqueued the same document a moment ago
                self.state.r.delete(self.state.key(job_id))
                self._attach_callback(holder, callback_url)
                self._send_if_unsent(holder, data, path)
                return holder
            self.state.remember(sha256, ohash, job_id, replace=True)
        if size > self.settings.inputs.max_file_bytes:  # refused here, not uploaded: failed at once
            reason = (
                f"file is {size} bytes, over the limit of {self.settings.inputs.max_file_bytes} "
                "(TABLESIGHT_MAX_FILE_BYTES)"
            )
            fail_job(self, job, reason, _log)
            return job_id
        try:
            self._upload_and_send(job_id, str(job["input_key"]), data, path)
        except Exception as exc:
            self.state.forget(sha256, ohash, job_id)
            self.state.transition(
                job_id, {"queued"}, "failed", reason=f"could not enqueue: {exc}", finished_at=utc_now_iso()
            )
            raise
        return job_id

    def _attach_callback(self, job_id: str, callback_url: str | None) -> None:
        """A duplicate submission's callback: added to the live job (one callback per job), or
        sent now when that job has already ended."""
        if not callback_url:
            return
        key = self.state.key(job_id)
        if not self.state.r.hsetnx(key, "callback_url", callback_url):
            return  # the job already calls back somewhere; the first URL wins
        self.state.update(job_id, callback_state="pending", callback_attempts=0)
        job = self.state.get(job_id) or {}
        if job.get("status") in TERMINAL:
            queue_callback(self.app, job_id, _log)

    def cancel(self, job_id: str, *, remove: bool = False) -> dict[str, Any]:
        """Cancel a queued or running job (worker.queue.cancel); returns its status."""
        from worker.queue.cancel import cancel_job

        if not valid_job_id(job_id):
            raise JobNotFound(f"not a job id: {job_id[:40]!r}")
        return cancel_job(self, job_id, remove=remove, log=_log)

    def _upload_and_send(self, job_id: str, input_key: str, data: bytes | None, path: Path | None) -> None:
        """Store the input (unless it is there) and queue the document task; `sent_ts` marks the
        job as handed to the broker (a duplicate then need not send it again) and when."""
        if not self.storage.exists(input_key):
            if data is not None:
                self.storage.put_bytes(input_key, data, "application/octet-stream")
            else:
                self.storage.put_file(input_key, str(path), "application/octet-stream")
        self.app.send_task(DOCUMENT_TASK, args=(job_id,), task_id=f"{job_id}.doc")
        self.state.update(job_id, sent_ts=f"{time.time():.3f}")

    def _send_if_unsent(self, job_id: str, data: bytes | None, path: Path | None) -> None:
        """A queued job that was never sent (its enqueuer died between creating the job and
        sending its task, e.g. an API killed mid-upload) is sent by the duplicate that finds it,
        which holds the same bytes. Sending twice is harmless: the document task fans out once."""
        job = self.state.get(job_id)
        if job is None or job.get("status") != "queued" or job.get("sent_ts"):
            return
        self._upload_and_send(job_id, str(job["input_key"]), data, path)

    def _reusable_job(self, sha256: str, ohash: str) -> str | None:
        job_id = self.state.find_duplicate(sha256, ohash)
        return job_id if job_id and self._active_or_done(job_id) else None

    def _active_or_done(self, job_id: str) -> bool:
        job = self.state.get(job_id)
        return job is not None and job.get("status") not in ("failed", "cancelled")

    def status(self, job_id: str) -> dict[str, Any]:
        """The job's state with per-page progress (JobNotFound if unknown or expired)."""
        if not valid_job_id(job_id):
            raise JobNotFound(f"not a job id: {job_id[:40]!r}")
        job = self.state.get(job_id)
        if job is None:
            raise JobNotFound(f"no job {job_id} (unknown, or its state expired)")
        pages = self.state.pages(job_id)
        out = {
            k: job.get(k)
            for k in (
                "job_id",
                "doc_id",
                "status",
                "source",
                "sha256",
                "options",
                "pages_total",
                "pages_done",
                "pages_failed",
                "created_at",
                "started_at",
                "finished_at",
            )
        }
        out["force"] = bool(job.get("force"))
        out["tables"] = job.get("tables")
        out["reason"] = job.get("reason") or None
        out["pages"] = {str(p): info for p, info in pages.items()}
        out["errors"] = [{"page": p, "reason": i["error"]} for p, i in pages.items() if i.get("error")]
        if out["reason"] and not out["errors"]:
            out["errors"] = [{"reason": out["reason"]}]
        if job.get("callback_url"):
            out["callback"] = {
                "url": job["callback_url"],
                "state": job.get("callback_state") or "pending",
                "attempts": int(job.get("callback_attempts") or 0),
                "last_error": job.get("callback_error") or None,
                "delivered_at": job.get("callback_at") or None,
            }
        out["manifest"] = (
            self.storage.location(job_manifest_key(job["doc_id"], job_id))
            if job.get("status") in TERMINAL and job.get("manifest_key")
            else None
        )
        return JobStatus.model_validate(out).dump()

    def result(self, job_id: str) -> dict[str, Any]:
        """The job's manifest (JobNotFinished while it runs)."""
        st = self.status(job_id)
        if st["status"] not in TERMINAL:
            raise JobNotFinished(f"job {job_id} is {st['status']} ({st['pages_done']}/{st['pages_total']} pages)")
        try:
            return read_manifest(self.storage, job_manifest_key(st["doc_id"], job_id)).dump()
        except KeyError:
            raise JobNotFound(
                f"job {job_id} is {st['status']} but its manifest is not in storage "
                f"({st['reason'] or 'no reason recorded'})"
            ) from None

    def wait(
        self,
        job_id: str,
        timeout: float | None = None,
        *,
        poll: float = 0.5,
        on_progress: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Poll until the job ends; returns its manifest (JobTimeout after `timeout` seconds)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            st = self.status(job_id)
            if on_progress:
                on_progress(st)
            if st["status"] in TERMINAL:
                return self.result(job_id)
            if deadline is not None and time.monotonic() >= deadline:
                raise JobTimeout(
                    f"job {job_id} still {st['status']} after {timeout} s "
                    f"({st['pages_done']}/{st['pages_total']} pages)"
                )
            time.sleep(poll)

    def request_read(
        self, table_id: str, *, backend: str | None = None, model: str | None = None, force: bool = False
    ) -> str:
        """Queue a vision read of a stored table (`<doc_id>/<table_id>`); returns its task id.

        The full record lands in storage as `<doc_id>/tables/<table_id>.vision.json`.
        """
        from worker.queue.vision_client import enqueue_read

        return enqueue_read(self.app, table_id, backend=backend, model=model, force=force)

    def wait_read(self, task_id: str, timeout: float | None = None) -> dict[str, Any]:
        """The summary of a queued read (status, reason, html_key, agreement) once it ends."""
        from worker.queue.vision_client import wait_read

        return wait_read(self.app, task_id, timeout)

    def require_workers(self, queues: list[str]) -> None:
        """Raise NoConsumer unless some running worker consumes each of `queues`."""
        from worker.queue.consumers import require_consumers

        require_consumers(self.app, queues)


_default: JobClient | None = None


def default_client() -> JobClient:
    global _default
    if _default is None:
        _default = JobClient()
    return _default


def enqueue(
    path_or_bytes: str | Path | bytes,
    options: dict[str, Any] | None = None,
    *,
    name: str | None = None,
    force: bool = False,
) -> str:
    return default_client().enqueue(path_or_bytes, options, name=name, force=force)


def status(job_id: str) -> dict[str, Any]:
    return default_client().status(job_id)


def result(job_id: str) -> dict[str, Any]:
    return default_client().result(job_id)


def wait(job_id: str, timeout: float | None = None, **kwargs: Any) -> dict[str, Any]:
    return default_client().wait(job_id, timeout, **kwargs)


def request_read(table_id: str, **kwargs: Any) -> str:
    return default_client().request_read(table_id, **kwargs)


def wait_read(task_id: str, timeout: float | None = None) -> dict[str, Any]:
    return default_client().wait_read(task_id, timeout)


def cancel(job_id: str, *, remove: bool = False) -> dict[str, Any]:
    return default_client().cancel(job_id, remove=remove)
