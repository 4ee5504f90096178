"""Re-send the tasks the broker lost.

Celery's Redis transport takes a message off its queue (BRPOP) before it records it as
unacknowledged. A worker killed in between (a node lost, an out-of-memory kill) loses the
message: it is in no queue and in no unacknowledged set, so no visibility timeout brings it
back, and its job would wait for ever. The same holds for a job whose enqueuer (an API
process) died after storing the input and before sending the task.

So every `QUEUE__WATCHDOG_INTERVAL` seconds one worker (a Redis lock picks it) looks at the
live jobs. A job that has not moved for the grace period (the visibility timeout plus two
restore sweeps plus one interval: by then kombu would have handed back anything it still
holds) and whose tasks are in no queue and not unacknowledged gets them sent again. Sending
twice is harmless: the document task fans out once and a page is counted once
(worker.queue.tasks), so the worst a false alarm costs is a task that finds nothing to do.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from worker.queue.state import TERMINAL, JobState, valid_job_id
from worker.settings import Settings

logger = logging.getLogger(__name__)

LOCK = "watchdog"  # `<prefix>:watchdog`: one pass per interval across all workers
_UNACKED = "unacked"  # kombu's Redis transport: delivered, not yet acknowledged (tag -> message)
_PRIORITY_SEP = "\x06\x16"  # kombu's queue-name suffix for priorities other than 0
_PRIORITIES = (3, 6, 9)


@dataclass(frozen=True)
class Resend:
    """One task to send again: the document task, or one page group's task."""

    job_id: str
    task: str  # "document" | "pages"
    pages: tuple[int, ...] = ()


def grace_seconds(settings: Settings) -> float:
    """How long a job may stand still before its missing tasks count as lost."""
    q = settings.queue
    return q.visibility_timeout + 2 * q.unacked_restore_interval + q.watchdog_interval


def _ts(value: Any) -> float:
    """A job-state time (epoch seconds, or ISO 8601) as epoch seconds; 0 if absent."""
    if value in (None, ""):
        return 0.0
    try:
        return float(value)
    except (TypeError, ValueError):
        pass
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def last_moved(job: dict[str, Any], pages: dict[int, dict[str, Any]]) -> float:
    """The last time anything happened to the job (created, sent, started, a page began or ended)."""
    times = [_ts(job.get(k)) for k in ("created_ts", "sent_ts", "started_at")]
    for info in pages.values():
        times += [_ts(info.get("started_at")), _ts(info.get("finished_at"))]
    return max(times)


def lost_tasks(
    job: dict[str, Any],
    pages: dict[int, dict[str, Any]],
    done: set[int],
    present: set[str],
    *,
    now: float,
    grace: float,
    pages_per_task: int,
) -> list[Resend]:
    """What to send again for one job; pure, so the rules are tested without a broker.

    `present` holds the ids of every task that is queued or unacknowledged right now."""
    from worker.queue.tasks import page_task_id

    status = job.get("status")
    if status in TERMINAL or now - last_moved(job, pages) < grace:
        return []
    job_id = str(job["job_id"])
    if status == "queued":
        return [] if f"{job_id}.doc" in present else [Resend(job_id, "document")]
    if status != "running":
        return []
    page_list = [int(p) for p in job.get("page_list") or []]
    missing = [p for p in page_list if p not in done]
    if not missing:  # every page counted, no manifest: the finaliser died with its message
        return [] if any(t.startswith(f"{job_id}.p") for t in present) else [Resend(job_id, "pages", (page_list[-1],))]
    groups = [page_list[i : i + pages_per_task] for i in range(0, len(page_list), pages_per_task)]
    out = []
    for group in groups:
        todo = tuple(p for p in group if p not in done)
        if todo and page_task_id(job_id, group) not in present:
            out.append(Resend(job_id, "pages", todo))
    return out


