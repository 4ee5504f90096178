"""`tablesight enqueue FILE... [--wait]`: submit jobs to the broker; one job id per file on stdout."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tqdm import tqdm


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "enqueue",
        help="submit documents to the workers (prints one job id per file)",
        description="Upload each file to storage and queue its job. The same file with the same "
        "options gives the same job id (its result is reused) unless --force.",
    )
    p.add_argument("files", nargs="+", type=Path, metavar="FILE", help="PDF, PNG, JPEG or TIFF files")
    p.add_argument("--wait", action="store_true", help="wait for the jobs to finish, with a progress bar")
    p.add_argument("--timeout", type=float, default=None, help="with --wait: give up after this many seconds")
    p.add_argument("--force", action="store_true", help="run again even if the same document was done before")
    p.add_argument("--pages", help="page ranges, e.g. 1-3,5,9- (default: all)")
    p.add_argument("--dpi", type=int, help="render resolution for PDFs (default: TABLESIGHT_DPI)")
    p.add_argument(
        "--tables",
        choices=("detect", "page"),
        default="detect",
        help="detect: find tables on each page; page: each page/image is one table crop",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    from worker.engines import engine_names

    p.add_argument(
        "--callback",
        metavar="URL",
        help="POST a signed notice here when each job ends (host in TABLESIGHT_API_CALLBACK_HOSTS)",
    )
    p.add_argument(
        "--engine",
        choices=engine_names(),
        help="models the workers run for this job (default: TABLESIGHT_ENGINE, where auto means "
        "the fleet's default engine); recorded explicitly in the job's options",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from worker.errors import TablesightError
    from worker.queue.client import JobClient, JobTimeout, check_callback, normalise_options
    from worker.queue.state import TERMINAL

    client = JobClient()
    options = {"pages": args.pages, "dpi": args.dpi, "tables": args.tables, "engine": args.engine}
    try:
        normalise_options(options, client.settings)
        if args.callback:
            check_callback(args.callback, client.settings)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    jobs: list[tuple[Path, str]] = []
    failed = 0
    for path in args.files:
        try:
            job_id = client.enqueue(path, options, force=args.force, callback_url=args.callback)
        except OSError as exc:
            print(f"error: {path}: {exc.strerror or exc}", file=sys.stderr)
            failed += 1
            continue
        print(job_id, flush=True)
        jobs.append((path, job_id))
    if not args.wait:
        return 1 if failed else 0
    if any(client.status(job_id)["status"] not in TERMINAL for _, job_id in jobs):
        try:
            client.require_workers([client.settings.queue.docs, client.settings.queue.pages])
        except TablesightError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    quiet = args.no_progress or not sys.stderr.isatty()
    deadline = None if args.timeout is None else time.monotonic() + args.timeout
    bar = tqdm(desc="pages", unit="page", disable=quiet)
    pending = dict(jobs)
    states: dict[str, dict] = {}
    while pending:
        for path, job_id in list(pending.items()):
            states[job_id] = client.status(job_id)
            if states[job_id]["status"] in TERMINAL:
                del pending[path]
        bar.total = sum(st["pages_total"] or 0 for st in states.values()) or None
        bar.n = sum(st["pages_done"] or 0 for st in states.values())
        bar.refresh()
        if pending and deadline is not None and time.monotonic() >= deadline:
            break
        if pending:
            time.sleep(0.5)
    bar.close()
    for path, job_id in jobs:
        st = states[job_id]
        if path in pending:
            failed += 1
            print(
                f"error: {path}: {JobTimeout.__name__}: still {st['status']} after {args.timeout} s (job {job_id})",
                file=sys.stderr,
            )
        elif st["status"] == "complete":
            print(
                f"{path}: {st['tables'] or 0} table(s) on {st['pages_total']} page(s) -> {st['manifest']}",
                file=sys.stderr,
            )
        else:
            failed += 1
            reasons = "; ".join(e["reason"] for e in st["errors"][:3])
            print(f"error: {path}: {st['status']}: {reasons} (job {job_id})", file=sys.stderr)
    return 1 if failed else 0
