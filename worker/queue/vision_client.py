"""Client side of the vision reads: send a read by task name, wait for its summary.

Kept apart from worker.queue.vision_tasks so clients (CLI, JobClient, the finalising page
task) send vision tasks without importing the task module or its worker-side settings.
"""

from __future__ import annotations

from typing import Any

from worker.settings import Settings
from worker.vision.read import parse_table_ref

VISION_READ_TASK = "tablesight.vision.read"  # routed to the vision queue by `tablesight.vision.*`


def enqueue_read(
    celery_app: Any, table_id: str, *, backend: str | None = None, model: str | None = None, force: bool = False
) -> str:
    """Send one vision task; returns its task id. A malformed id raises ValueError here, not on a worker."""
    ref = parse_table_ref(table_id)
    result = celery_app.send_task(
        VISION_READ_TASK, args=(str(ref),), kwargs={"backend": backend, "model": model, "force": force}
    )
    return result.id


def wait_read(celery_app: Any, task_id: str, timeout: float | None = None) -> dict[str, Any]:
    """The summary a vision task returned (TimeoutError after `timeout` s). Clients only, never in a task."""
    from celery.exceptions import TimeoutError as CeleryTimeout

    try:
        return celery_app.AsyncResult(task_id).get(timeout=timeout, propagate=True, interval=0.2)
    except CeleryTimeout as exc:
        raise TimeoutError(f"vision read {task_id} not finished after {timeout} s") from exc


def enqueue_hard_tables(celery_app: Any, manifest: dict[str, Any], settings: Settings) -> list[str]:
    """With VISION_AUTO_READ, one vision task per `needs_vision` table of a finished document."""
    from worker.vision.policy import hard_tables

    if not settings.vision.auto_read:
        return []
    return [enqueue_read(celery_app, str(ref)) for ref in hard_tables(manifest)]
