"""`tablesight chunks DOC_ID --max-tokens N [--tokenizer NAME]`: JSON lines of chunks to embed.

Reads a finished document from storage; tables continued across pages come out once, merged.
Each line holds the table id (a merged table's is `<first>-to-<last>`), its parts, pages,
grid row range, the text to embed (description + labelled rows) and the HTML to show.
A table with more data rows than TABLESIGHT_CHUNK_TABLE_MAX_ROWS gives one chunk instead:
its description (`kind: table_description`, with its LLM summary when one is stored), with
`view` naming the SQL view (`tablesight sql`) that answers questions on it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


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
    p.add_argument("--store", type=Path, help="local output folder (default: TABLESIGHT_STORAGE_URL)")
    p.add_argument("--out", type=Path, help="write the JSON lines here instead of stdout")
    p.set_defaults(func=run)


def token_counter(name: str | None):  # -> TokenCounter
    """The approximation, or a local tokenizer's exact count; ValueError when NAME is not local."""
    from worker.core.chunks import approx_tokens

    if not name:
        return approx_tokens
    if not _local(name):  # say so before paying for importing transformers
        raise ValueError(
            f"tokenizer {name!r} is not available locally: give a folder or a hub id already in "
            "the local cache (nothing is downloaded), or omit --tokenizer"
        )
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(name, local_files_only=True)
    except Exception as exc:  # missing files, unknown name, no transformers: all say the same to a user
        raise ValueError(
            f"tokenizer {name!r} is not available locally ({type(exc).__name__}); "
            "give a folder or a name in the local cache, or omit --tokenizer"
        ) from exc
    return lambda text: len(tok.encode(text, add_special_tokens=False))


def _local(name: str) -> bool:
    """A tokenizer folder, or a hub id whose tokenizer files are in the local cache."""
    if Path(name).expanduser().is_dir():
        return True
    try:
        from huggingface_hub import try_to_load_from_cache

        return any(
            isinstance(try_to_load_from_cache(name, f), str)
            for f in ("tokenizer.json", "tokenizer_config.json", "vocab.json", "tokenizer.model")
        )
    except Exception:  # not a valid hub id, no hub library: not local
        return False


def document_chunks(storage: Any, doc_id: str, max_tokens: int, count: Any, max_rows: int = 0) -> list[dict[str, Any]]:
    """Every chunk of a stored document, tables in page order, merged tables once; a table with
    more than `max_rows` data rows (when > 0) gives one description chunk instead of its rows."""
    from worker.core.chunks import chunk_table, data_rows, description_chunk
    from worker.logical_tables import iter_logical_tables
    from worker.outputs import manifest_key
    from worker.summary import table_description

    manifest = storage.get_json(manifest_key(doc_id))
    out = []
    for table in iter_logical_tables(storage, manifest):
        if max_rows > 0 and data_rows(table.serialisations) > max_rows:
            text = table_description(storage, doc_id, table)
            chunk = description_chunk(
                table.grid, table.serialisations, text, count, table_id=table.table_id, pages=table.pages
            )
            out.append({"doc_id": doc_id, **chunk, "parts": table.parts})
            continue
        for chunk in chunk_table(
            table.grid,
            table.serialisations,
            max_tokens,
            count,
            table_id=table.table_id,
            pages=table.pages,
            row_pages=table.row_pages,
        ):
            out.append({"doc_id": doc_id, **chunk, "parts": table.parts})
    return out


def run(args: argparse.Namespace) -> int:
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
        chunks = document_chunks(storage, args.doc_id, max_tokens, count, max_rows)
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
