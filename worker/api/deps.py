"""What routes share: the job client, the settings and the auth of the running app."""

from __future__ import annotations

from fastapi import Request

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


async def require_caller(request: Request) -> None:
    """Dependency of every /v1 route (FastAPI resolves it before the body is read)."""
    auth(request).require(request)
