"""`tablesight status JOB...`: a job's state and per-page progress, as JSON."""

from __future__ import annotations

import argparse
import json
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "status",
        help="progress of queued jobs (JSON)",
        description="Print each job's status, pages done and per-page progress as JSON.",
    )
    p.add_argument("jobs", nargs="+", metavar="JOB", help="job ids printed by `tablesight enqueue`")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from worker.queue.client import JobClient, JobNotFound

    client = JobClient()
    missing = 0
    for job_id in args.jobs:
        try:
            print(json.dumps(client.status(job_id), indent=1, ensure_ascii=False))
        except JobNotFound as exc:
            print(f"error: {exc}", file=sys.stderr)
            missing += 1
    return 1 if missing else 0
