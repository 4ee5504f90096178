"""`tablesight describe DOC_ID [TABLE_ID...] [--summarise]`: each table's retrieval description.

The description is built from what extraction knows (caption, header paths, units, rows,
samples, SQL view). `--summarise` also asks the OpenAI-compatible server (TABLESIGHT_VISION_*)
for a one- or two-sentence summary of each table and stores it as `<table_id>.summary.json`;
tables that have one keep it unless `--force`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from worker.cli.sql import intermixed


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "describe",
        help="retrieval descriptions of a stored document's tables; --summarise adds LLM summaries",
        description="Print each table's description (the text its description chunk embeds); with "
        "--summarise, make and store an LLM summary per table through the OpenAI-compatible server.",
    )
    p.add_argument("doc_id", metavar="DOC_ID", help="document id (folder name under the store)")
    p.add_argument("tables", metavar="TABLE_ID", nargs="*", help="only these tables (default: all)")
    p.add_argument("--summarise", action="store_true", help="make and store LLM summaries (TABLESIGHT_VISION_*)")
    p.add_argument("--force", action="store_true", help="with --summarise: replace stored summaries")
    p.add_argument("--json", action="store_true", help="one JSON object per table")
    p.add_argument("--store", type=Path, help="local output folder (default: TABLESIGHT_STORAGE_URL)")
    p.set_defaults(func=run)
    intermixed(p)


def run(args: argparse.Namespace) -> int:
    from models.vision.base import VisionError
    from worker.contract.reads import ContractError, read_manifest
    from worker.outputs import manifest_key
    from worker.retrieval.descriptions import describe, stored_summary, summarise
    from worker.retrieval.logical_tables import iter_logical_tables
    from worker.settings import get_settings
    from worker.storage import StorageError, storage_for, validate_key

    settings = get_settings()
    try:
        validate_key(args.doc_id)
        storage = storage_for(settings, args.store)
        manifest = read_manifest(storage, manifest_key(args.doc_id)).dump()
        tables = list(iter_logical_tables(storage, manifest))
    except KeyError:
        print(f"error: {args.doc_id}: no such document", file=sys.stderr)
        return 1
    except (StorageError, ContractError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.tables:
        known = {t.table_id for t in tables} | {p for t in tables for p in t.parts}
        missing = [t for t in args.tables if t not in known]
        if missing:
            print(f"error: {args.doc_id}: no table {', '.join(missing)}", file=sys.stderr)
            return 1
        tables = [t for t in tables if t.table_id in args.tables or set(t.parts) & set(args.tables)]
    failed = 0
    for table in tables:
        summary = stored_summary(storage, args.doc_id, table)
        if args.summarise and (summary is None or args.force):
            try:
                summary = summarise(storage, args.doc_id, table, settings)
            except (VisionError, StorageError) as exc:
                print(f"error: {args.doc_id}/{table.table_id}: summary failed: {exc}", file=sys.stderr)
                failed += 1
        text = describe(table)
        if args.json:
            print(
                json.dumps(
                    {
                        "doc_id": args.doc_id,
                        "table_id": table.table_id,
                        "parts": table.parts,
                        "description": text,
                        "summary": summary.get("summary") if summary else None,
                    },
                    ensure_ascii=False,
                )
            )
        else:
            head = f"Summary: {summary['summary']}\n" if summary and summary.get("summary") else ""
            print(head + text + "\n")
    return 1 if failed else 0
