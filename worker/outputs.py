"""Where outputs go and how their records are built: keys under `<doc_id>/`, the table files,
page records and the manifest (the models are in worker.contract; docs/architecture.md).

Page records (`<doc_id>/pages/NNNN.json`) are what page workers write; the manifest is
always built from them, in process and through the queue alike, so both paths give the
same manifest for the same document.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterable, Sequence
from typing import Any

from PIL import Image

from worker import __version__
from worker.contract import Manifest, PageRecord, TableEntry, TableRecord
from worker.contract.page_transform import PageTransformRecord
from worker.core.captions import Context
from worker.core.detections import TableBox
from worker.core.replay import payload
from worker.core.serialise import TableContext, rows_text, serialisations
from worker.core.token_grid import StructureToken
from worker.core.types import RulingLines, StructureObject, TableGrid, Word
from worker.retrieval.exports import export_record
from worker.storage.base import Storage
from worker.timestamps import utc_now_iso

MANIFEST_VERSION = 1


def doc_id_for(sha256: str) -> str:
    """A document's key prefix: the first 16 hex digits of its content hash (re-runs overwrite)."""
    return sha256[:16]


def manifest_key(doc_id: str) -> str:
    return f"{doc_id}/manifest.json"


def page_key(doc_id: str, page: int) -> str:
    return f"{doc_id}/pages/{page:04d}.json"


def table_id(page: int, index: int) -> str:
    return f"p{page:04d}-t{index:02d}"


def table_key(doc_id: str, tid: str, suffix: str) -> str:
    return f"{doc_id}/tables/{tid}{suffix}"


# Retrieval serialisations stored beside each table: name in `files` -> (key suffix, content type).
TEXT_FILES = {"md": (".md", "text/markdown; charset=utf-8"), "rows": (".rows.txt", "text/plain; charset=utf-8")}


def table_record(
    *,
    doc_id: str,
    page: int,
    index: int,
    dpi: int,
    box: TableBox,
    crop_box: tuple[int, int, int, int],
    crop_size: tuple[int, int],
    text_source: str,
    grid: TableGrid,
    flags: dict[str, Any],
    context: Context | None,
    page_size: tuple[int, int],
    structure: Sequence[StructureObject],
    words: Sequence[Word],
    lines: RulingLines | None = None,
    tokens: Sequence[StructureToken] | None = None,
    page_transform: PageTransformRecord | None = None,
    engine: str | None = None,
    totals: dict[str, Any] | None = None,
    text_repairs: Sequence[dict[str, Any]] = (),
) -> TableRecord:
    """The stored record of one table (`<table_id>.json`), checked against the contract.

    `engine` names the replay format of `structure` (worker.core.replay.FORMATS); `totals`
    and `text_repairs` come from `worker.pipeline.numbers`."""
    tid = table_id(page, index)
    ctx = TableContext(context.caption if context else "", list(context.notes) if context else [], [page])
    return TableRecord.model_validate(
        {
            "doc_id": doc_id,
            "table_id": tid,
            "page": page,
            "dpi": dpi,
            "bbox": [round(v, 2) for v in box.bbox],
            "crop_box": list(crop_box),
            "detection_score": round(box.score, 4),
            "rotated": box.rotated,
            "text_source": text_source,
            "grid": grid.to_dict(),
            "flags": flags,
            "page_size": list(page_size),
            "context": context.to_dict() if context else None,
            "serialisations": serialisations(grid, ctx, table_id=tid),
            "structure": payload(
                crop_size,
                list(structure),
                list(words),
                image=f"{tid}.png",
                lines=lines,
                tokens=list(tokens) if tokens is not None else None,
                engine=engine,
                corrections=[*text_repairs, *corrections_of(totals)],
            ),
            "totals": totals,
            "text_repairs": list(text_repairs) or None,
            "page_transform": page_transform.dump() if page_transform is not None else None,
        }
    )


