"""Document -> pages -> tables -> outputs. Stages (models, OCR) are passed in, never imported here.

Pages are processed in small groups so detection and structure run batched while memory
stays bounded by the group, not the document. Every page writes its own record; the
manifest is built from the records (worker.outputs), so the queue reuses `process_pages`.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from PIL import Image

from worker.core.detections import (
    TableBox,
    padded_box,
    rotate_words_clockwise,
    select_tables,
    words_in_crop,
)
from worker.core.flags import complexity_flags
from worker.core.html_out import grid_to_html
from worker.core.reconstruct import reconstruct
from worker.core.replay import payload
from worker.core.serialise import serialisations
from worker.core.types import StructureObject, Word
from worker.errors import InputError, TablesightError
from worker.inputs import Document, open_document, parse_page_ranges
from worker.outputs import build_manifest, manifest_key, page_key, table_id, write_table
from worker.settings import Settings
from worker.storage.base import Storage, StorageError
from worker.text_layer import pdf_words

logger = logging.getLogger(__name__)


class Predictor(Protocol):
    model_id: str
    revision: str | None

    def predict(self, images: list[Image.Image], batch_size: int | None = None) -> list[list[dict[str, Any]]]: ...


@dataclass
class Stages:
    """The model-backed parts; tests and the bench pass their own."""

    structure: Predictor
    detector: Predictor | None  # None: every page is one table (`--tables page`)
    ocr: Callable[[Image.Image], list[Word]]

    def models(self) -> dict[str, Any]:
        out = {"structure": {"id": self.structure.model_id, "revision": self.structure.revision}}
        if self.detector is not None:
            out["detection"] = {"id": self.detector.model_id, "revision": self.detector.revision}
        return out


def load_stages(settings: Settings, tables: str = "detect") -> Stages:
    """Load the models named by the settings (lazily imported: torch lives in models/)."""
    from models.ocr import ocr_words
    from models.table_transformer import load_detector, load_structure

    def ocr(image: Image.Image) -> list[Word]:
        return ocr_words(image, lang=settings.ocr_lang, psm=settings.ocr_psm)

    detector = load_detector(settings) if tables == "detect" else None
    return Stages(structure=load_structure(settings), detector=detector, ocr=ocr)


@dataclass
class _Pending:
    page: int
    index: int
    box: TableBox
    crop_box: tuple[int, int, int, int]
    crop: Image.Image
    words: list[Word]
    text_source: str


@dataclass
class PageResult:
    page: int
    tables: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        return {"page": self.page, "tables": self.tables, "errors": self.errors,
                "timings": {k: round(v, 4) for k, v in self.timings.items()}}


class _Clock:
    def __init__(self, timings: dict[str, float]) -> None:
        self.timings = timings

    def stage(self, name: str) -> _Timer:
        return _Timer(self.timings, name)


class _Timer:
    def __init__(self, timings: dict[str, float], name: str) -> None:
        self.timings, self.name = timings, name

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.timings[self.name] = self.timings.get(self.name, 0.0) + time.perf_counter() - self.t0


def _split_time(timings: dict[str, float], results: list[PageResult], stage: str) -> None:
    """A batched stage's time is shared equally by the pages of the batch."""
    if stage in timings and results:
        share = timings.pop(stage) / len(results)
        for r in results:
            r.timings[stage] = r.timings.get(stage, 0.0) + share


def process_pages(doc: Document, pages: list[int], *, doc_id: str, stages: Stages, storage: Storage,
                  settings: Settings, dpi: int | None = None) -> Iterator[PageResult]:
    """Yield one PageResult per page, after its tables and page record are written."""
    dpi = dpi or settings.dpi
    group = max(1, settings.detection_batch_size)
    for start in range(0, len(pages), group):
        yield from _process_group(doc, pages[start:start + group], doc_id, stages, storage, settings, dpi)


def _process_group(doc: Document, pages: list[int], doc_id: str, stages: Stages, storage: Storage,
                   settings: Settings, dpi: int) -> list[PageResult]:
    results = {p: PageResult(p) for p in pages}
    shared: dict[str, float] = {}
    images: dict[int, Image.Image] = {}
    page_words: dict[int, list[Word]] = {}
    for p in pages:
        clock = _Clock(results[p].timings)
        try:
            with clock.stage("render"):
                images[p] = doc.render(p, dpi)
            with clock.stage("text_layer"):
                page_words[p] = pdf_words(doc, p, dpi) if doc.kind == "pdf" and settings.text_layer else []
        except TablesightError as exc:
            results[p].errors.append({"page": p, "reason": str(exc)})
    ok = [p for p in pages if p in images]
    with _Clock(shared).stage("detection"):
        if stages.detector is None:
            boxes = {p: [TableBox((0.0, 0.0, float(images[p].width), float(images[p].height)), 1.0, False)]
                     for p in ok}
        else:
            preds = stages.detector.predict([images[p] for p in ok], settings.detection_batch_size)
            boxes = {p: select_tables(pred, threshold=settings.detection_threshold,
                                      rotated_threshold=settings.detection_rotated_threshold,
                                      merge_iou=settings.detection_merge_iou, page_size=images[p].size)
                     for p, pred in zip(ok, preds)}
    pending: list[_Pending] = []
    for p in ok:
        for i, box in enumerate(boxes[p], 1):
            pending.append(_crop(p, i, box, images[p], page_words[p], stages, settings, results[p].timings))
    with _Clock(shared).stage("structure"):
        structures = stages.structure.predict([t.crop for t in pending], settings.structure_batch_size)
    _split_time(shared, [results[p] for p in ok], "detection")
    _split_time(shared, [results[t.page] for t in pending], "structure")
    for t, objs in zip(pending, structures):
        res = results[t.page]
        clock = _Clock(res.timings)
        with clock.stage("reconstruct"):
            record, html = _table_record(t, objs, doc_id, settings, dpi)
        with clock.stage("storage"):
            keys = write_table(storage, doc_id, record["table_id"], t.crop, html, record)
        res.tables.append(_manifest_entry(record, keys))
    out = []
    for p in pages:
        with _Clock(results[p].timings).stage("storage"):
            storage.put_json(page_key(doc_id, p), results[p].record())
        out.append(results[p])
    return out


