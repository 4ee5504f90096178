"""The callback task: one signed POST per ended job, retried with jittered backoff.

Queued by whoever ends a job (the finaliser, `fail_job`, a cancel) on the docs queue, a task
of its own so a slow or failing receiver never holds up page tasks. Delivery is recorded in
the job's state (`callback_state`, `callback_attempts`, `callback_error`); the same job and
status always carry the same Idempotency-Key, so a retry after a lost answer is recognisable.
"""

from __future__ import annotations

import ssl
from typing import Any

import httpx
from celery import Task
from celery.utils.log import get_task_logger

from worker.queue.app import CALLBACK_TASK, app
from worker.queue.callbacks import CallbackRefused, build_request
from worker.queue.runtime import runtime
from worker.queue.state import TERMINAL
from worker.queue.tasks import backoff
from worker.timestamps import utc_now_iso

logger = get_task_logger("worker.queue.callbacks")
_RETRY_STATUSES = frozenset({408, 425, 429})


class _Retryable(Exception):
    pass


def deliver(job: dict[str, Any], settings: Any) -> int:
    """POST the callback once; the receiver's status code (CallbackRefused, _Retryable, or a
    permanent failure as ValueError)."""
    req = build_request(str(job["callback_url"]), job, settings.api.callback_secret, settings.api.callback_hosts)
    try:
        ca_file = settings.api.callback_ca_file
        verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=ca_file) if ca_file else True
        extensions = {"sni_hostname": req.sni_hostname} if req.sni_hostname else {}
        with httpx.Client(
            follow_redirects=False, timeout=settings.api.callback_timeout, trust_env=False, verify=verify
        ) as http:
            response = http.post(req.url, content=req.body, headers=req.headers, extensions=extensions)
    except httpx.HTTPError as exc:
        raise _Retryable(f"{type(exc).__name__}: {exc}") from None
    code = response.status_code
    if 200 <= code < 300:
        return code
    if code >= 500 or code in _RETRY_STATUSES:
        raise _Retryable(f"HTTP {code}")
    if 300 <= code < 400:
        raise ValueError(f"HTTP {code}: redirects are not followed")
    raise ValueError(f"HTTP {code}: refused by the receiver")


@app.task(name=CALLBACK_TASK, bind=True, acks_late=True, ignore_result=True)
def callback_task(self: Task, job_id: str) -> dict[str, Any] | None:
    rt = runtime()
    s = rt.settings
    job = rt.state.get(job_id)
    if job is None or not job.get("callback_url") or job.get("status") not in TERMINAL:
        return None
    if job.get("callback_state") == "delivered":
        return {"job_id": job_id, "state": "delivered"}
    attempts = int(job.get("callback_attempts") or 0) + 1
    try:
        code = deliver(job, s)
    except CallbackRefused as exc:
        rt.state.update(job_id, callback_state="refused", callback_attempts=attempts, callback_error=str(exc))
        logger.warning("[job=%s] callback refused: %s", job_id, exc)
        return {"job_id": job_id, "state": "refused"}
    except _Retryable as exc:
        if self.request.retries < s.api.callback_retries:
            delay = backoff(self.request.retries, s.api.callback_backoff_base, s.api.callback_backoff_max)
            rt.state.update(job_id, callback_state="pending", callback_attempts=attempts, callback_error=str(exc))
            logger.warning("[job=%s] callback failed (%s), retry in %.1f s", job_id, exc, delay)
            raise self.retry(countdown=delay, max_retries=s.api.callback_retries) from None
        rt.state.update(job_id, callback_state="failed", callback_attempts=attempts, callback_error=str(exc))
        logger.error("[job=%s] callback gave up after %d attempt(s): %s", job_id, attempts, exc)
        return {"job_id": job_id, "state": "failed"}
    except ValueError as exc:
        rt.state.update(job_id, callback_state="failed", callback_attempts=attempts, callback_error=str(exc))
        logger.error("[job=%s] callback failed: %s", job_id, exc)
        return {"job_id": job_id, "state": "failed"}
    rt.state.update(
        job_id, callback_state="delivered", callback_attempts=attempts, callback_error="", callback_at=utc_now_iso()
    )
    logger.info("[job=%s] callback delivered (HTTP %d)", job_id, code)
    return {"job_id": job_id, "state": "delivered"}
