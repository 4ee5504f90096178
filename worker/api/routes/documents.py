"""`/v1/documents/{doc_id}`: the manifest, each table's files, and retrieval chunks, from storage."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from worker.api import deps, ids
from worker.api.caching import cached_response
from worker.api.errors import ApiError
from worker.outputs import manifest_key, table_key

router = APIRouter(prefix="/v1/documents", tags=["documents"], dependencies=[Depends(deps.require_caller)])


class TableFormat(StrEnum):
    html = "html"
    png = "png"
    json = "json"
    md = "md"


MEDIA_TYPES = {
    "html": "text/html; charset=utf-8",
    "png": "image/png",
    "json": "application/json",
    "md": "text/markdown; charset=utf-8",
}
# Stored HTML opened straight in a browser runs nothing and loads nothing.
HTML_POLICY = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox"}


def load_manifest(request: Request, doc_id: str) -> dict[str, Any]:
    try:
        return deps.storage(request).get_json(manifest_key(doc_id))
    except KeyError:
        raise ApiError(404, f"no document {doc_id} in the store (not processed, or still running)") from None


@router.get("/{doc_id}", summary="a document's manifest (its tables, pages, errors)")
async def get_document(request: Request, doc_id: str) -> dict[str, Any]:
    ids.doc_id(doc_id)
    return await run_in_threadpool(load_manifest, request, doc_id)


@router.get(
    "/{doc_id}/tables/{table_id}.{fmt}",
    summary="one table as HTML, crop image (PNG), JSON record or Markdown",
    description="ETag'd; `Cache-Control: no-cache` (a re-extraction rewrites the key), or `immutable` when "
    "the URL pins the bytes with `?v=<etag>`.",
    response_class=Response,
)
async def get_table_file(request: Request, doc_id: str, table_id: str, fmt: TableFormat) -> Response:
    ids.doc_id(doc_id)
    ids.table_id(table_id)
    key = table_key(doc_id, table_id, f".{fmt.value}")
    try:
        data = await run_in_threadpool(deps.storage(request).get_bytes, key)
    except KeyError:
        raise ApiError(404, f"no {fmt.value} for table {doc_id}/{table_id}") from None
    return cached_response(request, data, MEDIA_TYPES[fmt.value], HTML_POLICY if fmt.value == "html" else None)


@router.get("/{doc_id}/chunks", summary="retrieval chunks of every table (never splitting a row)")
async def get_chunks(
    request: Request,
    doc_id: str,
    max_tokens: int | None = Query(None, ge=16, le=1_000_000, description="default: TABLESIGHT_CHUNK_MAX_TOKENS"),
) -> Response:
    from worker.cli.chunks import document_chunks
    from worker.core.chunks import approx_tokens

    ids.doc_id(doc_id)
    budget = max_tokens or deps.settings(request).chunks.max_tokens
    try:
        chunks = await run_in_threadpool(document_chunks, deps.storage(request), doc_id, budget, approx_tokens)
    except KeyError:
        raise ApiError(404, f"no document {doc_id} in the store (not processed, or still running)") from None
    body = json.dumps({"doc_id": doc_id, "max_tokens": budget, "chunks": chunks}, ensure_ascii=False).encode()
    return cached_response(request, body, "application/json")
