"""One document in process: open and check it, run its pages, write its manifest.

Bad input never raises: it ends in a failed manifest with the reason, so a batch of files
goes on past a broken one.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from worker.contract import Manifest, PageRecord
from worker.errors import InputError, reason_for
from worker.inputs import open_document, parse_page_ranges
from worker.outputs import build_manifest, doc_id_for, manifest_key
from worker.overlap import DocumentSlot
from worker.pipeline.pages import process_pages
from worker.pipeline.run import PageResult
from worker.pipeline.stages import Stages
from worker.retrieval.logical_tables import attach_logical_tables
from worker.settings import Settings
from worker.storage.base import Storage, StorageError

logger = logging.getLogger(__name__)


def extract_document(
    path: Path,
    *,
    stages: Stages | Callable[[], Stages],
    storage: Storage,
    settings: Settings,
    pages: str | None = None,
    dpi: int | None = None,
    on_page: Callable[[PageResult], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    slot: DocumentSlot | None = None,
) -> dict[str, Any]:
    """Run one document in process and write its manifest; returns the manifest as stored.

    `stages` may be a factory, so that models load only once an input proved readable. `slot`:
    its place among documents run side by side (worker.pipeline.documents), whose lanes it waits for.
    """
    started = time.time()
    dpi = dpi or settings.inputs.dpi
    options: dict[str, Any] = {"dpi": dpi, "pages": pages, "tables": "detect"}
    try:
        doc = open_document(path, settings=settings)
        page_list = parse_page_ranges(pages, doc.page_count)
    except (InputError, ValueError) as exc:
        reason = exc.reason if isinstance(exc, InputError) else str(exc)
        doc_id = bad_input_doc_id(path)
        manifest = build_manifest(
            doc_id=doc_id,
            source=path.name,
            sha256=None,
            kind=None,
            page_count=0,
            pages=[],
            page_records=[],
            errors=[{"reason": reason}],
            models={},
            options=options,
            started=started,
        )
        return _store(storage, manifest)
    doc_id = doc_id_for(doc.sha256)
    if slot is not None:
        slot.take(len(page_list))
    if on_start:
        on_start(len(page_list))
    active = stages() if callable(stages) else stages
    options["tables"] = "detect" if active.detector is not None else "page"
    options["engine"] = active.engine
    records: list[PageRecord] = []
    errors: list[dict[str, Any]] = []
    try:
        for result in process_pages(
            doc,
            page_list,
            doc_id=doc_id,
            stages=active,
            storage=storage,
            settings=settings,
            dpi=dpi,
            slot=slot,
        ):
            records.append(result.record())
            if on_page:
                on_page(result)
    except StorageError:
        raise  # the store itself is broken: no manifest can be written there either
    except Exception as exc:  # a bug or a model failure must not take the other documents down
        logger.exception("document %s failed", doc_id)
        errors.append({"reason": reason_for(exc)})
    manifest = build_manifest(
        doc_id=doc_id,
        source=path.name,
        sha256=doc.sha256,
        kind=doc.kind,
        page_count=doc.page_count,
        pages=page_list,
        page_records=records,
        errors=errors,
        models=active.models(),
        options=options,
        started=started,
    )
    if settings.context.link_continued_tables:
        linked = attach_logical_tables(
            manifest.dump(), storage, tolerance=settings.context.continuation_column_tolerance
        )
        manifest = Manifest.model_validate(linked)
    return _store(storage, manifest)


def _store(storage: Storage, manifest: Manifest) -> dict[str, Any]:
    data = manifest.dump()
    storage.put_json(manifest_key(manifest.doc_id), data)
    return data


def bad_input_doc_id(path: Path) -> str:
    """The content hash when the file can be read at all, else one derived from its path."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        return doc_id_for(digest.hexdigest())
    except OSError:
        return "x" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:15]
