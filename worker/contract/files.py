"""The files of one document in the store, in one list: the output-contract table of the README
and docs/architecture.md is generated from it (`tablesight schema --markdown`), so the two
documents cannot disagree with each other or with the records."""

from __future__ import annotations

from dataclasses import dataclass

from worker.contract.base import Contract
from worker.contract.manifest import Manifest, PageRecord
from worker.contract.table import TableRecord
from worker.contract.vision import VisionRead

MARK_START = "<!-- contract-table:start -->"
MARK_END = "<!-- contract-table:end -->"


@dataclass(frozen=True)
class StoredFile:
    path: str  # under <doc_id>/
    holds: str
    model: type[Contract] | None = None  # the record a JSON file follows
    schema: str | None = None  # its JSON Schema under docs/schema/


STORED_FILES: tuple[StoredFile, ...] = (
    StoredFile(
        "manifest.json",
        "status (complete, partial, failed), source, sha256, pages, tables[], logical tables, errors[], "
        "models, options, timings, tool version",
        Manifest,
        "manifest.schema.json",
    ),
    StoredFile("pages/NNNN.json", "one page's tables, errors and timings", PageRecord, "page.schema.json"),
    StoredFile(
        "tables/<table_id>.json",
        "page, boxes, grid (cells with spans, text, header marks, confidence), flags, context, "
        "serialisations, typed column schema, description, replayable structure output",
        TableRecord,
        "table.schema.json",
    ),
    StoredFile("tables/<table_id>.html", "`<table>` with `<thead>`/`<tbody>`, `<th>`/`<td>`, colspan/rowspan"),
    StoredFile("tables/<table_id>.png", "the table's crop (with padding) at render resolution"),
    StoredFile("tables/<table_id>.md, .rows.txt", "Markdown, and one line per body row, for retrieval"),
    StoredFile("tables/<table_id>.csv, .parquet", "typed columns; Parquet keeps header paths in field metadata"),
    StoredFile(
        "tables/<table_id>.vision.json",
        "a checked vision read, when one was asked for (with its `.vision.html`)",
        VisionRead,
        "vision-read.schema.json",
    ),
    StoredFile("logical/<logical_id>.*", "a table continued over pages, merged (same files as a table)"),
    StoredFile("jobs/<job_id>.json", "a queued job's own copy of its manifest", Manifest, "manifest.schema.json"),
)


def contract_table(schema_dir: str = "docs/schema") -> str:
    """The Markdown table of every stored file (links to schemas relative to the repo root)."""
    lines = ["| file under `<doc_id>/` | holds | record (JSON Schema) |", "|---|---|---|"]
    for f in STORED_FILES:
        record = f"`{f.model.__name__}` ([{f.schema}]({schema_dir}/{f.schema}))" if f.model and f.schema else "-"
        lines.append(f"| `{f.path}` | {f.holds} | {record} |")
    return "\n".join(lines)


def replace_between_markers(text: str, table: str) -> str:
    """`text` with the block between the contract-table markers replaced by `table`."""
    start, end = text.index(MARK_START) + len(MARK_START), text.index(MARK_END)
    return text[:start] + "\n" + table + "\n" + text[end:]