def corrections_of(totals: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The readings the totals chose, as replay corrections."""
    decided = (totals or {}).get("decided") or []
    return [
        {"row": d["row"], "col": d["col"], "from": d["previous"], "to": d["text"], "rule": "totals"} for d in decided
    ]


def manifest_entry(record: TableRecord, keys: dict[str, str]) -> TableEntry:
    """How the manifest (and its page record) lists a stored table."""
    grid, flags = record.grid, record.flags
    return TableEntry(
        table_id=record.table_id,
        page=record.page,
        bbox=record.bbox,
        n_rows=grid.n_rows,
        n_cols=grid.n_cols,
        confidence=grid.confidence,
        text_source=record.text_source,
        is_complex=flags.is_complex,
        needs_vision=flags.needs_vision,
        score=flags.score,
        reasons=flags.reasons,
        files=keys,
    )


def write_table(storage: Storage, crop: Image.Image, html: str, record: TableRecord) -> dict[str, str]:
    """Write crop, HTML, serialisation texts (`TEXT_FILES`), CSV and Parquet (`worker.retrieval.exports`,
    which also adds `schema` and `description` to the record) and JSON of one table; the JSON
    goes last so its presence means complete. Returns the keys written, by file kind."""
    doc_id, tid, ser = record.doc_id, record.table_id, record.serialisations
    texts = {"md": ser.markdown + "\n", "rows": rows_text(ser.model_dump())}
    buf = io.BytesIO()
    crop.save(buf, format="PNG", optimize=False, compress_level=3)
    keys = {
        "png": table_key(doc_id, tid, ".png"),
        "html": table_key(doc_id, tid, ".html"),
        "json": table_key(doc_id, tid, ".json"),
    }
    storage.put_bytes(keys["png"], buf.getvalue(), "image/png")
    storage.put_text(keys["html"], html + "\n", "text/html; charset=utf-8")
    for name, text in texts.items():
        suffix, content_type = TEXT_FILES[name]
        keys[name] = table_key(doc_id, tid, suffix)
        storage.put_text(keys[name], text, content_type)
    stored = record.dump()
    keys.update(export_record(storage, table_key(doc_id, tid, ""), stored))  # adds schema, description
    storage.put_json(keys["json"], TableRecord.model_validate(stored).dump())
    return keys


def build_manifest(
    *,
    doc_id: str,
    source: str,
    sha256: str | None,
    kind: str | None,
    page_count: int,
    pages: list[int],
    page_records: Iterable[PageRecord],
    errors: list[dict[str, Any]],
    models: dict[str, Any],
    options: dict[str, Any],
    started: float,
) -> Manifest:
    """Merge page records into the manifest; status says whether every asked page succeeded."""
    tables: list[TableEntry] = []
    timings: dict[str, float] = {}
    all_errors: list[Any] = list(errors)
    done = []
    for rec in sorted(page_records, key=lambda r: r.page):
        tables.extend(rec.tables)
        all_errors.extend(rec.errors)
        for stage, seconds in rec.timings.items():
            timings[stage] = round(timings.get(stage, 0.0) + seconds, 4)
        if not rec.errors:
            done.append(rec.page)
    if errors or (pages and not done):
        status = "failed"
    elif len(done) < len(pages):
        status = "partial"
    else:
        status = "complete"
    return Manifest.model_validate(
        {
            "manifest_version": MANIFEST_VERSION,
            "doc_id": doc_id,
            "status": status,
            "source": source,
            "sha256": sha256,
            "kind": kind,
            "page_count": page_count,
            "pages": pages,
            "pages_done": done,
            "tables": tables,
            "errors": all_errors,
            "models": models,
            "options": options,
            "timings": timings,
            "wall_seconds": round(time.time() - started, 3),
            "tool_version": f"tablesight {__version__}",
            "finished_at": utc_now_iso(),
        }
    )


def store_grid(
    storage: Storage,
    doc_id: str,
    grid: TableGrid,
    *,
    page: int = 1,
    index: int = 1,
    caption: str = "",
    crop: Image.Image | None = None,
    origin: tuple[int, int] = (10, 10),
    dpi: int = 200,
    page_size: tuple[int, int] = (1700, 2200),
) -> TableEntry:
    """Store a table that starts from a grid rather than from a page (the SQL eval, fixtures):
    every file `write_table` writes and a full record, so readers see what the pipeline would
    have stored. `crop` (default: 20x20 white) sits at `origin` on the page."""
    from worker.core.flags import complexity_flags
    from worker.core.html_out import grid_to_html

    crop = crop if crop is not None else Image.new("RGB", (20, 20), "white")
    x0, y0 = origin
    box = (x0, y0, x0 + crop.width, y0 + crop.height)
    record = table_record(
        doc_id=doc_id,
        page=page,
        index=index,
        dpi=dpi,
        box=TableBox(tuple(float(v) for v in box), 0.99, False),  # type: ignore[arg-type]
        crop_box=box,
        crop_size=crop.size,
        text_source="text-layer",
        grid=grid,
        flags=complexity_flags(grid),
        context=Context(caption, [], None, None) if caption else None,
        page_size=page_size,
        structure=[],
        words=[],
    )
    keys = write_table(storage, crop, grid_to_html(grid), record)
    return manifest_entry(record, keys)
