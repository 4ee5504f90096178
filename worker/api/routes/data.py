"""Data over HTTP: read-only SQL (`POST /v1/sql`), the stored documents (`GET /v1/documents`,
paged), deleting one (`DELETE /v1/documents/{doc}`, logged), and per-document descriptions.

SQL keeps every guarantee of `tablesight sql` (only one query, a read-only catalog, file
access locked to the store) and adds a row limit and a time limit.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from starlette.concurrency import run_in_threadpool

from worker.api import deps, ids
from worker.api.errors import ApiError
from worker.api.models import Deletion, DocumentPage, DocumentSummary, SqlAnswer, SqlRequest
from worker.api.routes.documents import store_for
from worker.cli.sql import _jsonable
from worker.deletion import DocumentBusy, delete_document
from worker.outputs import manifest_key
from worker.sqlstore import QueryRefused, StoreError, open_sql_store
from worker.sqlstore.limits import QueryTimeout, run_limited

router = APIRouter(prefix="/v1", tags=["data"], dependencies=[Depends(deps.require_caller)])


def _sql(request: Request, body: SqlRequest) -> dict[str, Any]:
    settings = deps.settings(request)
    if body.all == bool(body.doc_id):
        raise ApiError(422, 'give either "doc_id" or "all": true')
    doc_ids = None if body.all else [ids.doc_id(str(body.doc_id))]
    limit = min(body.max_rows or settings.api.sql_max_rows, settings.api.sql_max_rows)
    storage = store_for(request, body.version)
    if doc_ids and not storage.exists(manifest_key(doc_ids[0])):
        raise ApiError(404, f"no document {doc_ids[0]} in the store")
    try:
        with open_sql_store(storage, doc_ids, all_documents=body.all, s3_reader=settings.store.sql_s3_reader) as store:
            result = run_limited(store, body.query, max_rows=limit, timeout=settings.api.sql_timeout)
            warnings = list(store.warnings)
    except QueryRefused as exc:
        raise ApiError(400, str(exc)) from None
    except QueryTimeout as exc:
        raise ApiError(408, str(exc)) from None
    except StoreError as exc:
        raise ApiError(400, str(exc)) from None
    return {
        "columns": result.columns,
        "rows": [[_jsonable(v) for v in row] for row in result.rows],
        "row_count": len(result.rows),
        "truncated": result.truncated,
        "row_limit": limit,
        "seconds": round(result.seconds, 4),
        "warnings": warnings,
    }


@router.post(
    "/sql",
    response_model=SqlAnswer,
    summary="one read-only SQL query over a document's tables (or every document's), with row and time limits",
    description='Each table is a view named by its table id (quote it: `SELECT * FROM "p0001-t01"`); `_tables` '
    "and `_columns` list them. With `all`, each document is a schema named by its doc id. Only queries are "
    "allowed (400 otherwise); at most TABLESIGHT_API_SQL_MAX_ROWS rows come back (`truncated` says more "
    "matched); a query past TABLESIGHT_API_SQL_TIMEOUT seconds is stopped (408).",
    responses={400: {"description": "not a query, or DuckDB refused it"}, 408: {"description": "over the time limit"}},
)
async def sql(request: Request, body: SqlRequest) -> dict[str, Any]:
    return await run_in_threadpool(_sql, request, body)


def _summary(request: Request, doc_id: str) -> dict[str, Any]:
    try:
        m = deps.storage(request).get_json(manifest_key(doc_id))
    except KeyError:  # deleted between the listing and now
        return {"doc_id": doc_id, "links": {}}
    tables = m.get("tables") or []
    return {
        "doc_id": doc_id,
        "source": m.get("source"),
        "status": m.get("status"),
        "page_count": m.get("page_count"),
        "tables": len(tables),
        "verified_tables": sum(1 for t in tables if t.get("verified")),
        "finished_at": m.get("finished_at"),
        "job_id": m.get("job_id"),
        "links": {"self": f"/v1/documents/{doc_id}", "review": f"/ui/documents/{doc_id}"},
    }


@router.get(
    "/documents",
    response_model=DocumentPage,
    summary="the stored documents, by doc id, a page at a time",
    description="`after` is the `next` of the previous page. Read from the store (not the job state), so "
    "it lists every document however long ago it was processed.",
)
async def list_documents(
    request: Request,
    limit: int = Query(50, ge=1, le=500, description="documents per page"),
    after: str | None = Query(None, description="the cursor: the last doc id of the previous page"),
) -> dict[str, Any]:
    names = await run_in_threadpool(deps.storage(request).documents)
    rest = [n for n in names if after is None or n > after]
    page = rest[:limit]
    docs = [DocumentSummary.model_validate(await run_in_threadpool(_summary, request, d)) for d in page]
    return {"documents": docs, "next": page[-1] if len(rest) > limit else None, "total": len(names)}


@router.delete(
    "/documents/{doc_id}",
    response_model=Deletion,
    summary="delete a document: its input, pages, tables, exports, reads and versions, from the store",
    description="Refused (409) while one of its jobs is queued or running. The document's job state goes "
    "too (the same file sent again runs again), and an entry is appended to the deletion log "
    "(`deletions/` in the store).",
    responses={409: {"description": "a job of the document is still running"}},
)
async def delete(request: Request, doc_id: str) -> dict[str, Any]:
    ids.doc_id(doc_id)
    client = deps.client(request)
    caller = getattr(request.state, "caller", None)
    try:
        return await run_in_threadpool(
            delete_document, client.storage, client.state, doc_id, by=caller.who if caller else "unknown"
        )
    except KeyError:
        raise ApiError(404, f"no document {doc_id} in the store") from None
    except DocumentBusy as exc:
        raise ApiError(409, str(exc)) from None
