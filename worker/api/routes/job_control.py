"""`DELETE /v1/jobs/{id}` (cancel) and `GET /v1/jobs/{id}/events` (server-sent progress).

Events come from the same job state the status route reads, re-read every
TABLESIGHT_API_EVENTS_INTERVAL seconds: a `page` event whenever a page changes state, a
`progress` event when the counts move, and one `end` event with the final status, after
which the stream closes. Any API replica can serve any job's stream (nothing is held in
the process), so a stream cut by a restart is picked up by reconnecting.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.sse import EventSourceResponse, ServerSentEvent
from starlette.concurrency import run_in_threadpool

from worker.api import deps, ids
from worker.api.errors import ApiError
from worker.api.models import JobEvent, JobView
from worker.api.routes.jobs import public_status
from worker.queue.cancel import JobAlreadyEnded
from worker.queue.client import JobNotFound
from worker.queue.state import TERMINAL

router = APIRouter(prefix="/v1", tags=["jobs"], dependencies=[Depends(deps.require_caller)])


@router.delete(
    "/jobs/{job_id}",
    response_model=JobView,
    summary="cancel a job: queued pages never run, running ones stop at the next page boundary",
    description="The status becomes `cancelled`. Pages finished by then are kept and listed in the job's "
    "(cancelled) manifest, or removed from storage with `?remove_pages=true`. Cancelling a cancelled job "
    "again answers its status; a job that already ended answers 409. A callback, if set, is sent.",
    responses={409: {"description": "the job already ended"}},
)
async def cancel_job(
    request: Request,
    job_id: str,
    remove_pages: bool = Query(False, description="remove the pages finished so far from storage"),
) -> dict[str, Any]:
    ids.job_id(job_id)
    request.state.job_ids = [job_id]
    client = deps.client(request)
    try:
        await run_in_threadpool(client.cancel, job_id, remove=remove_pages)
        return await run_in_threadpool(public_status, client, job_id)
    except JobNotFound as exc:
        raise ApiError(404, str(exc)) from None
    except JobAlreadyEnded as exc:
        raise ApiError(409, str(exc)) from None


def _known_job(request: Request, job_id: str) -> str:
    """The job must exist before the stream starts (a 404, not an empty stream)."""
    ids.job_id(job_id)
    request.state.job_ids = [job_id]
    job = deps.client(request).state.get(job_id)
    if job is None:
        raise ApiError(404, f"no job {job_id} (unknown, or its state expired)")
    return job_id


def _event(st: dict[str, Any], **extra: Any) -> JobEvent:
    return JobEvent(
        job_id=st["job_id"],
        status=st["status"],
        pages_done=st.get("pages_done") or 0,
        pages_total=st.get("pages_total") or 0,
        pages_failed=st.get("pages_failed") or 0,
        reason=st.get("reason"),
        **extra,
    )


@router.get(
    "/jobs/{job_id}/events",
    response_class=EventSourceResponse,
    responses={
        200: {
            "description": "a text/event-stream; each `data:` is a JobEvent (JSON)",
            "content": {"text/event-stream": {"schema": {"type": "string", "description": "JobEvent per event"}}},
        }
    },
    summary="server-sent events of a job's progress, page by page, ending with its final status",
    description="`event: page` per page state change, `event: progress` when the counts move, and a last "
    "`event: end` with the final status. Each `data:` is a JobEvent (JSON).",
)
async def job_events(request: Request, job_id: Annotated[str, Depends(_known_job)]) -> AsyncIterator[JobEvent]:
    client = deps.client(request)
    interval = client.settings.api.events_interval
    seen_pages: dict[str, tuple[Any, ...]] = {}
    last_counts: tuple[Any, ...] | None = None
    n = 0
    while True:
        try:
            st = await run_in_threadpool(client.status, job_id)
        except JobNotFound:
            return
        for page, info in sorted(st["pages"].items(), key=lambda kv: int(kv[0])):
            sig = (info.get("state"), info.get("tables"), info.get("error"))
            if seen_pages.get(page) != sig:
                seen_pages[page] = sig
                n += 1
                data = _event(
                    st, page=int(page), page_state=info.get("state"), tables=info.get("tables"), error=info.get("error")
                )
                yield ServerSentEvent(data=data, event="page", id=str(n))  # type: ignore[misc]
        counts = (st["status"], st["pages_done"], st["pages_total"], st["pages_failed"])
        if st["status"] in TERMINAL:
            n += 1
            yield ServerSentEvent(data=_event(st), event="end", id=str(n))  # type: ignore[misc]
            return
        if counts != last_counts:
            last_counts = counts
            n += 1
            yield ServerSentEvent(data=_event(st), event="progress", id=str(n))  # type: ignore[misc]
        if await request.is_disconnected():
            return
        await asyncio.sleep(interval)