def present_task_ids(client: Any, queues: list[str]) -> set[str]:
    """Ids of the tasks queued on `queues` or delivered and unacknowledged, in one snapshot
    (a transaction: a message moving between the two is seen in one of them)."""
    names = [q for base in queues for q in (base, *(f"{base}{_PRIORITY_SEP}{p}" for p in _PRIORITIES))]
    with client.pipeline(transaction=True) as pipe:
        for name in names:
            pipe.lrange(name, 0, -1)
        pipe.hvals(_UNACKED)
        *lists, unacked = pipe.execute()
    ids: set[str] = set()
    for raw in (m for messages in lists for m in messages):
        ids.add(_task_id(json.loads(raw)))
    for raw in unacked:
        ids.add(_task_id(json.loads(raw)[0]))
    ids.discard("")
    return ids


def _task_id(message: dict[str, Any]) -> str:
    headers = message.get("headers") or {}
    return str(headers.get("id") or message.get("properties", {}).get("correlation_id") or "")


def live_jobs(state: JobState) -> list[dict[str, Any]]:
    """Every job that has not ended (a SCAN over the job hashes: run once per interval)."""
    out = []
    head = f"{state.prefix}:job:"
    for key in state.r.scan_iter(match=f"{head}*", count=1000):
        job_id = str(key)[len(head) :]
        if not valid_job_id(job_id):
            continue  # a job's side keys (pages, done, attempts, final)
        status = state.r.hget(key, "status")
        if status is not None and status not in TERMINAL:
            job = state.get(job_id)
            if job is not None:
                out.append(job)
    return out


def sweep(
    settings: Settings, state: JobState, broker: Any, app: Any, storage: Any, now: float | None = None
) -> list[Resend]:
    """One pass: find the lost tasks of every live job and send them again; returns them."""
    from worker.queue.app import DOCUMENT_TASK, PAGES_TASK
    from worker.queue.tasks import page_task_id

    now = time.time() if now is None else now
    grace = grace_seconds(settings)
    jobs = [j for j in live_jobs(state) if now - _ts(j.get("created_ts")) >= grace]
    if not jobs:
        return []
    present = present_task_ids(broker, [settings.queue.docs, settings.queue.pages])
    sent: list[Resend] = []
    for job in jobs:
        job_id = str(job["job_id"])
        lost = lost_tasks(
            job,
            state.pages(job_id),
            state.done_pages(job_id),
            present,
            now=now,
            grace=grace,
            pages_per_task=settings.queue.pages_per_task,
        )
        for item in lost:
            if item.task == "document":
                if not storage.exists(str(job["input_key"])):
                    continue  # the upload never finished: only its client can send the bytes again
                app.send_task(DOCUMENT_TASK, args=(job_id,), task_id=f"{job_id}.doc")
                state.update(job_id, sent_ts=f"{time.time():.3f}")
            else:
                pages = list(item.pages)
                app.send_task(PAGES_TASK, args=(job_id, pages), task_id=page_task_id(job_id, pages))
                state.update(job_id, sent_ts=f"{time.time():.3f}")
            sent.append(item)
    return sent


class Watchdog:
    """The sweep on a daemon thread of a worker's main process, one worker at a time."""

    def __init__(self, settings: Settings, app: Any, hostname: str) -> None:
        self.settings, self.app, self.hostname = settings, app, hostname
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.settings.queue.watchdog_interval <= 0:
            return
        self._thread = threading.Thread(target=self._loop, name="tablesight-watchdog", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        from worker.queue.state import redis_client
        from worker.storage import storage_for

        interval = self.settings.queue.watchdog_interval
        state = JobState.from_settings(self.settings)
        broker = redis_client(self.settings.queue.broker_url)
        storage = storage_for(self.settings)
        while not self._stop.wait(interval):
            try:
                if not state.r.set(f"{state.prefix}:{LOCK}", self.hostname, nx=True, ex=max(1, interval - 1)):
                    continue
                for item in sweep(self.settings, state, broker, self.app, storage):
                    logger.warning(
                        "re-sent the lost %s task of job %s%s",
                        item.task,
                        item.job_id,
                        f" (pages {','.join(map(str, item.pages))})" if item.pages else "",
                    )
            except Exception:  # noqa: BLE001 - a broker outage: the next pass tries again
                logger.exception("watchdog pass failed")
