"""`tablesight result JOB`: the manifest of a finished job, as JSON."""

from __future__ import annotations

import argparse
import json
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "result",
        help="manifest of a finished job (JSON)",
        description="Print the job's manifest. Exit 0 when the job completed, 1 when it failed, "
        "is partial, still running or unknown.",
    )
    p.add_argument("job", metavar="JOB", help="a job id printed by `tablesight enqueue`")
    p.add_argument("--wait", action="store_true", help="wait for the job to finish first")
    p.add_argument("--timeout", type=float, default=None, help="with --wait: give up after this many seconds")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from worker.errors import TablesightError
    from worker.queue.client import JobClient
    from worker.queue.state import TERMINAL

    client = JobClient()
    try:
        if args.wait and client.status(args.job)["status"] not in TERMINAL:
            client.require_workers([client.settings.queue.docs, client.settings.queue.pages])
        manifest = client.wait(args.job, args.timeout) if args.wait else client.result(args.job)
    except TablesightError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(manifest, indent=1, ensure_ascii=False))
    if manifest["status"] != "complete":
        reasons = "; ".join(e["reason"] for e in manifest["errors"][:3])
        print(f"error: job {args.job} {manifest['status']}: {reasons}", file=sys.stderr)
        return 1
    return 0
