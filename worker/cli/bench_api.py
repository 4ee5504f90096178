"""`tablesight bench api`: the arguments and the run of the API load bench (worker.devtools.api_bench)."""

from __future__ import annotations

import argparse
import sys

from worker.cli.report_out import emit_report


def add_api_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--clients",
        default="10,50,100",
        metavar="N,...",
        help="api: concurrent client counts to run (default 10,50,100)",
    )
    p.add_argument("--docs-per-client", type=int, default=1, help="api: documents each client uploads (default 1)")
    p.add_argument("--api-workers", type=int, default=2, help="api: worker processes (default 2)")
    p.add_argument("--large-mb", type=float, default=6.0, help="api: size of the large documents, MB (default 6)")
    p.add_argument(
        "--work",
        choices=("embedded", "stand-in"),
        default="embedded",
        help="api: page work: embedded (the embedded engine's ONNX models, default) or stand-in (no model work)",
    )
    p.add_argument("--no-faults", dest="faults", action="store_false", help="api: no worker kill, no API restart")
    p.add_argument("--deadline", type=float, default=900.0, help="api: seconds one client count may take (default 900)")


def run_api(args: argparse.Namespace) -> int:
    import logging

    from worker.devtools.api_bench import ApiBenchOptions, format_api_report, run_api_bench

    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request would drown the report

    try:
        clients = tuple(int(n) for n in args.clients.split(",") if n.strip())
    except ValueError:
        print("error: --clients takes comma-separated integers, e.g. 10,50,100", file=sys.stderr)
        return 2
    if not clients or min(clients) < 1 or args.docs_per_client < 1 or args.api_workers < 1 or args.large_mb <= 0:
        print("error: --clients, --docs-per-client and --api-workers must be at least 1", file=sys.stderr)
        return 2
    options = ApiBenchOptions(
        clients=clients,
        docs_per_client=args.docs_per_client,
        workers=args.api_workers,
        large_mb=args.large_mb,
        work=args.work,
        faults=args.faults,
        deadline=args.deadline,
        keep=args.keep,
    )
    try:
        report = run_api_bench(options, log=lambda m: print(f"bench: {m}", file=sys.stderr))
    except (FileNotFoundError, TimeoutError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    emit_report(args.json, report, format_api_report)
    bad = [r for r in report["runs"] if r["documents_lost"] or r["documents_duplicated"] or r["uploads_failed"]]
    return 1 if bad else 0
