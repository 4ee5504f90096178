"""`tablesight cancel JOB... [--remove]`: stop queued or running jobs (the API's DELETE /v1/jobs/{id})."""

from __future__ import annotations

import argparse
import json
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cancel",
        help="cancel queued or running jobs (queued pages never run; running ones stop after their page)",
        description="Cancel each job: its status becomes cancelled, queued page tasks are revoked and running "
        "ones stop at the next page boundary. Pages finished by then are kept (listed in the job's cancelled "
        "manifest) unless --remove.",
    )
    p.add_argument("jobs", nargs="+", metavar="JOB", help="job ids printed by `tablesight enqueue`")
    p.add_argument("--remove", action="store_true", help="remove the pages finished so far from storage")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from worker.queue.cancel import JobAlreadyEnded
    from worker.queue.client import JobClient, JobNotFound

    client = JobClient()
    failed = 0
    for job_id in args.jobs:
        try:
            st = client.cancel(job_id, remove=args.remove)
        except (JobNotFound, JobAlreadyEnded) as exc:
            print(f"error: {exc}", file=sys.stderr)
            failed += 1
            continue
        print(json.dumps({"job_id": job_id, "status": st["status"], "pages_done": st["pages_done"]}))
    return 1 if failed else 0
