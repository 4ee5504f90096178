"""`tablesight worker-health [--node NAME] [--timeout S]`: does this node's Celery worker answer?

The images' HEALTHCHECK runs it inside a worker's container. It sends Celery's `ping`
control message through the broker to one worker node and exits 0 when that node answers
`pong` within the timeout, 1 when it does not or the broker cannot be reached. The worker's
main process answers even while its pool processes are busy with long pages, so a busy
worker stays healthy; a hung, crashed or disconnected one does not.
"""

from __future__ import annotations

import argparse
import signal
import sys

DEFAULT_NODE = "celery@%h"  # the name `tablesight worker` gives its node unless --hostname is set


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "worker-health",
        help="ping a Celery worker through the broker (container health check)",
        description="Exit 0 if the worker node answers a Celery ping within the timeout, 1 if not.",
    )
    p.add_argument(
        "--node",
        default=DEFAULT_NODE,
        help="node name to ping; %%h is this host's name (default: celery@%%h, a `tablesight worker` "
        "started without --hostname on this host)",
    )
    p.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for the answer (default 5)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from celery.utils.nodenames import host_format

    from worker.queue.app import make_app

    if args.timeout <= 0:
        print("error: --timeout must be positive", file=sys.stderr)
        return 2
    node = host_format(args.node)
    # The app retries a lost broker forever (right for workers); a health check must end.
    signal.signal(signal.SIGALRM, _give_up)
    signal.alarm(int(args.timeout * 2) + 10)
    app = make_app()  # a client app: the task modules (and the models) are not imported
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1)
            replies = app.control.ping(destination=[node], timeout=args.timeout, connection=conn)
    except Exception as exc:  # noqa: BLE001 - any broker failure means "not healthy"
        print(f"unhealthy: cannot reach the broker: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        signal.alarm(0)
    if any(reply.get(node, {}).get("ok") == "pong" for reply in replies):
        print(f"healthy: {node} answered")
        return 0
    print(f"unhealthy: {node} did not answer within {args.timeout:g} s", file=sys.stderr)
    return 1


def _give_up(signum: int, frame: object) -> None:
    raise TimeoutError("no answer from the broker")
