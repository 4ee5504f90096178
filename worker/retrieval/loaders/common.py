"""What every loader yields: (text, metadata) per chunk or per table of a `Document`.

Metadata (JSON-safe, the same in every framework): `doc_id`, `source` (the input file's name),
`table_id` (a merged table's `<first>-to-<last>`), `parts`, `page`, `pages`, `bbox` (the first
part's box in page pixels), `flags` (why a table may need a second look, and chunk flags such
as `over_budget`), `needs_vision`, `html` (of the chunk or the table), `crop` (a path or URL of
the crop image), and for chunks `chunk`, `n_chunks` and `row_range`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from worker.retrieval.public import Document, Table

Per = Literal["chunk", "table"]
HTML_KEY = "html"  # loaders keep it out of what is embedded


@dataclass(frozen=True, slots=True)
class Record:
    text: str
    metadata: dict[str, Any]


def _table_meta(doc: Document, t: Table) -> dict[str, Any]:
    flags = t.flags
    return {
        "doc_id": doc.doc_id,
        "source": doc.source,
        "table_id": t.table_id,
        "parts": [t.table_id],
        "page": t.page,
        "pages": [t.page],
        "bbox": list(t.bbox),
        "flags": [str(r) for r in flags.get("reasons") or []],
        "needs_vision": bool(flags.get("needs_vision", False)),
        "crop": t.crop_link,
    }


def records(doc: Document, per: Per = "chunk", max_tokens: int | None = None) -> Iterator[Record]:
    """One record per chunk (merged tables once) or per table, in page order."""
    if per == "table":
        for t in doc.tables:
            ser = t.record["serialisations"]
            text = str(ser["description"]) + "\n\n" + "\n".join(ser["row_lines"])
            yield Record(text, {**_table_meta(doc, t), HTML_KEY: t.html})
        return
    if per != "chunk":
        raise ValueError(f"per must be 'chunk' or 'table', not {per!r}")
    by_id = {t.table_id: t for t in doc.tables}
    for c in doc.chunks(max_tokens):
        parts = [p for p in c.get("parts") or [c["table_id"]] if p in by_id]
        first = by_id[parts[0]] if parts else None
        meta: dict[str, Any] = _table_meta(doc, first) if first else {"doc_id": doc.doc_id, "source": doc.source}
        reasons = sorted({r for p in parts for r in _table_meta(doc, by_id[p])["flags"]})
        meta.update(
            table_id=c["table_id"],
            parts=parts,
            page=c.get("page"),
            pages=list(c.get("pages") or []),
            flags=reasons + [str(f) for f in c.get("flags") or []],
            needs_vision=any(by_id[p].flags.get("needs_vision", False) for p in parts),
            chunk=int(c["chunk"]),
            n_chunks=int(c["n_chunks"]),
            row_range=list(c["row_range"]),
        )
        meta[HTML_KEY] = c["html"]
        yield Record(str(c["text"]), meta)


@contextmanager
def open_source(
    path: str | Path | None, doc_id: str | None, url: str | None, token: str | None, extract_options: dict[str, Any]
) -> Iterator[Document]:
    """The document a loader reads, open while the loader reads it: `path` extracted in process
    (or uploaded to `url`), or the stored `doc_id` (from `url`, else the local store)."""
    if (path is None) == (doc_id is None):
        raise ValueError("give either a file path or a doc_id")
    if url is not None:
        from worker.retrieval.client import Client

        with Client(url, token) as client:
            yield client.extract(path, **extract_options) if path is not None else client.document(str(doc_id))
        return
    from worker.retrieval.public import extract, open_document

    if path is not None:
        yield extract(path, **extract_options)
    else:
        yield open_document(str(doc_id), store=extract_options.get("store"), settings=extract_options.get("settings"))
