"""The ASGI app: routers per resource over one `JobClient`, auth, body limit, CORS, request logs.

uvicorn --factory worker.api.app:create_app      # or `tablesight serve`
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import redis
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from kombu.exceptions import OperationalError
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from worker import __version__
from worker.api.auth import CSRF_HEADER, Auth, split_csv
from worker.api.docs_offline import install_docs
from worker.api.errors import error_response, install_error_handlers
from worker.api.routes import data, documents, health, job_control, jobs, reads, review, ui
from worker.api.uploads import BodyLimit
from worker.contract.reads import ContractError
from worker.queue.client import JobClient
from worker.settings import Settings, get_settings
from worker.storage import StorageError

access_log = logging.getLogger("worker.api.access")
_JOB_IN_PATH = re.compile(r"^/v1/jobs/([0-9a-f]{32})(?:/|$)")
_DOC_IN_PATH = re.compile(r"^/(?:v1|ui)/documents/([0-9a-f]{16})(?:/|$)")
# The review page runs only its own script and loads only its own images and styles.
UI_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


class RequestLog:
    """One log line per request, with the job id(s) it concerns, and security headers on the way out."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        request_id = uuid.uuid4().hex[:12]
        state = scope.setdefault("state", {})
        path: str = scope["path"]
        status = 500

        async def send_with_headers(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode()))
                headers.append((b"referrer-policy", b"same-origin"))  # "no-referrer" makes Origin "null"
                if path.startswith("/ui/"):
                    headers.append((b"content-security-policy", UI_POLICY.encode()))
                    headers.append((b"x-frame-options", b"DENY"))
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            jobs = state.get("job_ids") or ([m.group(1)] if (m := _JOB_IN_PATH.match(path)) else [])
            doc = m.group(1) if (m := _DOC_IN_PATH.match(path)) else None
            access_log.info(
                "%s %s %s %.0fms request=%s%s%s",
                scope["method"],
                path,
                status,
                (time.perf_counter() - t0) * 1000,
                request_id,
                f" job={','.join(jobs)}" if jobs else "",
                f" doc={doc}" if doc else "",
            )


def create_app(settings: Settings | None = None, client: JobClient | None = None) -> FastAPI:
    """The app over `client` (default: one built from `settings`, default: the environment)."""
    settings = settings or (client.settings if client else get_settings())
    job_client = client or JobClient(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        if client is None:
            job_client.close()

    app = FastAPI(
        title="tablesight",
        version=__version__,
        summary="Tables out of scanned PDFs: submit documents, follow jobs, fetch tables, read hard ones.",
        description="Send `Authorization: Bearer <token>` (one of TABLESIGHT_API_TOKENS) with every /v1 call. "
        'Errors are JSON: `{"error": "..."}`.',
        docs_url=None,  # worker.api.docs_offline serves /docs from local assets
        redoc_url=None,
        lifespan=lifespan,
        # response schemas as the contract validates them (docs/schema/), one per model
        separate_input_output_schemas=False,
    )
    job_client.app, job_client.storage  # noqa: B018 - built now, not lazily by two request threads at once
    origins = split_csv(settings.api.cors_origins)
    app.state.client = job_client
    app.state.auth = Auth(settings.api.tokens, origins)
    install_error_handlers(app)

    @app.exception_handler(redis.exceptions.RedisError)
    async def _redis_down(request: Request, exc: redis.exceptions.RedisError) -> JSONResponse:
        return error_response(503, f"job state unavailable (Redis): {type(exc).__name__}")

    @app.exception_handler(OperationalError)
    async def _broker_down(request: Request, exc: OperationalError) -> JSONResponse:
        return error_response(503, f"broker unavailable: {' '.join(str(exc).split())[:200]}")

    @app.exception_handler(ContractError)
    async def _bad_record(request: Request, exc: ContractError) -> JSONResponse:
        return error_response(500, f"stored record unreadable: {exc}")

    @app.exception_handler(StorageError)
    async def _store_down(request: Request, exc: StorageError) -> JSONResponse:
        return error_response(503 if exc.transient else 502, f"storage: {exc}")

    for module in (jobs, job_control, data, documents, review, reads, health, ui):
        app.include_router(module.router)
    install_docs(app, "tablesight")
    app.mount("/ui/static", StaticFiles(directory=str(Path(__file__).parent / "static")), name="static")

    app.add_middleware(BodyLimit, limit=settings.api.max_upload_bytes)
    if origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type", CSRF_HEADER],
            expose_headers=["ETag", "Location", "X-Request-ID"],
        )
    app.add_middleware(RequestLog)
    return app
