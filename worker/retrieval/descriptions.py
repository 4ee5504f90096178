"""Table descriptions for retrieval, and the optional LLM summary stored beside them.

The description (`worker.core.describe`) needs no model and is always there. A summary is
one or two sentences from an LLM behind the same OpenAI-compatible server as the vision
read (TABLESIGHT_VISION_URL / _MODEL / _API_KEY), asked from the description and a few row
lines; it is stored apart (`<table_id>.summary.json`), never required, and when present it
heads the description chunk of a large table.
"""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING, Any

from worker.core.columns import typed_from_serialisations
from worker.core.describe import describe_table
from worker.storage.base import Storage

if TYPE_CHECKING:
    from worker.retrieval.logical_tables import LogicalTable
    from worker.settings import Settings

SUMMARY_PROMPT_VERSION = 1
SAMPLE_LINES = 8
PROMPT = """You describe data tables for a search index. From the table description and sample rows below,
write one or two plain sentences saying what the table reports: the measure, its breakdown (what the rows
and the columns are), the period or place when stated, and the units. No lists, no markdown, no preamble.

{description}

Sample rows:
{rows}
"""


def summary_key(doc_id: str, table: LogicalTable) -> str:
    folder = "logical" if len(table.parts) > 1 else "tables"
    return f"{doc_id}/{folder}/{table.table_id}.summary.json"


def describe(table: LogicalTable) -> str:
    """The description of a (possibly merged) table, built from its grid and serialisations."""
    ser = table.serialisations
    typed = typed_from_serialisations(table.grid, ser)
    return describe_table(
        typed,
        table_id=table.table_id,
        caption=str(ser.get("caption") or ""),
        pages=table.pages,
        notes=[str(n) for n in ser.get("notes") or []],
        view=table.table_id,
    )


def stored_summary(storage: Storage, doc_id: str, table: LogicalTable) -> dict[str, Any] | None:
    try:
        return storage.get_json(summary_key(doc_id, table))
    except KeyError:
        return None


def table_description(storage: Storage, doc_id: str, table: LogicalTable) -> str:
    """What a large table's chunk embeds: its stored summary (if any), then its description."""
    text = describe(table)
    stored = stored_summary(storage, doc_id, table)
    if stored and stored.get("summary"):
        return f"Summary: {stored['summary']}\n{text}"
    return text


def summarise(storage: Storage, doc_id: str, table: LogicalTable, settings: Settings) -> dict[str, Any]:
    """Ask the LLM for a summary of one table and store it; returns the stored record.

    Raises VisionError when the server fails or sends nothing usable (nothing is stored then).
    """
    from models.vision.base import VisionError
    from models.vision.openai_reader import OpenAIReader

    if settings.vision.backend != "openai" or not settings.vision.model:
        raise VisionError(
            "summaries need an OpenAI-compatible server: set TABLESIGHT_VISION_BACKEND=openai, "
            "TABLESIGHT_VISION_URL and TABLESIGHT_VISION_MODEL"
        )
    description = describe(table)
    rows = "\n".join(table.serialisations.get("row_lines", [])[:SAMPLE_LINES]) or "(none)"
    prompt = PROMPT.format(description=description, rows=rows)
    reader = OpenAIReader.from_settings(settings.vision, settings.vision.model)
    started = time.perf_counter()
    answer = reader.complete(prompt, max_tokens=settings.chunks.summary_max_tokens)
    text = " ".join(answer.text.split())
    if not text:
        raise VisionError(f"the model sent an empty summary for {table.table_id}")
    record = {
        "doc_id": doc_id,
        "table_id": table.table_id,
        "summary": text,
        "backend": "openai",
        "model": settings.vision.model,
        "prompt_version": SUMMARY_PROMPT_VERSION,
        "description_sha256": hashlib.sha256(description.encode("utf-8")).hexdigest(),
        "latency_s": round(time.perf_counter() - started, 3),
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "finish_reason": answer.finish_reason,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    storage.put_json(summary_key(doc_id, table), record)
    return record
