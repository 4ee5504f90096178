"""Probes: `/healthz` (the process answers) and `/readyz` (it can take and finish work now)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from worker.api import deps
from worker.api.readiness import readiness

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="liveness: the server process answers")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", summary="readiness: broker, job state, store and docs/pages workers answer")
async def readyz(request: Request) -> JSONResponse:
    ready, body = await readiness(deps.client(request))
    return JSONResponse(body, status_code=200 if ready else 503, headers={"Cache-Control": "no-store"})
