"""The tasks: a document task validates the input and fans out page tasks; page tasks render,
detect and recognise; the one that counts the last page writes the manifest.

No chords and no `.get()`: progress and completion live in Redis (worker.queue.state).
Tasks are idempotent: a page already counted is skipped, and one whose record this job's
options already wrote is reused; re-running overwrites the same keys. Transient errors
(storage, broker) retry with jittered exponential backoff; permanent ones fail the page or
the job at once with the reason. Every log line carries the job id (and page).
"""

from __future__ import annotations

import logging
import os
import random
import socket
import time
from typing import Any

import redis
from celery import Task, signals
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded, WorkerLostError
from celery.utils.log import get_task_logger
from kombu.exceptions import OperationalError

from worker.contract import PageRecord
from worker.engines import LEGACY_ENGINE, queue_engine
from worker.errors import InputError, reason_for
from worker.inputs import parse_page_ranges
from worker.outputs import page_key
from worker.queue.app import DOCUMENT_TASK, PAGES_TASK, app
from worker.queue.cancel import remove_after_stop, stop_at_boundary
from worker.queue.finish import fail_job, finalise, finish_page
from worker.queue.page_reuse import output_settings
from worker.queue.runtime import Runtime, runtime, shutdown
from worker.queue.state import TERMINAL, options_hash
from worker.queue.watchdog import Watchdog
from worker.settings import get_hooks, get_settings
from worker.storage import Storage, StorageError
from worker.timestamps import utc_now_iso

logger = get_task_logger("worker.queue.tasks")
STAND_IN_MODELS = {"stand_in": {"id": "bench_stand_in_pages", "revision": None}}  # what bench stand-in pages record


class JobLog(logging.LoggerAdapter[logging.Logger]):
    """Prefixes `[job=… page=…]` and passes job_id/page as `extra` for structured handlers."""

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        extra = dict(self.extra or {})
        kwargs["extra"] = {**kwargs.get("extra", {}), **extra}
        page = extra.get("page")
        return f"[job={extra['job_id']}{'' if page is None else f' page={page}'}] {msg}", kwargs


def job_log(job_id: str, pages: list[int] | None = None) -> JobLog:
    page = None if not pages else (str(pages[0]) if len(pages) == 1 else f"{pages[0]}-{pages[-1]}")
    return JobLog(logger, {"job_id": job_id, "page": page})


def page_task_id(job_id: str, pages: list[int]) -> str:
    """Stable per page group: Flower shows which page a task is, redeliveries keep the id."""
    return f"{job_id}.p{pages[0]:04d}"


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, StorageError):
        return exc.transient
    return isinstance(
        exc, (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OperationalError, ConnectionError)
    )


def backoff(retries: int, base: float, cap: float) -> float:
    """Exponential delay with equal jitter: between half and all of min(cap, base * 2**retries)."""
    delay = min(cap, base * (2**retries))
    return delay / 2 + random.uniform(0, delay / 2)


class JobTask(Task):
    """Base of our tasks: late acks, and a last word when a task dies of its time limit."""

    acks_late = True
    reject_on_worker_lost = True
    ignore_result = True

    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        # In the pool child for an exception that escaped the task; in the worker's main
        # process when the child was killed at the hard time limit (the message is then acked).
        if isinstance(exc, WorkerLostError) or not args:
            return  # the message goes back to the queue and runs again
        job_id = args[0]
        if isinstance(exc, TimeLimitExceeded):
            reason = f"task exceeded the hard time limit ({self.app.conf.task_time_limit} s) and was killed"
        else:
            reason = reason_for(exc)
        try:
            rt = runtime()
            job = rt.state.get(job_id)
            if job is None or job.get("status") in TERMINAL:
                return
            if self.name == PAGES_TASK:
                log = job_log(job_id, list(args[1]))
                for p in args[1]:
                    finish_page(rt, job_id, p, worker=self.request.hostname, error=reason)
                finalise(rt, job_id, task_id, log)
            else:
                fail_job(rt, job, reason, job_log(job_id))
        except Exception:  # noqa: BLE001 - nothing more can be done; the log has it
            logger.exception("[job=%s] could not record the failure of task %s", job_id, task_id)


