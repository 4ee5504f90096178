"""Our own extraction of the evaluation documents, cached in a work folder and reused.

Extraction is the slow part of `eval retrieval` (every page of every document through the
models), so each (mode, document) runs once into `<work>/<mode>/` (a LocalStorage) and an
index `<work>/<mode>/index.json` maps the PDF's name to its stored document id. `text` mode
reads the PDF's text layer; `scan` mode ignores it (the page is rasterised and read by OCR,
as a scanned copy would be).
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

MODES = ("text", "scan")
DPI = 144  # the page pixels of the stored tables' boxes
log = logging.getLogger(__name__)


def index_path(work: Path, mode: str) -> Path:
    return work / mode / "index.json"


def load_index(work: Path, mode: str) -> dict[str, str]:
    path = index_path(work, mode)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def extract_all(pdfs: list[Path], work: Path, mode: str, engine: str = "embedded", dpi: int = DPI) -> dict[str, str]:
    """Extract every PDF not yet in the cache of `mode`; returns {pdf name: doc id}."""
    from worker.pipeline import extract_document, load_stages
    from worker.settings import get_settings
    from worker.storage import LocalStorage

    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    index = load_index(work, mode)
    todo = [p for p in pdfs if p.name not in index]
    if not todo:
        return index
    settings = get_settings().replace(engine=engine, device="cpu", text_layer=mode == "text")
    stages = load_stages(settings, tables="detect")
    store = LocalStorage(work / mode)
    for pdf in todo:
        t0 = time.perf_counter()
        manifest: dict[str, Any] = extract_document(pdf, stages=stages, storage=store, settings=settings, dpi=dpi)
        index[pdf.name] = manifest["doc_id"]
        index_path(work, mode).write_text(json.dumps(index, indent=1, sort_keys=True), encoding="utf-8")
        log.info("%s %s: %d table(s) in %.1fs", mode, pdf.name, len(manifest["tables"]), time.perf_counter() - t0)
    return index
