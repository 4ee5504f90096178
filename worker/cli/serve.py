"""`tablesight serve [--host H] [--port P]`: the HTTP API and the review page (worker.api).

Binds TABLESIGHT_API_HOST (127.0.0.1) and TABLESIGHT_API_PORT (8080). Without
TABLESIGHT_API_TOKENS it serves loopback only and exits 2 when asked to bind anything else.
"""

from __future__ import annotations

import argparse
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="HTTP API and review page (upload, poll, tables, vision reads; /docs)",
        description="Serve the HTTP API (/v1, OpenAPI at /docs) and the review page (/ui/) over the job "
        "queue and the store. Needs Redis and at least one `tablesight worker`.",
    )
    p.add_argument("--host", help="address to bind (default: TABLESIGHT_API_HOST, 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default: TABLESIGHT_API_PORT, 8080)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from worker.api.server import bind_problem, serve
    from worker.settings import get_settings

    settings = get_settings()
    host = args.host or settings.api.host
    port = args.port if args.port is not None else settings.api.port
    if not 0 < port < 65536:
        print(f"error: --port must be 1-65535, not {port}", file=sys.stderr)
        return 2
    problem = bind_problem(host, settings)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    serve(settings, host, port)
    return 0
