"""Probes: `/healthz` (the process answers) and `/readyz` (it can take and finish work now)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from worker.api import deps
from worker.api.readiness import readiness
from worker.api.schemas import Health, Readiness

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="liveness: the server process answers", response_model=Health)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get(
    "/readyz",
    summary="readiness: broker, job state, store and docs/pages workers answer",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "not ready: `checks` says what is wrong"}},
)
async def readyz(request: Request) -> JSONResponse:
    ready, body = await readiness(deps.client(request))
    return JSONResponse(body, status_code=200 if ready else 503, headers={"Cache-Control": "no-store"})
