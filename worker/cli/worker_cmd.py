"""`tablesight worker [--queues Q,...] [--concurrency N]`: a Celery worker (prefork, task events on).

The same as `celery -A worker.queue.app worker -P prefork -E --without-mingle --without-gossip
-Q docs,pages,vision -c N`. By default one worker consumes every queue, so on one machine it does
everything. A GPU node runs `--queues pages,vision --concurrency <GPUs>` (one model copy per
process); a CPU node takes `--queues docs`. Models load in each pool process on its first page
task (or when it starts, with TABLESIGHT_PRELOAD_MODELS), never in this one.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from worker.settings import Settings


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "worker",
        help="start a Celery worker",
        description="Start a Celery worker (prefork pool, task events on) on the queues given.",
    )
    p.add_argument("--queues", "-Q", help="comma-separated queues (default: TABLESIGHT_WORKER_QUEUES)")
    p.add_argument(
        "--concurrency",
        "-c",
        type=int,
        default=1,
        help="worker processes (default 1: one model copy per process, one per GPU)",
    )
    p.add_argument("--loglevel", "-l", default=None, help="DEBUG, INFO, WARNING, ERROR (default: TABLESIGHT_LOG_LEVEL)")
    p.add_argument("--hostname", "-n", default=None, help="node name, e.g. gpu1@%%h (default: celery@HOST)")
    p.set_defaults(func=run)


def worker_argv(args: argparse.Namespace, settings: Settings) -> list[str]:
    queues = args.queues or settings.queue.worker_queues
    # no mingle/gossip: we revoke nothing and elect nothing, and they slow every start in a big pool
    argv = [
        "worker",
        "--pool",
        "prefork",
        "--task-events",
        "--without-mingle",
        "--without-gossip",
        "--queues",
        queues,
        "--concurrency",
        str(max(1, args.concurrency)),
        "--loglevel",
        args.loglevel or settings.log_level,
    ]
    if args.hostname:
        argv += ["--hostname", args.hostname]
    return argv


def run(args: argparse.Namespace) -> int:
    from worker.queue.app import app
    from worker.settings import get_settings

    if args.concurrency < 1:
        import sys

        print("error: --concurrency must be at least 1", file=sys.stderr)
        return 2
    app.worker_main(argv=worker_argv(args, get_settings()))
    return 0