def _retry(task: Task, exc: BaseException, log: JobLog) -> None:
    """Retry after a transient error, or return when the retries are spent."""
    s = runtime().settings
    if task.request.retries >= s.queue.task_max_retries:
        return
    delay = backoff(task.request.retries, s.queue.retry_backoff_base, s.queue.retry_backoff_max)
    log.warning(
        "transient error, retry %d/%d in %.1f s: %s", task.request.retries + 1, s.queue.task_max_retries, delay, exc
    )
    raise task.retry(exc=exc, countdown=delay, max_retries=s.queue.task_max_retries)


@app.task(name=DOCUMENT_TASK, bind=True, base=JobTask)
def document_task(self: Task, job_id: str) -> dict[str, Any] | None:
    """Validate the stored input (permanent errors fail the job now), then fan out page tasks."""
    log = job_log(job_id)
    rt = runtime()
    try:
        job = rt.state.get(job_id)
        if job is None or job.get("status") in TERMINAL:
            log.info("nothing to do (job %s)", "unknown or expired" if job is None else job["status"])
            return None
        try:
            doc = rt.inputs.get(rt.storage, job["input_key"], job["sha256"])
            options = job["options"]
            pages = parse_page_ranges(options.get("pages"), doc.page_count)
            for p in pages:  # refuse before any page task renders
                doc.check_pixels(p, int(options["dpi"]))
        except (InputError, ValueError) as exc:
            fail_job(rt, job, exc.reason if isinstance(exc, InputError) else str(exc), log)
            return {"job_id": job_id, "status": "failed"}
        size = rt.settings.queue.pages_per_task
        groups = [pages[i : i + size] for i in range(0, len(pages), size)]
        rt.state.start(job_id, pages, doc.page_count, doc.kind)
        if job.get("fanned_out") != "1":
            for group in groups:
                page_task.apply_async(args=(job_id, group), task_id=page_task_id(job_id, group))
            rt.state.update(job_id, fanned_out=1)
        log.info("%s: %d page(s) in %d task(s)", job.get("source", ""), len(pages), len(groups))
        return {"job_id": job_id, "pages": len(pages), "tasks": len(groups)}
    except SoftTimeLimitExceeded:
        _fail_if_possible(rt, job_id, f"validation took longer than {rt.settings.queue.task_soft_time_limit} s", log)
    except Exception as exc:
        _fail_if_possible(rt, job_id, _retry_or_reason(self, exc, log, "document task"), log)
    return {"job_id": job_id, "status": "failed"}


def _retry_or_reason(task: Task, exc: Exception, log: JobLog, what: str) -> str:
    """Transient errors retry (raising Retry) until retries run out; then, or for a permanent
    error, the one-line reason the job or page fails with."""
    if is_transient(exc):
        _retry(task, exc, log)
        return f"gave up after {task.request.retries} retries: {exc}"
    log.exception("%s failed", what)
    return reason_for(exc)


def _fail_if_possible(rt: Runtime, job_id: str, reason: str, log: JobLog) -> None:
    try:
        job = rt.state.get(job_id)
        if job is not None:
            fail_job(rt, job, reason, log)
    except Exception:  # noqa: BLE001 - the broker itself is gone; the log keeps the reason
        log.exception("could not record the job's failure (%s)", reason)


