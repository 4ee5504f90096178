"""`/v1/jobs`: upload documents (streamed, sniffed, validated, then `JobClient.enqueue`), follow
their progress, fetch their manifests. The same file with the same options is one job."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from worker.api import deps, ids
from worker.api.errors import ApiError
from worker.api.schemas import AS_BUILT, DocumentManifest, JobsCreated, JobView
from worker.api.uploads import Upload, UploadedFile, read_upload, upload_folder
from worker.errors import InputError
from worker.inputs import open_document, sniff_kind
from worker.outputs import doc_id_for
from worker.queue.client import JobClient, JobNotFinished, JobNotFound, check_callback, normalise_options
from worker.queue.state import TERMINAL

router = APIRouter(prefix="/v1", tags=["jobs"], dependencies=[Depends(deps.require_caller)])

MAX_WAIT = 300.0  # seconds `?wait=` may hold a request open
FIELDS = ("pages", "dpi", "tables", "force", "callback_url")

_UPLOAD_BODY = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["file"],
                "properties": {
                    "file": {
                        "type": "array",
                        "items": {"type": "string", "format": "binary"},
                        "description": "one or more PDF, PNG, JPEG or TIFF files (recognised by their bytes)",
                    },
                    "pages": {"type": "string", "description": "page ranges, e.g. 1-3,5,9- (default: all)"},
                    "dpi": {"type": "integer", "description": "render resolution for PDFs (default: TABLESIGHT_DPI)"},
                    "tables": {
                        "type": "string",
                        "enum": ["detect", "page"],
                        "description": "detect: find tables; page: each page is one table crop",
                    },
                    "force": {"type": "boolean", "description": "run again even if the same document was done"},
                    "callback_url": {
                        "type": "string",
                        "format": "uri",
                        "description": "gets a signed POST when each job ends (host must be in "
                        "TABLESIGHT_API_CALLBACK_HOSTS; see docs/service.md)",
                    },
                },
            }
        }
    },
}


def links(job_id: str, doc_id: str | None) -> dict[str, str]:
    out = {"self": f"/v1/jobs/{job_id}", "result": f"/v1/jobs/{job_id}/result"}
    if doc_id:
        out["document"] = f"/v1/documents/{doc_id}"
        out["review"] = f"/ui/documents/{doc_id}"
    return out


def public_status(client: JobClient, job_id: str) -> dict[str, Any]:
    """The client's status, with API links instead of a storage location."""
    st = client.status(job_id)
    st.pop("manifest", None)
    st["links"] = links(job_id, st.get("doc_id"))
    return st


def _options(fields: dict[str, str], client: JobClient) -> tuple[dict[str, Any], bool, str | None]:
    unknown = sorted(set(fields) - set(FIELDS))
    if unknown:
        raise ApiError(422, f"unknown form field(s) {unknown}; known: file, {', '.join(FIELDS)}")
    force_text = fields.get("force", "").lower()
    if force_text not in ("", "0", "1", "true", "false", "yes", "no", "on", "off"):
        raise ApiError(422, f"force must be true or false, not {force_text[:20]!r}")
    options: dict[str, Any] = {k: fields[k] for k in ("pages", "tables") if fields.get(k)}
    if fields.get("dpi"):
        if not fields["dpi"].isdigit():
            raise ApiError(422, f"dpi must be an integer, not {fields['dpi'][:20]!r}")
        options["dpi"] = int(fields["dpi"])
    callback = fields.get("callback_url") or None
    try:
        normalise_options(options, client.settings)
        if callback:
            check_callback(callback, client.settings)
    except ValueError as exc:
        raise ApiError(422, str(exc)) from None
    return options, force_text in ("1", "true", "yes", "on"), callback


