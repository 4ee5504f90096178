"""Corrections over HTTP: a reviewer's edit of one table becomes its next version
(`POST .../edits`), every version is listed with who, when and what (`GET .../versions`),
and each one can be fetched whole (`GET .../versions/{n}`). worker.review does the work."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool

from worker.api import deps, ids
from worker.api.errors import ApiError
from worker.api.models import TableEditRequest, TableVersion, TableVersions
from worker.contract import TableRecord
from worker.outputs import table_key
from worker.review import Edit, EditRefused, VersionConflict, apply_edit, versions
from worker.review.versions import current_version, version_key

router = APIRouter(prefix="/v1/documents", tags=["review"], dependencies=[Depends(deps.require_caller)])
LOCK_SECONDS = 60


def _who(request: Request, reviewer: str | None) -> str:
    caller = getattr(request.state, "caller", None)
    credential = caller.who if caller else "unknown"
    name = " ".join("".join(ch for ch in (reviewer or "") if ch.isprintable()).split())[:80]
    return f"{name} ({credential})" if name else credential


def _edit(request: Request, doc_id: str, table_id: str, body: TableEditRequest) -> dict[str, Any]:
    client = deps.client(request)
    lock = f"{client.settings.queue.job_key_prefix}:edit:{doc_id}:{table_id}"
    token = uuid.uuid4().hex
    if not client.state.r.set(lock, token, nx=True, ex=LOCK_SECONDS):
        raise ApiError(409, f"{doc_id}/{table_id} is being edited right now: try again")
    try:
        edit = Edit(
            base_version=body.base_version,
            cells=[(c.row, c.col, c.text) for c in body.cells],
            header_rows=body.header_rows,
            verified=body.verified,
            note=body.note,
        )
        ctx = client.settings.context
        tolerance = ctx.continuation_column_tolerance if ctx.link_continued_tables else None
        return apply_edit(
            client.storage, doc_id, table_id, edit, by=_who(request, body.reviewer), link_tolerance=tolerance
        )
    except KeyError:
        raise ApiError(404, f"no table {doc_id}/{table_id} in the store") from None
    except VersionConflict as exc:
        raise ApiError(409, str(exc)) from None
    except EditRefused as exc:
        raise ApiError(422, str(exc)) from None
    finally:
        if client.state.r.get(lock) == token:
            client.state.r.delete(lock)


@router.post(
    "/{doc_id}/tables/{table_id}/edits",
    response_model=TableVersion,
    summary="correct a table: cell texts, header rows, or mark it checked; stored as its next version",
    description="`base_version` is the version the reviewer saw (`review.version` of the table's JSON, 0 before "
    "any edit): an edit on an older version is refused with 409. HTML, Markdown, CSV, Parquet (the SQL views), "
    "the description and chunks are written again from the corrected grid; the manifest lists the table as "
    "`verified` at its version; the original stays available with `?version=original`.",
    responses={
        409: {"description": "another edit came first"},
        422: {"description": "no such cell, or bad header rows"},
    },
)
async def edit_table(request: Request, doc_id: str, table_id: str, body: TableEditRequest) -> dict[str, Any]:
    ids.doc_id(doc_id)
    ids.table_id(table_id)
    return await run_in_threadpool(_edit, request, doc_id, table_id, body)


def _versions(request: Request, doc_id: str, table_id: str) -> dict[str, Any]:
    storage = deps.storage(request)
    try:
        record = storage.get_json(table_key(doc_id, table_id, ".json"))
    except KeyError:
        raise ApiError(404, f"no table {doc_id}/{table_id} in the store") from None
    listed = versions(storage, doc_id, table_id)
    if not listed:
        listed = [{"version": 0, "by": "extraction", "at": "", "changes": [], "verified": False}]
    return {
        "doc_id": doc_id,
        "table_id": table_id,
        "current": current_version(record),
        "review": record.get("review"),
        "versions": listed,
    }


@router.get(
    "/{doc_id}/tables/{table_id}/versions",
    response_model=TableVersions,
    summary="a table's versions: the extraction's (0) and each correction, with who, when and what",
)
async def table_versions(request: Request, doc_id: str, table_id: str) -> dict[str, Any]:
    ids.doc_id(doc_id)
    ids.table_id(table_id)
    return await run_in_threadpool(_versions, request, doc_id, table_id)


def _version_record(request: Request, doc_id: str, table_id: str, version: int) -> dict[str, Any]:
    storage = deps.storage(request)
    try:
        return storage.get_json(version_key(doc_id, table_id, version))["record"]
    except KeyError:
        pass
    try:  # never edited: version 0 is the record itself
        record = storage.get_json(table_key(doc_id, table_id, ".json"))
    except KeyError:
        raise ApiError(404, f"no table {doc_id}/{table_id} in the store") from None
    if version == current_version(record):
        return record
    raise ApiError(404, f"no version {version} of {doc_id}/{table_id}")


@router.get(
    "/{doc_id}/tables/{table_id}/versions/{version}",
    response_model=TableRecord,
    response_model_by_alias=True,
    summary="the whole table record as it was at one version",
)
async def table_version(request: Request, doc_id: str, table_id: str, version: int) -> dict[str, Any]:
    ids.doc_id(doc_id)
    ids.table_id(table_id)
    if not 0 <= version <= 9999:
        raise ApiError(404, f"no version {version}")
    return await run_in_threadpool(_version_record, request, doc_id, table_id, version)
