"""The review page: recent documents, and each table's crop beside the HTML built from it, with
its flags, confidence and text source, and a button for the vision read.

Server-rendered (Jinja2, autoescaped); the only script is static/review.js. Every stored HTML
fragment goes through the vision read's allow-list again before it is put in the page, and
the pages are served with a strict Content-Security-Policy. With tokens configured a login form
sets an HttpOnly, SameSite=Strict session cookie derived from the token.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool

from worker.api import deps, ids
from worker.api.auth import COOKIE, Caller
from worker.api.caching import etag_of
from worker.api.errors import ApiError
from worker.api.recent import recent_documents
from worker.api.routes.reads import clean_html, read_view
from worker.contract.reads import read_manifest
from worker.outputs import manifest_key
from worker.vision.read import TableRef, stored_read

HERE = Path(__file__).resolve().parent.parent
templates = Jinja2Templates(directory=str(HERE / "templates"))
router = APIRouter(prefix="/ui", include_in_schema=False)

SESSION_SECONDS = 12 * 3600
_CELL = re.compile(r"<t[dh][\s>]")


def _context(request: Request, caller: Caller | None, **extra: Any) -> dict[str, Any]:
    auth = deps.auth(request)
    csrf = auth.csrf_for(caller.session) if caller else ""
    return {
        "csrf": csrf,
        "logged_in": bool(caller and caller.via == "cookie"),
        "base_url": str(request.base_url),
        **extra,
    }


def _login_redirect(request: Request) -> RedirectResponse:
    return RedirectResponse(f"/ui/login?next={quote(request.url.path)}", status_code=303)


def _safe_next(target: str) -> str:
    """Only back into the review page: never an open redirect to another site."""
    return target if target.startswith("/ui/") and "//" not in target and "\\" not in target else "/ui/"


@router.get("")
async def ui_root() -> RedirectResponse:
    return RedirectResponse("/ui/", status_code=308)


@router.get("/login", response_class=HTMLResponse)
async def login_form(request: Request, next: str = "/ui/") -> Response:
    return templates.TemplateResponse(request, "login.html", _context(request, None, next=_safe_next(next), error=None))


@router.post("/login", response_class=HTMLResponse)
async def login(request: Request) -> Response:
    auth = deps.auth(request)
    auth.check_origin(request)
    form = await request.form()
    token = str(form.get("token") or "").strip()
    target = _safe_next(str(form.get("next") or "/ui/"))
    if not auth.enabled:
        return RedirectResponse(target, status_code=303)
    if not token or not auth.valid_token(token):
        context = _context(request, None, next=target, error="That token is not valid.")
        return templates.TemplateResponse(request, "login.html", context, status_code=401)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        COOKIE,
        auth.session_for(token),
        max_age=SESSION_SECONDS,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    return response


@router.post("/logout")
async def logout(request: Request) -> RedirectResponse:
    deps.auth(request).check_origin(request)
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


@router.get("/", response_class=HTMLResponse)
async def index(request: Request) -> Response:
    caller = deps.auth(request).caller(request)
    if caller is None:
        return _login_redirect(request)
    documents = await run_in_threadpool(recent_documents, deps.client(request))
    return templates.TemplateResponse(request, "index.html", _context(request, caller, documents=documents))


def _read_summary(read: dict[str, Any]) -> str:
    a = read.get("agreement") or {}
    if read.get("status") != "ok":
        return "failed"
    parts = []
    if isinstance(a.get("teds"), (int, float)):
        parts.append(f"agreement TEDS {a['teds']:.3f}")
    if isinstance(a.get("teds_struct"), (int, float)):
        parts.append(f"structure {a['teds_struct']:.3f}")
    if isinstance(a.get("cell_match"), (int, float)):
        parts.append(f"cells {a['cell_match']:.3f}")
    if a.get("same_shape") is not None:
        parts.append("same shape" if a["same_shape"] else "different shape")
    return " · ".join(parts)


def _document(request: Request, doc_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    client = deps.client(request)
    storage = client.storage
    try:
        manifest = read_manifest(storage, manifest_key(doc_id)).dump()
    except KeyError:
        raise ApiError(404, f"no document {doc_id} in the store (not processed, or still running)") from None
    tables = []
    for entry in manifest.get("tables", []):
        tid = str(entry.get("table_id", ""))
        if not ids.TABLE_ID.match(tid):
            continue
        ref = TableRef(doc_id, tid)
        table = dict(entry)
        try:
            table["html"] = clean_html(storage.get_bytes(ref.key(".html")).decode("utf-8"))
        except KeyError:
            table["html"] = None
        table["empty"] = bool(table["html"]) and not _CELL.search(table["html"])
        try:
            version = f"?v={etag_of(storage.get_bytes(ref.key('.png')))}"
        except KeyError:
            version = ""
        table["png_url"] = f"/v1/documents/{doc_id}/tables/{tid}.png{version}"
        record = stored_read(storage, ref)
        table["read"] = read_view(client, ref, record) if record else None
        table["read_summary"] = _read_summary(table["read"]) if table["read"] else ""
        tables.append(table)
    return manifest, tables


@router.get("/documents/{doc_id}", response_class=HTMLResponse)
async def document(request: Request, doc_id: str) -> Response:
    caller = deps.auth(request).caller(request)
    if caller is None:
        return _login_redirect(request)
    ids.doc_id(doc_id)
    manifest, tables = await run_in_threadpool(_document, request, doc_id)
    context = _context(request, caller, doc_id=doc_id, manifest=manifest, tables=tables)
    return templates.TemplateResponse(request, "document.html", context)
