"""The vision task: read one stored table on the `vision` queue, so GPU nodes can serve it.

Only the table id travels (`<doc_id>/<table_id>`); the worker fetches the crop from storage
and writes `.vision.html`/`.vision.json` beside it (worker.vision.read). The task is
idempotent: a redelivered or repeated read returns the stored one unless forced. Unlike the
page tasks it keeps its (small) result in the result backend, so a client can wait for the
read's summary without polling storage (worker.queue.vision_client sends and waits). The read
gets a deadline a little before the soft time limit, so a slow model ends in a stored,
retryable failure instead of a killed task.
"""

from __future__ import annotations

import time
from typing import Any

from celery import Task
from celery.exceptions import SoftTimeLimitExceeded
from celery.utils.log import get_task_logger

from worker.errors import TablesightError
from worker.queue.app import app
from worker.queue.runtime import runtime
from worker.queue.tasks import backoff, is_transient
from worker.queue.vision_client import VISION_READ_TASK
from worker.settings import Settings, get_settings
from worker.vision.read import TableNotFound, parse_table_ref, read_table

_MARGIN = 3.0  # seconds kept between the read's deadline and the soft time limit

logger = get_task_logger("worker.queue.vision_tasks")


def _limits(s: Settings) -> tuple[int, int]:
    """(soft, hard) time limits: the page tasks' unless VISION_TASK_TIME_LIMIT is set."""
    if s.vision.task_time_limit is None:
        return s.queue.task_soft_time_limit, s.queue.task_time_limit
    return max(1, s.vision.task_time_limit - 5), s.vision.task_time_limit


_SOFT, _HARD = _limits(get_settings())


def summary(record: dict[str, Any]) -> dict[str, Any]:
    """What the task returns (the full record, raw answer included, stays in storage)."""
    keys = (
        "doc_id",
        "table_id",
        "status",
        "failure",
        "reason",
        "retryable",
        "backend",
        "model",
        "prompt_version",
        "created_at",
        "latency_seconds",
        "tokens",
        "html_key",
        "grid",
        "cached",
        "kept_previous",
    )
    out = {k: record.get(k) for k in keys if k in record}
    agreement = record.get("agreement") or {}
    out["agreement"] = (
        {k: agreement.get(k) for k in ("teds", "teds_struct", "cell_match", "same_shape")} if agreement else None
    )
    return out


@app.task(
    name=VISION_READ_TASK,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=False,
    soft_time_limit=_SOFT,
    time_limit=_HARD,
)
def vision_read_task(
    self: Task, table_id: str, backend: str | None = None, model: str | None = None, force: bool = False
) -> dict[str, Any]:
    """Read `table_id` (`<doc_id>/<table_id>`); returns the read's summary, failures included."""
    log = logger
    rt = runtime()
    settings = rt.settings if not model else rt.settings.replace(**{"vision_model": model})
    deadline = time.monotonic() + max(1.0, _SOFT - _MARGIN)
    try:
        ref = parse_table_ref(table_id)
        record = read_table(
            rt.storage, ref, settings, backend=backend, force=force, deadline=deadline, request_id=self.request.id
        )
    except SoftTimeLimitExceeded:
        return _failed(
            table_id, "timeout", f"the read took longer than the soft time limit ({_SOFT} s)", retryable=True
        )
    except ValueError as exc:
        return _failed(table_id, "bad-id", str(exc), retryable=False)
    except TableNotFound as exc:
        return _failed(table_id, "not-found", str(exc), retryable=False)
    except Exception as exc:
        if is_transient(exc) and self.request.retries < rt.settings.queue.task_max_retries:
            delay = backoff(
                self.request.retries, rt.settings.queue.retry_backoff_base, rt.settings.queue.retry_backoff_max
            )
            log.warning("[table=%s] transient error, retry in %.1f s: %s", table_id, delay, exc)
            raise self.retry(exc=exc, countdown=delay, max_retries=rt.settings.queue.task_max_retries) from exc
        if not isinstance(exc, TablesightError):
            log.exception("[table=%s] vision read failed", table_id)
        reason = str(exc) if isinstance(exc, TablesightError) else f"{type(exc).__name__}: {exc}"
        return _failed(table_id, "setup", reason, retryable=is_transient(exc))
    if record.get("cached"):
        log.info("[table=%s] stored %s read of %s reused", table_id, record["status"], record.get("created_at"))
    else:
        log.info(
            "[table=%s] %s in %s s%s",
            table_id,
            record["status"],
            record.get("latency_seconds"),
            f": {record.get('reason')}" if record["status"] != "ok" else "",
        )
    return summary(record)


def _failed(table_id: str, failure: str, reason: str, *, retryable: bool) -> dict[str, Any]:
    """A read that could not even start (bad id, unknown table, reader not set up): nothing stored."""
    doc_id, _, tid = table_id.partition("/")
    logger.error("[table=%s] %s", table_id, reason)
    return {
        "doc_id": doc_id,
        "table_id": tid,
        "status": "failed",
        "failure": failure,
        "reason": reason,
        "retryable": retryable,
    }