def _check_file(entry: UploadedFile, client: JobClient) -> None:
    """Refuse what `extract` would refuse, before anything is queued: kind by bytes, then readability."""
    if entry.size == 0:
        raise ApiError(422, f"{entry.filename}: empty file")
    if sniff_kind(entry.head) is None:
        raise ApiError(415, f"{entry.filename}: not a PDF or image (starts with {entry.head[:12]!r})")
    try:
        open_document(entry.path, settings=client.settings)
    except InputError as exc:
        raise ApiError(422, f"{entry.filename}: {exc.reason}") from None


def _enqueue_all(
    upload: Upload, options: dict[str, Any], force: bool, callback: str | None, client: JobClient
) -> list[dict[str, Any]]:
    for entry in upload.files:
        _check_file(entry, client)
    out = []
    for entry in upload.files:
        job_id = client.enqueue(
            entry.path, options, name=entry.filename, force=force, callback_url=callback, sha256=entry.sha256
        )
        out.append({"job_id": job_id, "doc_id": doc_id_for(entry.sha256), "source": entry.filename})
    return out


@router.post(
    "/jobs",
    status_code=202,
    summary="upload one or more documents; one job id each, at once",
    description="Multipart field `file` (repeat it for more files) and the options of `tablesight enqueue`. "
    "The same file with the same options gives the same job (unless force). `?wait=S` holds the request up "
    f"to S seconds (at most {MAX_WAIT:g}) for the jobs to end: 200 when all ended, else 202 with their progress.",
    openapi_extra={"requestBody": _UPLOAD_BODY},
    response_model=JobsCreated,
    responses={200: {"model": JobsCreated, "description": "every job ended within `wait`"}},
    **AS_BUILT,
)
async def create_jobs(
    request: Request,
    wait: float = Query(0, ge=0, le=MAX_WAIT, description="seconds to wait for the jobs to end"),
) -> JSONResponse:
    client = deps.client(request)
    with upload_folder(client.settings.queue.work_dir) as folder:
        upload = await read_upload(request, Path(folder))
        if not upload.files:
            raise ApiError(422, "no file: send one or more files as multipart field 'file' (curl -F file=@doc.pdf)")
        options, force, callback = _options(upload.fields, client)
        jobs = await run_in_threadpool(_enqueue_all, upload, options, force, callback, client)
    request.state.job_ids = [j["job_id"] for j in jobs]
    deadline = time.monotonic() + wait
    while True:
        statuses = [await run_in_threadpool(public_status, client, j["job_id"]) for j in jobs]
        done = all(st["status"] in TERMINAL for st in statuses)
        if done or time.monotonic() >= deadline:
            break
        await asyncio.sleep(min(0.25, max(0.0, deadline - time.monotonic())))
    for job, st in zip(jobs, statuses):
        job.update(status=st["status"], progress=st, links=st["links"])
    headers = {"Location": jobs[0]["links"]["self"]} if len(jobs) == 1 else {}
    return JSONResponse({"jobs": jobs}, status_code=200 if done else 202, headers=headers)


@router.get("/jobs/{job_id}", summary="a job's status, with progress per page", response_model=JobView, **AS_BUILT)
async def get_job(request: Request, job_id: str) -> dict[str, Any]:
    ids.job_id(job_id)
    request.state.job_ids = [job_id]
    try:
        return await run_in_threadpool(public_status, deps.client(request), job_id)
    except JobNotFound as exc:
        raise ApiError(404, str(exc)) from None


@router.get(
    "/jobs/{job_id}/result",
    summary="a finished job's manifest (409 while it runs)",
    response_model=DocumentManifest,
    **AS_BUILT,
)
async def get_result(request: Request, job_id: str) -> dict[str, Any]:
    ids.job_id(job_id)
    request.state.job_ids = [job_id]
    try:
        return await run_in_threadpool(deps.client(request).result, job_id)
    except JobNotFound as exc:
        raise ApiError(404, str(exc)) from None
    except JobNotFinished as exc:
        raise ApiError(409, str(exc), {"Retry-After": "2"}) from None
