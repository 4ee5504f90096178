"""What routes share: the job client, the settings and the auth of the running app."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from worker.api.auth import Auth
from worker.queue.client import JobClient
from worker.settings import Settings
from worker.storage import Storage


def client(request: Request) -> JobClient:
    return request.app.state.client


def settings(request: Request) -> Settings:
    return request.app.state.client.settings


def storage(request: Request) -> Storage:
    return request.app.state.client.storage


def auth(request: Request) -> Auth:
    return request.app.state.auth


# Declared so the OpenAPI docs offer "Authorize" with a bearer token; `Auth.require` does the checking.
_bearer = HTTPBearer(auto_error=False, description="one of TABLESIGHT_API_TOKENS")


async def require_caller(request: Request, _: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> None:
    """Dependency of every /v1 route (FastAPI resolves it before the body is read)."""
    auth(request).require(request)
