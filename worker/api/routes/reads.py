"""Vision reads over HTTP: `POST .../tables/{table_id}/read` answers the stored read (200) or
queues one on the `vision` queue (202 + a read id); `GET /v1/reads/{read_id}` polls it.

A read id is the Celery task id; the server remembers which table it belongs to in Redis (with
the result's lifetime), so an unknown id is a clear 404 rather than "pending" forever.
"""

from __future__ import annotations

import hashlib
from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from worker.api import deps, ids
from worker.api.errors import ApiError
from worker.queue.client import JobClient
from worker.queue.vision_client import enqueue_read
from worker.vision.read import TableRef, stored_read
from worker.vision.sanitise import sanitise_answer

router = APIRouter(prefix="/v1", tags=["vision reads"], dependencies=[Depends(deps.require_caller)])

READ_FIELDS = (
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
    "grid",
    "caption",
    "removed",
    "repairs",
    "kept_previous",
    "last_failure",
)


def clean_html(html: str | None) -> str | None:
    """Stored HTML through the vision read's allow-list again (table markup, small spans only)."""
    return sanitise_answer(html).html if html else None


def read_view(client: JobClient, ref: TableRef, record: dict[str, Any]) -> dict[str, Any]:
    """What a client sees of a stored read: no raw answer, the checked HTML inline, agreement scores."""
    out: dict[str, Any] = {"doc_id": ref.doc_id, "table_id": ref.table_id}
    out.update({k: record[k] for k in READ_FIELDS if k in record})
    agreement = record.get("agreement") or {}
    out["agreement"] = (
        {k: agreement.get(k) for k in ("teds", "teds_struct", "cell_match", "same_shape")} if agreement else None
    )
    html = None
    if record.get("status") == "ok":
        try:
            html = client.storage.get_bytes(ref.key(".vision.html")).decode("utf-8")
        except KeyError:
            html = None
    out["html"] = clean_html(html)
    return out


def _reusable(client: JobClient, ref: TableRef, record: dict[str, Any] | None) -> bool:
    """A stored read worth answering with: ok or not worth retrying, and of the crop stored now."""
    if record is None or not (record.get("status") == "ok" or not record.get("retryable", True)):
        return False
    try:
        crop = client.storage.get_bytes(ref.key(".png"))
    except KeyError:
        return False
    return (record.get("image") or {}).get("sha256") == hashlib.sha256(crop).hexdigest()


def _read_key(client: JobClient, read_id: str) -> str:
    return f"{client.settings.queue.job_key_prefix}:read:{read_id}"


def _table(client: JobClient, doc_id: str, table_id: str) -> TableRef:
    ref = TableRef(ids.doc_id(doc_id), ids.table_id(table_id))
    if not client.storage.exists(ref.key(".json")):
        raise ApiError(404, f"no table {ref} in the store")
    return ref


def _start_read(client: JobClient, doc_id: str, table_id: str, force: bool) -> tuple[int, dict[str, Any]]:
    ref = _table(client, doc_id, table_id)
    record = None if force else stored_read(client.storage, ref)
    if record is not None and _reusable(client, ref, record):
        return 200, {"stored": True, "read": read_view(client, ref, record)}
    read_id = enqueue_read(client.app, str(ref), force=force)
    client.state.r.set(_read_key(client, read_id), str(ref), ex=client.settings.queue.result_expires)
    return 202, {"read_id": read_id, "status": "queued", "links": {"poll": f"/v1/reads/{read_id}"}}


@router.post(
    "/documents/{doc_id}/tables/{table_id}/read",
    summary="vision read of one table: the stored read (200) or a read id to poll (202)",
    responses={202: {"description": "queued on the vision queue; poll links.poll"}},
)
async def start_read(
    request: Request,
    doc_id: str,
    table_id: str,
    force: bool = Query(False, description="read again even if a read is stored"),
) -> JSONResponse:
    status, body = await run_in_threadpool(_start_read, deps.client(request), doc_id, table_id, force)
    headers = {"Location": body["links"]["poll"]} if status == 202 else {}
    return JSONResponse(body, status_code=status, headers=headers)


@router.get("/documents/{doc_id}/tables/{table_id}/read", summary="the stored vision read of one table")
async def get_stored_read(request: Request, doc_id: str, table_id: str) -> dict[str, Any]:
    client = deps.client(request)

    def load() -> dict[str, Any]:
        ref = _table(client, doc_id, table_id)
        record = stored_read(client.storage, ref)
        if record is None:
            raise ApiError(404, f"no vision read stored for {ref}: POST to this URL to start one")
        return read_view(client, ref, record)

    return await run_in_threadpool(load)


def _poll(client: JobClient, read_id: str) -> dict[str, Any]:
    ref_text = str(client.state.r.get(_read_key(client, read_id)) or "")
    if not ref_text:
        raise ApiError(404, f"no read {read_id} (unknown, or its result expired)")
    doc_id, _, table_id = ref_text.partition("/")
    ref = TableRef(doc_id, table_id)
    result = client.app.AsyncResult(read_id)
    state = result.state
    if state in ("PENDING", "RECEIVED", "RETRY"):
        return {"read_id": read_id, "status": "queued", "doc_id": doc_id, "table_id": table_id}
    if state == "STARTED":
        return {"read_id": read_id, "status": "running", "doc_id": doc_id, "table_id": table_id}
    if state != "SUCCESS":
        return {"read_id": read_id, "status": "failed", "doc_id": doc_id, "table_id": table_id, "reason": state}
    summary = result.result if isinstance(result.result, dict) else {}
    record = stored_read(client.storage, ref) if summary.get("status") == "ok" else None
    view = read_view(client, ref, record) if record else {"doc_id": doc_id, "table_id": table_id, **summary}
    return {"read_id": read_id, **view, "status": summary.get("status", "failed")}


@router.get("/reads/{read_id}", summary="poll a queued vision read")
async def poll_read(request: Request, read_id: str) -> dict[str, Any]:
    ids.read_id(read_id)
    return await run_in_threadpool(_poll, deps.client(request), read_id)
