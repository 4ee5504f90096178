"""`/readyz`: can this server do its job right now? Broker, job state, store, and workers.

Ready means the broker and the job-state Redis answer, the store can be listed, and for each
queue a job needs (docs and pages) at least one worker answers a broadcast naming it among the
queues it consumes. The vision queue is reported but not required: a server without vision
workers still takes documents. Each check runs in a thread with a deadline, so a hung broker
makes the probe fail, not hang.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.concurrency import run_in_threadpool

from worker.queue.client import JobClient

CHECK_TIMEOUT = 4.0  # seconds per check; probes usually allow 5-10
PING_TIMEOUT = 1.5  # seconds workers get to answer the broadcast


def _broker_and_workers(client: JobClient) -> dict[str, Any]:
    app = client.app
    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
        replies = app.control.inspect(timeout=PING_TIMEOUT, connection=conn).active_queues() or {}
    return {node: sorted(q["name"] for q in queues) for node, queues in replies.items()}


def _job_state(client: JobClient) -> bool:
    return bool(client.state.r.ping())


def _store(client: JobClient) -> bool:
    client.storage.list("readyz")  # lists a prefix: a missing bucket or bad credentials raise
    return True


async def _run(fn: Any, client: JobClient) -> tuple[bool, Any]:
    try:
        return True, await asyncio.wait_for(run_in_threadpool(fn, client), CHECK_TIMEOUT)
    except TimeoutError:
        return False, f"no answer within {CHECK_TIMEOUT:g} s"
    except Exception as exc:  # noqa: BLE001 - any failure means "not ready", reported in one line
        return False, f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"


async def readiness(client: JobClient) -> tuple[bool, dict[str, Any]]:
    s = client.settings
    needed = [s.queue.docs, s.queue.pages]
    (broker_ok, workers), (state_ok, state), (store_ok, store) = await asyncio.gather(
        _run(_broker_and_workers, client), _run(_job_state, client), _run(_store, client)
    )
    checks: dict[str, Any] = {
        "broker": "ok" if broker_ok else workers,
        "job_state": "ok" if state_ok else state,
        "store": "ok" if store_ok else store,
    }
    consumers = workers if broker_ok else {}
    queues = {q: sorted(n for n, qs in consumers.items() if q in qs) for q in [*needed, s.queue.vision]}
    missing = [q for q in needed if not queues[q]]
    checks["workers"] = "ok" if broker_ok and not missing else f"no worker consumes {', '.join(missing)}"
    ready = broker_ok and state_ok and store_ok and not missing
    return ready, {"status": "ready" if ready else "not ready", "checks": checks, "queues": queues}
