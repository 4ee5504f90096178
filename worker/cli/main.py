"""Entry point of the `tablesight` console script; the only place logging is configured."""

from __future__ import annotations

import argparse
import logging
import sys

from worker import __version__
from worker.cli import (
    bench,
    cancel,
    chunks,
    demo,
    describe,
    enqueue,
    evaluate,
    extract,
    health,
    models_cmd,
    read,
    rebuild,
    result,
    schema,
    serve,
    settings_cmd,
    sql,
    status,
    worker_cmd,
)

# The order `tablesight --help` lists the commands in: one module per command (or command group).
COMMANDS = [
    extract,
    rebuild,
    demo,
    models_cmd,
    settings_cmd,
    evaluate,
    enqueue,
    status,
    cancel,
    result,
    worker_cmd,
    read,
    health,
    chunks,
    bench,
    schema,
    sql,
    describe,
    serve,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tablesight", description="Tables out of scanned PDFs, intact.")
    parser.add_argument("--version", action="version", version=f"tablesight {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    from worker.settings import get_settings

    level = "DEBUG" if args.verbose else get_settings().log_level
    logging.basicConfig(level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
