"""A stored document's retrieval chunks: its (logical) tables, in page order, each merged table once.

Each chunk holds the table id (a merged table's is `<first>-to-<last>`), its parts, pages, grid
row range, the text to embed (description + labelled rows) and the HTML to show. A table with
more data rows than `max_rows` gives one chunk instead: its description (`kind:
table_description`, headed by its LLM summary when one is stored), whose `view` names the SQL
view that answers questions on it. The chunking itself is pure (`worker.core.chunks`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worker.core.chunks import TokenCounter

if TYPE_CHECKING:
    from worker.retrieval.logical_tables import LogicalTable

# The chunk layout every caller serves, chosen by `tablesight eval retrieval` on dev (docs/retrieval.md):
# rows as a Markdown table under the column paths, headed by the full description. To become
# settings of the `chunks` group once the nested settings land.
LAYOUT = "table"
PREAMBLE = "full"


def token_counter(name: str | None) -> TokenCounter:
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


def table_chunks(
    table: LogicalTable,
    max_tokens: int,
    count: TokenCounter,
    max_rows: int,
    describe: Callable[[LogicalTable], str],
    *,
    layout: str = "labelled",
    preamble: str = "full",
) -> list[dict[str, Any]]:
    """One table's chunks: its rows (`worker.core.chunks.chunk_table`), or, with more than
    `max_rows` data rows (when > 0), one description chunk (`describe(table)`) that routes
    the question to SQL instead."""
    from worker.core.chunks import chunk_table, data_rows, description_chunk

    if max_rows > 0 and data_rows(table.serialisations) > max_rows:
        text = describe(table)
        return [
            description_chunk(table.grid, table.serialisations, text, count, table_id=table.table_id, pages=table.pages)
        ]
    return chunk_table(
        table.grid,
        table.serialisations,
        max_tokens,
        count,
        table_id=table.table_id,
        pages=table.pages,
        row_pages=table.row_pages,
        layout=layout,
        preamble=preamble,
    )


def document_chunks(
    storage: Any,
    doc_id: str,
    max_tokens: int,
    count: TokenCounter,
    max_rows: int = 0,
    *,
    layout: str = "labelled",
    preamble: str = "full",
) -> list[dict[str, Any]]:
    """Every chunk of a stored document, tables in page order, merged tables once (`table_chunks`).
    `layout` and `preamble`: `worker.core.chunks.chunk_table` (callers pass the settings')."""
    from worker.outputs import manifest_key
    from worker.retrieval.descriptions import table_description
    from worker.retrieval.logical_tables import iter_logical_tables

    manifest = storage.get_json(manifest_key(doc_id))
    out = []
    for table in iter_logical_tables(storage, manifest):
        chunks = table_chunks(
            table,
            max_tokens,
            count,
            max_rows,
            lambda t: table_description(storage, doc_id, t),
            layout=layout,
            preamble=preamble,
        )
        out += [{"doc_id": doc_id, **chunk, "parts": table.parts} for chunk in chunks]
    return out


def chunks_for(
    storage: Any,
    doc_id: str,
    settings: Any,
    *,
    max_tokens: int | None = None,
    max_rows: int | None = None,
    count: TokenCounter | None = None,
    layout: str = LAYOUT,
    preamble: str = PREAMBLE,
) -> list[dict[str, Any]]:
    """`document_chunks` with the chunk settings (budget, row threshold) and the chosen layout
    filled in where the caller gives none: what the CLI, the HTTP API and the Python API serve."""
    from worker.core.chunks import approx_tokens

    return document_chunks(
        storage,
        doc_id,
        max_tokens or settings.chunks.max_tokens,
        count or approx_tokens,
        settings.chunks.table_max_rows if max_rows is None else max_rows,
        layout=layout,
        preamble=preamble,
    )