@app.task(name=PAGES_TASK, bind=True, base=JobTask)
def page_task(self: Task, job_id: str, pages: list[int]) -> dict[str, Any] | None:
    """Render, detect and recognise `pages`; count each once; the last one writes the manifest."""
    log = job_log(job_id, pages)
    rt = runtime()
    finished: set[int] = set()  # pages counted by this run (pages counted before are no-ops to fail)
    try:
        job = rt.state.get(job_id)
        if job is None or job.get("status") in TERMINAL:
            log.info("nothing to do (job %s)", "unknown or expired" if job is None else job["status"])
            return None
        todo = _pages_to_run(self, rt, job, pages, finished, log)
        if todo:
            _run(self, rt, job, todo, finished, log)
    except SoftTimeLimitExceeded:
        _fail_pages(
            self,
            rt,
            job_id,
            [p for p in pages if p not in finished],
            f"page took longer than the soft time limit ({rt.settings.queue.task_soft_time_limit} s)",
            log,
        )
    except Exception as exc:
        reason = _retry_or_reason(self, exc, log, "page task")
        _fail_pages(self, rt, job_id, [p for p in pages if p not in finished], reason, log)
    try:
        finalise(rt, job_id, self.request.id, log)
    except SoftTimeLimitExceeded:
        log.error("writing the manifest took longer than the soft time limit")
        raise
    except Exception as exc:
        if is_transient(exc):
            _retry(self, exc, log)
        raise
    return {"job_id": job_id, "pages": sorted(finished)}


def _pages_to_run(
    task: Task, rt: Runtime, job: dict[str, Any], pages: list[int], finished: set[int], log: JobLog
) -> list[int]:
    """Pages of this task not yet counted; pages that keep killing their worker are failed."""
    job_id = job["job_id"]
    attempts = rt.state.count_attempts(job_id, pages)
    done = rt.state.done_pages(job_id)
    todo = []
    for p in pages:
        if p in done:
            continue
        crashes = attempts[p] - 1 - task.request.retries
        if crashes > rt.settings.queue.max_page_crashes:
            reason = f"page {p} was lost mid-run {crashes} times (worker killed or out of memory); not running it again"
            log.error(reason)
            finish_page(rt, job_id, p, worker=task.request.hostname, error=reason)
            finished.add(p)
        else:
            todo.append(p)
    if len(todo) < len(pages):
        log.info("%d of %d page(s) already done", len(pages) - len(todo), len(pages))
    return todo


def _run(task: Task, rt: Runtime, job: dict[str, Any], todo: list[int], finished: set[int], log: JobLog) -> None:
    job_id, s = job["job_id"], rt.settings
    # BENCH HOOK (DevHooks.bench_stand_in_pages): no models, an empty record per page
    engine = job["options"].get("engine") or LEGACY_ENGINE
    stages = None if get_hooks().bench_stand_in_pages else rt.stages(job["options"].get("tables", "detect"), engine)
    models = STAND_IN_MODELS if stages is None else stages.models()
    if not job.get("models"):
        rt.state.update(job_id, models=models)
    # what a page's output depends on (not the page selection): a record with the same marker is reusable
    page_options = {k: job["options"].get(k) for k in ("dpi", "tables")}
    if engine != LEGACY_ENGINE:  # records written before engines existed stay reusable
        page_options["engine"] = job["options"]["engine"]
    page_options["settings"] = output_settings(s)  # another configuration runs the page again
    marker = {"job_id": job_id, "page_options_hash": options_hash(page_options), "models": models}
    doc = rt.inputs.get(rt.storage, job["input_key"], job["sha256"])
    host = task.request.hostname
    for p in list(todo):
        tables = None if job.get("force") else _stored_page_tables(rt.storage, job["doc_id"], p, marker)
        if tables is not None:
            finish_page(rt, job_id, p, worker=host, tables=tables, reused=True)
            finished.add(p)
    run = [p for p in todo if p not in finished]
    if not run:
        return
    for p in run:
        rt.state.page_info(
            job_id,
            p,
            {
                "state": "running",
                "worker": host,
                "pid": os.getpid(),
                "started_at": utc_now_iso(),
            },
        )
    if get_hooks().test_page_delay:
        time.sleep(get_hooks().test_page_delay * len(run))  # TEST HOOK (DevHooks.test_page_delay)
    if stages is None:
        _stand_in_pages(rt, job, run, marker, finished, host)
        return
    from worker.pipeline import process_pages

    since = time.perf_counter()
    results = process_pages(
        doc,
        run,
        doc_id=job["doc_id"],
        stages=stages,
        storage=rt.storage,
        settings=s,
        dpi=int(job["options"]["dpi"]),
        record_extra=marker,
    )
    stopped = None
    try:
        for result in results:
            # wall time for this page (stage timings overlap: the pipeline runs some of them on threads)
            seconds, since = time.perf_counter() - since, time.perf_counter()
            error = "; ".join(e.reason for e in result.errors) or None
            counted, done, total = finish_page(
                rt, job_id, result.page, worker=host, tables=len(result.tables), seconds=seconds
            )
            finished.add(result.page)
            job_log(job_id, [result.page]).info(
                "%d table(s) in %.2f s%s; %d/%d page(s) done",
                len(result.tables),
                seconds,
                f" ({error})" if error else "",
                done,
                total,
            )
            stopped = stop_at_boundary(rt.state, job_id)
            if stopped:
                log.info("job cancelled: stopping after page %d", result.page)
                break
    finally:
        getattr(results, "close", lambda: None)()  # pages in flight finish writing before this returns
    if stopped == "remove":
        remove_after_stop(rt.storage, job["doc_id"], run)


