"""Small helpers shared by the tests (imported as `helpers`: conftest puts tests/ on the path)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

from worker.settings import Settings


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(check: Callable[[], Any], timeout: float, interval: float = 0.05, what: str = "condition") -> Any:
    """Poll `check` until it returns something truthy (returned), or fail after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def isolated_settings(**overrides: Any) -> Settings:
    """Settings from the defaults and `overrides` only: no `.env` file is read."""
    return Settings(_env_file=None, **overrides)  # type: ignore[call-arg]
