"""`/v1/documents/{doc_id}`: the manifest, each table's files, and retrieval chunks, from storage."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from worker.api import deps, ids
from worker.api.caching import cached_response
from worker.api.errors import ApiError
from worker.api.models import Chunks, Descriptions, Version
from worker.api.retrieval import chunks_of, descriptions_of
from worker.api.schemas import AS_BUILT, TABLE_FILE_CONTENT, DocumentManifest
from worker.contract.reads import read_manifest
from worker.outputs import manifest_key, table_key
from worker.review import OriginalView
from worker.storage import Storage

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


VersionQuery = Annotated[Version, Query(description="original: as extracted, before a reviewer's corrections")]


def store_for(request: Request, version: Version) -> Storage:
    """The store, or its original view (tables as extracted, before corrections)."""
    storage = deps.storage(request)
    return OriginalView(storage) if version == Version.original else storage


def load_manifest(request: Request, doc_id: str) -> dict[str, Any]:
    try:
        return read_manifest(deps.storage(request), manifest_key(doc_id)).dump()
    except KeyError:
        raise ApiError(404, f"no document {doc_id} in the store (not processed, or still running)") from None


@router.get(
    "/{doc_id}",
    summary="a document's manifest (its tables, pages, errors)",
    response_model=DocumentManifest,
    **AS_BUILT,
)
async def get_document(request: Request, doc_id: str) -> dict[str, Any]:
    ids.doc_id(doc_id)
    return await run_in_threadpool(load_manifest, request, doc_id)


@router.get(
    "/{doc_id}/tables/{table_id}.{fmt}",
    summary="one table as HTML, crop image (PNG), JSON record or Markdown",
    description="ETag'd; `Cache-Control: no-cache` (a re-extraction rewrites the key), or `immutable` when "
    "the URL pins the bytes with `?v=<etag>`.",
    response_class=Response,
    responses=TABLE_FILE_CONTENT,
)
async def get_table_file(
    request: Request,
    doc_id: str,
    table_id: str,
    fmt: TableFormat,
    version: VersionQuery = Version.current,
) -> Response:
    ids.doc_id(doc_id)
    ids.table_id(table_id)
    key = table_key(doc_id, table_id, f".{fmt.value}")
    try:
        data = await run_in_threadpool(store_for(request, version).get_bytes, key)
    except KeyError:
        raise ApiError(404, f"no {fmt.value} for table {doc_id}/{table_id}") from None
    return cached_response(request, data, MEDIA_TYPES[fmt.value], HTML_POLICY if fmt.value == "html" else None)


@router.get(
    "/{doc_id}/chunks",
    response_model=Chunks,
    summary="retrieval chunks of every table (never splitting a row)",
    description="ETag'd. A table with more data rows than TABLESIGHT_CHUNK_TABLE_MAX_ROWS gives one description "
    "chunk naming its SQL view instead of row chunks.",
)
async def get_chunks(
    request: Request,
    doc_id: str,
    max_tokens: int | None = Query(None, ge=16, le=1_000_000, description="default: TABLESIGHT_CHUNK_MAX_TOKENS"),
    version: VersionQuery = Version.current,
) -> Response:
    ids.doc_id(doc_id)
    settings = deps.settings(request)
    budget = max_tokens or settings.chunks.max_tokens
    try:
        chunks = await run_in_threadpool(
            chunks_of, store_for(request, version), doc_id, budget, settings.chunks.table_max_rows
        )
    except KeyError:
        raise ApiError(404, f"no document {doc_id} in the store (not processed, or still running)") from None
    out = {"doc_id": doc_id, "max_tokens": budget, "version": version.value, "chunks": chunks}
    body = json.dumps(out, ensure_ascii=False).encode()
    return cached_response(request, body, "application/json")


@router.get(
    "/{doc_id}/descriptions",
    response_model=Descriptions,
    summary="each table's retrieval description (what its description chunk embeds) and its LLM summary",
)
async def get_descriptions(
    request: Request,
    doc_id: str,
    version: VersionQuery = Version.current,
) -> dict[str, Any]:
    ids.doc_id(doc_id)
    try:
        tables = await run_in_threadpool(descriptions_of, store_for(request, version), doc_id)
    except KeyError:
        raise ApiError(404, f"no document {doc_id} in the store (not processed, or still running)") from None
    return {"doc_id": doc_id, "version": version.value, "tables": tables}