def _stand_in_pages(
    rt: Runtime, job: dict[str, Any], run: list[int], marker: dict[str, Any], finished: set[int], host: str | None
) -> None:
    """BENCH HOOK: store each page's record with no tables and count it, as a page with no
    tables would be stored and counted, so the queue's own cost is all that is measured."""
    job_id = job["job_id"]
    for p in run:
        record = PageRecord(page=p).dump()
        rt.storage.put_json(page_key(job["doc_id"], p), {**record, **marker})
        _, done, total = finish_page(rt, job_id, p, worker=host, tables=0)
        finished.add(p)
        job_log(job_id, [p]).info("stand-in page stored; %d/%d page(s) done", done, total)
        stopped = stop_at_boundary(rt.state, job_id)
        if stopped:
            if stopped == "remove":
                remove_after_stop(rt.storage, job["doc_id"], run)
            break


def _stored_page_tables(storage: Storage, doc_id: str, page: int, marker: dict[str, Any]) -> int | None:
    """How many tables the page's stored record lists, if that record was written with these
    options and models and has no errors (so the page need not run again); else None."""
    try:
        record = PageRecord.model_validate(storage.get_json(page_key(doc_id, page)))
    except (KeyError, ValueError):  # missing, or not a page record this version can read: run it
        return None
    stored = record.model_dump(mode="json")
    same = all(stored.get(k) == v for k, v in marker.items() if k != "job_id")
    return len(record.tables) if same and not record.errors else None


def _fail_pages(task: Task, rt: Runtime, job_id: str, pages: list[int], reason: str, log: JobLog) -> None:
    for p in pages:
        finish_page(rt, job_id, p, worker=task.request.hostname, error=reason)
    if pages:
        log.error("page(s) %s failed: %s", ",".join(map(str, pages)), reason)


@signals.worker_process_init.connect
def _preload(**_: Any) -> None:
    """In each new pool process (never the parent): load the models now if asked to."""
    rt = runtime()
    if rt.settings.queue.preload_models:
        try:
            rt.stages("detect", queue_engine(None, rt.settings))
        except Exception:  # noqa: BLE001 - a crash here would restart the process in a loop; the
            logger.exception("preloading the models failed")  # page tasks report the reason instead


_WATCHDOG: list[Watchdog] = []


@signals.worker_ready.connect
def _start_watchdog(sender: Any = None, **_: Any) -> None:
    """In the worker's main process: the sweep that re-sends lost tasks (worker.queue.watchdog)."""
    dog = Watchdog(get_settings(), app, str(getattr(sender, "hostname", None) or socket.gethostname()))
    dog.start()
    _WATCHDOG.append(dog)


@signals.worker_shutdown.connect
def _stop_watchdog(**_: Any) -> None:
    while _WATCHDOG:
        _WATCHDOG.pop().stop()


@signals.worker_process_shutdown.connect
def _cleanup(**_: Any) -> None:
    shutdown()
