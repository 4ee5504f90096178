"""Is any worker listening? Asked once before a client waits, so a wait that could never end
says so at once instead of hanging."""

from __future__ import annotations

from typing import Any

from worker.errors import TablesightError


class NoConsumer(TablesightError):
    """No running worker consumes a queue that a client is about to wait on."""


def queue_consumers(celery_app: Any, queue: str, timeout: float = 2.0) -> list[str]:
    """Names of the worker nodes consuming `queue` now (one broadcast through the broker)."""
    replies = celery_app.control.inspect(timeout=timeout).active_queues() or {}
    return sorted(node for node, queues in replies.items() if any(q.get("name") == queue for q in queues or []))


def require_consumers(celery_app: Any, queues: list[str], timeout: float = 2.0) -> None:
    """Raise NoConsumer naming the queues that no worker consumes (the wait would never end)."""
    missing = [q for q in queues if not queue_consumers(celery_app, q, timeout)]
    if missing:
        names = ", ".join(missing)
        raise NoConsumer(
            f"no running worker consumes the {names} queue(s), so waiting would never end: start one with "
            f"`tablesight worker` (it takes every queue by default) or give a worker `--queues ...,{missing[0]}`"
        )
