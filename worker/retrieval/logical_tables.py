"""Logical tables of a stored document: parts continued across pages, linked and merged.

Runs once per document after every page is written (in process by `extract_document`;
the queue's finalising task must call `attach_logical_tables` too). It reads only the
candidate parts (last table of a page, first of the next, same column count), writes each
merged table under `<doc_id>/logical/` and records the links in the manifest and in each
part's JSON, so it is idempotent like the rest of the output.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from worker.core.continuation import Link, Part, link_parts, merge_grids, part_from_record
from worker.core.html_out import grid_to_html
from worker.core.serialise import (
    SERIALISATION_VERSION,
    TableContext,
    grid_from_dict,
    rows_text,
    serialisations,
)
from worker.core.types import TableGrid
from worker.retrieval.exports import export_record
from worker.storage.base import Storage, StorageError

logger = logging.getLogger(__name__)


def logical_key(doc_id: str, logical_id: str, suffix: str) -> str:
    return f"{doc_id}/logical/{logical_id}{suffix}"


def table_json_key(doc_id: str, tid: str) -> str:
    return f"{doc_id}/tables/{tid}.json"


def _candidates(tables: list[dict[str, Any]]) -> set[str]:
    """Ids of tables that could be a part: a page's last table and the next page's first, when
    their column counts agree (only these JSONs are read)."""
    by_page: dict[int, list[dict[str, Any]]] = {}
    for t in tables:
        by_page.setdefault(int(t["page"]), []).append(t)
    out: set[str] = set()
    for page, entries in by_page.items():
        nxt = by_page.get(page + 1)
        if nxt and entries[-1].get("n_cols") == nxt[0].get("n_cols"):
            out |= {entries[-1]["table_id"], nxt[0]["table_id"]}
    return out


def find_links(
    storage: Storage, doc_id: str, tables: list[dict[str, Any]], tolerance: float = 0.03
) -> tuple[list[list[str]], list[Link], dict[str, dict[str, Any]]]:
    """Chains of continued parts, the links, and the records that were read."""
    records: dict[str, dict[str, Any]] = {}
    parts: list[Part] = []
    positions = {t["table_id"]: i for i, t in enumerate(tables)}
    for tid in sorted(_candidates(tables), key=lambda t: positions[t]):
        try:
            records[tid] = storage.get_json(table_json_key(doc_id, tid))
        except KeyError:
            continue
        page_ids = [t["table_id"] for t in tables if t["page"] == records[tid]["page"]]
        parts.append(part_from_record(records[tid], first_on_page=page_ids[0] == tid, last_on_page=page_ids[-1] == tid))
    chains, links = link_parts(parts, tolerance=tolerance)
    return chains, links, records


@dataclass
class LogicalTable:
    """A table as retrieval should see it: one part, or parts merged across pages."""

    table_id: str
    parts: list[str]
    pages: list[int]
    grid: TableGrid
    serialisations: dict[str, Any]
    row_pages: dict[int, int]


def merge_chain(
    doc_id: str, chain: list[str], records: dict[str, dict[str, Any]], links: list[Link]
) -> tuple[LogicalTable, dict[str, Any]]:
    """The merged logical table of one chain and its JSON record."""
    repeated = {ln.b: ln.repeated_header for ln in links}
    grids = [grid_from_dict(records[t]["grid"]) for t in chain]
    skips = [0] + [int(records[t]["serialisations"].get("header_rows", 0)) if repeated.get(t) else 0 for t in chain[1:]]
    merged, sources = merge_grids(grids, skips)
    pages = [int(records[t]["page"]) for t in chain]
    contexts = [records[t].get("context") or {} for t in chain]
    notes: list[str] = []
    for ctx in contexts:
        notes += [n for n in ctx.get("notes") or [] if n not in notes]
    context = TableContext(str(contexts[0].get("caption") or ""), notes, pages)
    logical_id = f"{chain[0]}-to-{chain[-1]}"
    ser = serialisations(merged, context, table_id=logical_id)
    row_pages = {r: pages[i] for r, (i, _) in enumerate(sources)}
    chain_links = [ln.to_dict() for ln in links if ln.a in chain and ln.b in chain]
    record = {
        "doc_id": doc_id,
        "logical_id": logical_id,
        "parts": chain,
        "pages": pages,
        "links": chain_links,
        "row_sources": [[chain[i], r] for i, r in sources],
        "grid": merged.to_dict(),
        "serialisations": ser,
    }
    return LogicalTable(logical_id, chain, pages, merged, ser, row_pages), record


def attach_logical_tables(manifest: dict[str, Any], storage: Storage, *, tolerance: float = 0.03) -> dict[str, Any]:
    """Find continued tables of a finished document, write the merged ones, note the links.

    A failure here costs the links, not the document: it is logged and noted in the manifest.
    """
    try:
        return _attach(manifest, storage, tolerance)
    except StorageError:
        raise
    except Exception as exc:  # the tables themselves are fine: keep them, say what is missing
        logger.exception("linking continued tables of %s failed", manifest.get("doc_id"))
        manifest["logical_tables"] = []
        manifest["logical_tables_error"] = f"{type(exc).__name__}: {exc}"
        return manifest


def _attach(manifest: dict[str, Any], storage: Storage, tolerance: float) -> dict[str, Any]:
    doc_id = manifest["doc_id"]
    tables = manifest.get("tables") or []
    chains, links, records = find_links(storage, doc_id, tables, tolerance)
    logical = []
    by_id = {t["table_id"]: t for t in tables}
    for chain in chains:
        table, record = merge_chain(doc_id, chain, records, links)
        files = {
            "md": logical_key(doc_id, table.table_id, ".md"),
            "rows": logical_key(doc_id, table.table_id, ".rows.txt"),
            "html": logical_key(doc_id, table.table_id, ".html"),
            "json": logical_key(doc_id, table.table_id, ".json"),
        }
        storage.put_text(files["md"], table.serialisations["markdown"] + "\n", "text/markdown; charset=utf-8")
        storage.put_text(files["rows"], rows_text(table.serialisations))
        storage.put_text(files["html"], grid_to_html(table.grid) + "\n", "text/html; charset=utf-8")
        files.update(export_record(storage, logical_key(doc_id, table.table_id, ""), record))
        storage.put_json(files["json"], record)
        for i, tid in enumerate(chain):
            note = {
                "logical_table": table.table_id,
                "continues": chain[i - 1] if i else None,
                "continued_by": chain[i + 1] if i + 1 < len(chain) else None,
            }
            by_id[tid].update(note)
            records[tid]["continuation"] = note
            storage.put_json(table_json_key(doc_id, tid), records[tid])
        logical.append(
            {
                "logical_id": table.table_id,
                "parts": chain,
                "pages": table.pages,
                "n_rows": table.grid.n_rows,
                "n_cols": table.grid.n_cols,
                "links": record["links"],
                "files": files,
            }
        )
    manifest["logical_tables"] = logical
    return manifest


def iter_logical_tables(storage: Storage, manifest: dict[str, Any]) -> Iterator[LogicalTable]:
    """Every table of a document as retrieval should see it: merged ones once, in page order,
    a caption detected as a table of its own folded into the table under it
    (`worker.retrieval.caption_tables`).

    Uses the links the manifest records; a manifest from before linking gets none.
    """
    from worker.retrieval.caption_tables import with_caption_tables

    return with_caption_tables(_logical_tables(storage, manifest))


def _logical_tables(storage: Storage, manifest: dict[str, Any]) -> Iterator[LogicalTable]:
    doc_id = manifest["doc_id"]
    merged = {lt["parts"][0]: lt for lt in manifest.get("logical_tables") or []}
    in_chain = {tid for lt in merged.values() for tid in lt["parts"]}
    for entry in manifest.get("tables") or []:
        tid = entry["table_id"]
        if tid in merged:
            rec = storage.get_json(merged[tid]["files"]["json"])
            pages = [int(p) for p in rec["pages"]]
            part_pages = dict(zip(rec["parts"], pages))
            row_pages = {r: part_pages[src[0]] for r, src in enumerate(rec["row_sources"])}
            yield LogicalTable(
                rec["logical_id"], rec["parts"], pages, grid_from_dict(rec["grid"]), rec["serialisations"], row_pages
            )
        elif tid not in in_chain:
            rec = storage.get_json(table_json_key(doc_id, tid))
            grid = grid_from_dict(rec["grid"])
            page = int(rec["page"])
            ser = rec.get("serialisations") or {}
            if ser.get("version", 1) < SERIALISATION_VERSION:  # written by an older serialiser: read anew
                ser = serialisations(grid, TableContext.from_dict(rec.get("context"), [page]), tid)
            yield LogicalTable(tid, [tid], [page], grid, ser, {r: page for r in range(grid.n_rows)})