def _crop(page: int, index: int, box: TableBox, image: Image.Image, words: list[Word], stages: Stages,
          settings: Settings, timings: dict[str, float]) -> _Pending:
    if stages.detector is None:
        crop_box = (0, 0, image.width, image.height)
    else:
        crop_box = padded_box(box.bbox, image.size, settings.crop_padding, settings.crop_padding_min_px)
    crop = image.crop(crop_box)
    inside = words_in_crop(words, crop_box)
    if box.rotated:
        crop = crop.transpose(Image.Transpose.ROTATE_270)  # 90° clockwise: sideways text upright
        inside = rotate_words_clockwise(inside, crop_box[3] - crop_box[1])
    source = "text-layer"
    if not inside:
        source = "ocr"
        with _Clock(timings).stage("ocr"):
            inside = stages.ocr(crop)
    return _Pending(page, index, box, crop_box, crop, inside, source)


def _table_record(t: _Pending, objs: list[dict[str, Any]], doc_id: str, settings: Settings,
                  dpi: int) -> tuple[dict[str, Any], str]:
    objects = [StructureObject(o["label"], float(o["score"]), tuple(o["bbox"])) for o in objs]
    grid = reconstruct(objects, t.words, t.crop.size, settings.thresholds(), settings.duplicate_overlap)
    html = grid_to_html(grid)
    tid = table_id(t.page, t.index)
    record = {
        "doc_id": doc_id,
        "table_id": tid,
        "page": t.page,
        "dpi": dpi,
        "bbox": [round(v, 2) for v in t.box.bbox],
        "crop_box": list(t.crop_box),
        "detection_score": round(t.box.score, 4),
        "rotated": t.box.rotated,
        "text_source": t.text_source,
        "grid": grid.to_dict(),
        "flags": complexity_flags(grid, rotated=t.box.rotated),
        "serialisations": serialisations(grid),
        "structure": payload(t.crop.size, objects, t.words, image=f"{tid}.png"),
    }
    return record, html


def _manifest_entry(record: dict[str, Any], keys: dict[str, str]) -> dict[str, Any]:
    grid = record["grid"]
    return {"table_id": record["table_id"], "page": record["page"], "bbox": record["bbox"],
            "n_rows": grid["n_rows"], "n_cols": grid["n_cols"], "confidence": grid["confidence"],
            "text_source": record["text_source"], "is_complex": record["flags"]["is_complex"],
            "reasons": record["flags"]["reasons"], "files": keys}


def _bad_input_doc_id(path: Path) -> str:
    """The content hash when the file can be read at all, else one derived from its path."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        return doc_id_for(digest.hexdigest())
    except OSError:
        return "x" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:15]


def doc_id_for(sha256: str) -> str:
    return sha256[:16]


def extract_document(path: Path, *, stages: Stages | Callable[[], Stages], storage: Storage,
                     settings: Settings, pages: str | None = None, dpi: int | None = None,
                     on_page: Callable[[PageResult], None] | None = None,
                     on_start: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Run one document in process and write its manifest; bad input gives a failed manifest."""
    started = time.time()
    dpi = dpi or settings.dpi
    options = {"dpi": dpi, "pages": pages, "tables": "detect"}
    try:
        doc = open_document(path, settings=settings)
        page_list = parse_page_ranges(pages, doc.page_count)
    except (InputError, ValueError) as exc:
        reason = exc.reason if isinstance(exc, InputError) else str(exc)
        doc_id = _bad_input_doc_id(path)
        manifest = build_manifest(doc_id=doc_id, source=path.name, sha256=None, kind=None, page_count=0,
                                  pages=[], page_records=[], errors=[{"reason": reason}], models={},
                                  options=options, started=started)
        storage.put_json(manifest_key(doc_id), manifest)
        return manifest
    doc_id = doc_id_for(doc.sha256)
    if on_start:
        on_start(len(page_list))
    active = stages() if callable(stages) else stages
    options["tables"] = "detect" if active.detector is not None else "page"
    records: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    try:
        for result in process_pages(doc, page_list, doc_id=doc_id, stages=active, storage=storage,
                                    settings=settings, dpi=dpi):
            records.append(result.record())
            if on_page:
                on_page(result)
    except StorageError:
        raise  # the store itself is broken: no manifest can be written there either
    except Exception as exc:  # a bug or a model failure must not take the other documents down
        logger.exception("document %s failed", doc_id)
        errors.append({"reason": f"internal error: {type(exc).__name__}: {exc}"})
    manifest = build_manifest(doc_id=doc_id, source=path.name, sha256=doc.sha256, kind=doc.kind,
                              page_count=doc.page_count, pages=page_list, page_records=records,
                              errors=errors, models=active.models(), options=options, started=started)
    storage.put_json(manifest_key(doc_id), manifest)
    return manifest
