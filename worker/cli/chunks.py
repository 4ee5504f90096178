"""`tablesight chunks DOC_ID --max-tokens N [--tokenizer NAME]`: JSON lines of chunks to embed.

Reads a finished document from storage; tables continued across pages come out once, merged.
Each line holds the table id (a merged table's is `<first>-to-<last>`), its parts, pages,
grid row range, the text to embed (description + rows, as a Markdown table by default) and
the HTML to show.
A table with more data rows than TABLESIGHT_CHUNK_TABLE_MAX_ROWS gives one chunk instead:
its description (`kind: table_description`, with its LLM summary when one is stored), with
`view` naming the SQL view (`tablesight sql`) that answers questions on it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "chunks",
        help="retrieval chunks of a stored document's tables (JSON lines)",
        description="Split each table into chunks within a token budget, by rows only, each "
        "chunk repeating caption, column labels and units.",
    )
    p.add_argument("doc_id", metavar="DOC_ID", help="document id (folder name under the store)")
    p.add_argument("--max-tokens", type=int, help="token budget per chunk (default: TABLESIGHT_CHUNK_MAX_TOKENS)")
    p.add_argument(
        "--tokenizer",
        metavar="NAME",
        help="count tokens with this local transformers tokenizer (hub id in the local cache, or a "
        "folder); default: a built-in approximation (worker.core.chunks.approx_tokens)",
    )
    p.add_argument(
        "--max-rows",
        type=int,
        help="a table with more data rows gives one description chunk pointing to its SQL view "
        "(default: TABLESIGHT_CHUNK_TABLE_MAX_ROWS; 0 = never)",
    )
    p.add_argument(
        "--layout",
        choices=["table", "labelled"],
        default="table",
        help="rows as a Markdown table under the column paths (default) or as `Row; Column: value` lines",
    )
    p.add_argument(
        "--preamble",
        choices=["full", "lean"],
        default="full",
        help="chunk head: the full description (default) or caption, pages and notes only",
    )
    p.add_argument("--store", type=Path, help="local output folder (default: TABLESIGHT_STORAGE_URL)")
    p.add_argument("--out", type=Path, help="write the JSON lines here instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from worker.retrieval.chunks import chunks_for, token_counter
    from worker.settings import get_settings
    from worker.storage import StorageError, storage_for, validate_key

    settings = get_settings()
    max_tokens = args.max_tokens or settings.chunks.max_tokens
    if max_tokens < 1:
        print("error: --max-tokens must be positive", file=sys.stderr)
        return 2
    try:
        count = token_counter(args.tokenizer)
        validate_key(args.doc_id)
    except (ValueError, StorageError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    storage = storage_for(settings, args.store)
    try:
        max_rows = settings.chunks.table_max_rows if args.max_rows is None else args.max_rows
        chunks = chunks_for(
            storage,
            args.doc_id,
            settings,
            max_tokens=max_tokens,
            max_rows=max_rows,
            count=count,
            layout=args.layout,
            preamble=args.preamble,
        )
    except KeyError as exc:
        print(f"error: {args.doc_id}: not found in {storage.location(args.doc_id)} ({exc})", file=sys.stderr)
        return 1
    except StorageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    text = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in chunks)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    over = sum(1 for c in chunks if "over_budget" in c["flags"])
    described = sum(1 for c in chunks if c.get("kind") == "table_description")
    print(
        f"{len(chunks)} chunk(s) from {len({c['table_id'] for c in chunks})} table(s)"
        + (f", {over} over the budget" if over else "")
        + (f", {described} large table(s) as one description chunk each" if described else ""),
        file=sys.stderr,
    )
    return 0
