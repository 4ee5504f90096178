"""`tablesight sql DOC_ID "SELECT ..."` / `tablesight sql --all "..."`: read-only SQL over stored tables.

Each table is a view named by its table id (double-quote it: `"p0001-t01"`); `_tables` and
`_columns` list the views, their captions, column names and header paths. With `--all`
every document is a schema named by its doc id (`"0123456789abcdef"."p0001-t01"`).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any


class _Intermixed(argparse.ArgumentParser):
    """Options may come after DOC_ID (`sql DOC --json "..."`): plain argparse would bind both
    optional positionals to the first word and reject the query as unrecognised."""

    _busy = False

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def, override, unused-ignore]
        if self._busy:  # parse_known_intermixed_args calls back here for its two passes
            return super().parse_known_args(args, namespace)
        self._busy = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._busy = False


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sql",
        help="read-only SQL (DuckDB) over the tables of a stored document, or of all of them",
        description="Run one query over views of the stored tables: one view per table, named by "
        'its table id (quote it: "p0001-t01"); _tables and _columns list them. With --all, each '
        'document is a schema named by its doc id ("DOC_ID"."p0001-t01"). Only queries are allowed.',
    )
    p.add_argument("target", metavar="DOC_ID", nargs="?", help="document id (omit with --all)")
    p.add_argument("query", metavar="SQL", nargs="?", help="one query (SELECT, WITH, SHOW, DESCRIBE, ...)")
    p.add_argument("--all", action="store_true", dest="all_docs", help="over every stored document")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="one JSON array of row objects")
    fmt.add_argument("--csv", action="store_true", help="CSV with a header row")
    p.add_argument("--store", type=Path, help="local output folder (default: TABLESIGHT_STORAGE_URL)")
    p.add_argument("--max-width", type=int, default=40, help="widest column in the human table (default 40)")
    p.set_defaults(func=run)
    intermixed(p)


def intermixed(parser: argparse.ArgumentParser) -> None:
    """Let options follow the positionals of a subcommand (subparsers build plain parsers)."""
    parser.__class__ = _Intermixed


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def _text(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return repr(value) if value != int(value) or abs(value) >= 1e16 else f"{value:.1f}"
    return " ".join(str(value).split())


def format_table(columns: list[str], rows: list[tuple[Any, ...]], max_width: int = 40) -> str:
    """Fixed-width text: a header, a rule, one line per row, and the row count."""
    cells = [[_text(v) for v in row] for row in rows]
    widths = [min(max_width, max([len(c)] + [len(r[i]) for r in cells])) for i, c in enumerate(columns)]

    def fit(t: str, w: int) -> str:
        return t if len(t) <= w else t[: max(1, w - 1)] + "…"

    numeric = [
        any(isinstance(r[i], (int, float)) for r in rows)
        and all(isinstance(r[i], (int, float)) or r[i] is None for r in rows)
        for i in range(len(columns))
    ]
    lines = [" | ".join(fit(c, w).ljust(w) for c, w in zip(columns, widths))]
    lines.append("-+-".join("-" * w for w in widths))
    for row in cells:
        lines.append(
            " | ".join(
                fit(t, w).rjust(w) if num else fit(t, w).ljust(w) for t, w, num in zip(row, widths, numeric)
            ).rstrip()
        )
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from worker.settings import get_settings
    from worker.sqlstore import QueryRefused, StoreError, open_sql_store
    from worker.storage import StorageError, storage_for, validate_key

    query = args.query
    if args.all_docs:
        if args.target and query:
            print("error: with --all give only the query", file=sys.stderr)
            return 2
        query = query or args.target
        doc_ids = None
    else:
        if not args.target or not query:
            print('error: give DOC_ID and a query (or --all "QUERY")', file=sys.stderr)
            return 2
        try:
            validate_key(args.target)
        except StorageError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        doc_ids = [args.target]
    if not query or not query.strip():
        print("error: no query given", file=sys.stderr)
        return 2
    settings = get_settings()
    try:
        storage = storage_for(settings, args.store)
        with open_sql_store(
            storage, doc_ids, all_documents=args.all_docs, s3_reader=settings.store.sql_s3_reader
        ) as store:
            for w in store.warnings:
                print(f"warning: {w}", file=sys.stderr)
            result = store.query(query)
    except QueryRefused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (StoreError, StorageError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        rows = [{c: _jsonable(v) for c, v in zip(result.columns, row)} for row in result.rows]
        print(json.dumps(rows, ensure_ascii=False, indent=1))
    elif args.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows([["" if v is None else v for v in row] for row in result.rows])
    else:
        print(format_table(result.columns, result.rows, args.max_width))
    return 0
