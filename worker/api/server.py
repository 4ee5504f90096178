"""Start the API under uvicorn, refusing an exposed address without tokens."""

from __future__ import annotations

import ipaddress
import socket

from worker.api.auth import split_csv
from worker.settings import Settings


def is_loopback(host: str) -> bool:
    """True when every address `host` names is a loopback one (0.0.0.0 and :: are not)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos)


def bind_problem(host: str, settings: Settings) -> str | None:
    """Why the server must not start on `host`, or None."""
    if split_csv(settings.api.tokens) or is_loopback(host):
        return None
    return (
        f"refusing to listen on {host} without authentication: set TABLESIGHT_API_TOKENS "
        "(comma-separated bearer tokens) or bind a loopback address (127.0.0.1)"
    )


def serve(settings: Settings, host: str, port: int) -> None:
    import uvicorn

    from worker.api.app import create_app

    uvicorn.run(
        create_app(settings),
        host=host,
        port=port,
        log_config=None,  # the CLI configured logging; request lines come from worker.api.access
        access_log=False,
        server_header=False,
        proxy_headers=False,
    )
