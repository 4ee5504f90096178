"""Document -> pages -> tables -> outputs. Stages (models, OCR) are passed in, never imported here.

Pages are processed in small groups so detection and structure run batched while memory
stays bounded by the group, not the document. Every page writes its own record; the
manifest is built from the records (worker.outputs), so the queue reuses `process_pages`.
"""

from __future__ import annotations

import hashlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from PIL import Image

from worker.core.captions import PAGE_MARGIN, Context, capture_context
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
from worker.core.serialise import TableContext, rows_text, serialisations
from worker.core.token_grid import token_grid, tokens_from_raw
from worker.core.types import StructureObject, Word
from worker.errors import InputError, TablesightError
from worker.inputs import Document, open_document, parse_page_ranges
from worker.logical_tables import attach_logical_tables
from worker.outputs import build_manifest, doc_id_for, manifest_key, page_key, table_id, write_table
from worker.overlap import Workers, cpu_workers, in_order, timed, torch_threads
from worker.settings import Settings
from worker.storage.base import Storage, StorageError
from worker.text_layer import pdf_words

logger = logging.getLogger(__name__)
_PDFIUM = threading.Lock()  # pdfium is not thread-safe: text-layer reads from workers take turns


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
    threads: Callable[[int], None] | None = None  # sets torch's thread count (see process_pages)
    engine: str = "tatr"  # what `structure` emits: tatr objects, or embedded tokens with cell boxes

    def models(self) -> dict[str, Any]:
        out = {"structure": _model_entry(self.structure)}
        if self.detector is not None:
            out["detection"] = _model_entry(self.detector)
        return out


def _model_entry(model: Predictor) -> dict[str, Any]:
    entry = {"id": model.model_id, "revision": model.revision}
    sha256 = getattr(model, "sha256", None)  # the embedded engine's weights are pinned by hash
    return entry | ({"sha256": sha256} if sha256 else {})


def load_stages(settings: Settings, tables: str = "detect", engine: str | None = None) -> Stages:
    """Load the models of the engine (`engine` or ENGINE; lazily imported: torch lives in models/)."""
    from models.engine import EMBEDDED, choose_engine
    from models.ocr import ocr_words

    def ocr(image: Image.Image) -> list[Word]:
        # ruling lines confuse tesseract: erase runs longer than ~1/5 inch at this dpi
        return ocr_words(
            image,
            lang=settings.ocr_lang,
            psm=settings.ocr_psm,
            rule_min_px=max(10, settings.dpi // 5),
            threads=settings.ocr_threads or None,
        )

    engine = engine or settings.engine
    if engine == "auto":
        engine, _ = choose_engine(settings)
    if engine == EMBEDDED:
        from models import embedded

        threads = torch_threads(settings)  # onnxruntime's per-call threads, like torch's per lane
        detector_ = embedded.load_detector(settings, threads) if tables == "detect" else None
        return Stages(embedded.load_structure(settings, threads), detector_, ocr, engine=EMBEDDED)
    from models.device import configure_threads
    from models.table_transformer import load_detector, load_structure

    detector = load_detector(settings) if tables == "detect" else None
    stages = Stages(structure=load_structure(settings), detector=detector, ocr=ocr, threads=configure_threads)
    configure_threads(torch_threads(settings))
    return stages


@dataclass
class _Pending:
    page: int
    index: int
    box: TableBox
    crop_box: tuple[int, int, int, int]
    crop: Image.Image
    words: list[Word] | Future[tuple[list[Word], float]]  # a Future while OCR runs on a worker
    text_source: str
    context: Context | Future[tuple[Context, float]] | None = None


@dataclass
class PageResult:
    page: int
    tables: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        return {
            "page": self.page,
            "tables": self.tables,
            "errors": self.errors,
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
        }


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


def process_pages(
    doc: Document,
    pages: list[int],
    *,
    doc_id: str,
    stages: Stages,
    storage: Storage,
    settings: Settings,
    dpi: int | None = None,
    record_extra: dict[str, Any] | None = None,
) -> Iterator[PageResult]:
    """Yield one PageResult per page, after its tables and page record are written.

    `record_extra` is merged into each stored page record (the queue marks which job and
    options wrote it, so a re-run can tell its own finished pages from stale ones).

    Throughput (issue 7): up to PIPELINE_LANES page groups are in flight at once, and pages
    are rendered and crops OCR'd on worker threads (subprocesses: they run beside torch), so
    stage timings overlap and can sum to more than the wall time.
    """
    dpi = dpi or settings.dpi
    lanes = settings.pipeline_lanes
    size = max(1, min(settings.detection_batch_size, math.ceil(len(pages) / lanes)))  # every lane gets pages
    groups = [pages[start : start + size] for start in range(0, len(pages), size)]
    busy = min(lanes, len(groups)) or 1
    if stages.threads is not None:  # the cores shared out among the lanes that will be busy
        stages.threads(torch_threads(settings, lanes=busy))
    with Workers(cpu_workers(settings, lanes=busy)) as workers:
        yield from in_order(
            groups,
            lambda group: _process_group(
                doc, group, doc_id, stages, storage, settings, dpi, record_extra or {}, workers
            ),
            lanes,
        )


def _load_page(
    doc: Document, page: int, dpi: int, settings: Settings
) -> tuple[Image.Image, list[Word], dict[str, float]]:
    """Render one page and read its text layer (on a worker: pdftoppm is a subprocess)."""
    timings: dict[str, float] = {}
    with _Clock(timings).stage("render"):
        image = doc.render(page, dpi)
    with _Clock(timings).stage("text_layer"):
        if doc.kind == "pdf" and settings.text_layer:
            with _PDFIUM:
                return image, pdf_words(doc, page, dpi), timings
        return image, [], timings


def _process_group(
    doc: Document,
    pages: list[int],
    doc_id: str,
    stages: Stages,
    storage: Storage,
    settings: Settings,
    dpi: int,
    record_extra: dict[str, Any],
    workers: Workers,
) -> list[PageResult]:
    results = {p: PageResult(p) for p in pages}
    shared: dict[str, float] = {}
    images: dict[int, Image.Image] = {}
    page_words: dict[int, list[Word]] = {}
    loads = {p: workers.submit(_load_page, doc, p, dpi, settings) for p in pages}
    for p in pages:
        try:
            images[p], page_words[p], spent = loads[p].result()
            for stage, seconds in spent.items():
                results[p].timings[stage] = results[p].timings.get(stage, 0.0) + seconds
        except TablesightError as exc:
            results[p].errors.append({"page": p, "reason": str(exc)})
    ok = [p for p in pages if p in images]
    with _Clock(shared).stage("detection"):
        if stages.detector is None:
            boxes = {p: [TableBox((0.0, 0.0, float(images[p].width), float(images[p].height)), 1.0, False)] for p in ok}
        else:
            preds = stages.detector.predict([images[p] for p in ok], settings.detection_batch_size)
            boxes = {
                p: select_tables(
                    pred,
                    threshold=settings.embedded_detection_threshold
                    if stages.engine == "embedded"
                    else settings.detection_threshold,
                    rotated_threshold=settings.detection_rotated_threshold,
                    merge_iou=settings.detection_merge_iou,
                    page_size=images[p].size,
                )
                for p, pred in zip(ok, preds)
            }
    pending: list[_Pending] = []
    for p in ok:
        for i, box in enumerate(boxes[p], 1):
            pending.append(_crop(p, i, box, images[p], page_words[p], stages, settings, workers))
            if settings.context_capture and stages.detector is not None and not box.rotated:
                pending[-1].context = workers.submit(
                    timed,
                    _context,
                    box.bbox,
                    images[p],
                    page_words[p],
                    [b.bbox for b in boxes[p]],
                    stages,
                    settings,
                    dpi,
                )
    with _Clock(shared).stage("structure"):
        structures = stages.structure.predict([t.crop for t in pending], settings.structure_batch_size)
    _split_time(shared, [results[p] for p in ok], "detection")
    _split_time(shared, [results[t.page] for t in pending], "structure")
    for t, objs in zip(pending, structures):
        res = results[t.page]
        clock = _Clock(res.timings)
        _settle(t, res.timings)
        with clock.stage("reconstruct"):
            record, html = _table_record(t, objs, doc_id, settings, dpi, images[t.page].size, stages.engine)
        with clock.stage("storage"):
            ser = record["serialisations"]
            keys = write_table(
                storage,
                doc_id,
                record["table_id"],
                t.crop,
                html,
                record,
                texts={"md": ser["markdown"] + "\n", "rows": rows_text(ser)},
            )
        res.tables.append(_manifest_entry(record, keys))
    out = []
    for p in pages:
        with _Clock(results[p].timings).stage("storage"):
            storage.put_json(page_key(doc_id, p), {**results[p].record(), **record_extra})
        out.append(results[p])
    return out


def _crop(
    page: int,
    index: int,
    box: TableBox,
    image: Image.Image,
    words: list[Word],
    stages: Stages,
    settings: Settings,
    workers: Workers,
) -> _Pending:
    """The table's crop and its words; OCR, when needed, starts on a worker (see `_settle`)."""
    if stages.detector is None:
        crop_box = (0, 0, image.width, image.height)
    else:
        margin = settings.embedded_crop_padding_px if stages.engine == "embedded" else None
        if margin is None:
            crop_box = padded_box(box.bbox, image.size, settings.crop_padding, settings.crop_padding_min_px)
        else:
            crop_box = padded_box(box.bbox, image.size, 0.0, margin)
    crop = image.crop(crop_box)
    inside = words_in_crop(words, crop_box)
    if box.rotated:
        crop = crop.transpose(Image.Transpose.ROTATE_270)  # 90° clockwise: sideways text upright
        inside = rotate_words_clockwise(inside, crop_box[3] - crop_box[1])
    if inside:
        return _Pending(page, index, box, crop_box, crop, inside, "text-layer")
    return _Pending(page, index, box, crop_box, crop, workers.submit(timed, stages.ocr, crop), "ocr")


def _settle(t: _Pending, timings: dict[str, float]) -> None:
    """Wait for the table's OCR and context reads; their worker time goes to its page."""
    for attr, stage in (("words", "ocr"), ("context", "context")):
        value = getattr(t, attr)
        if isinstance(value, Future):
            result, seconds = value.result()
            setattr(t, attr, result)
            timings[stage] = timings.get(stage, 0.0) + seconds


def _context(
    bbox: tuple[float, float, float, float],
    image: Image.Image,
    words: list[Word],
    tables: list[tuple[float, float, float, float]],
    stages: Stages,
    settings: Settings,
    dpi: int,
) -> Context:
    """Caption and notes of one table: from the text layer, else by OCR of the page strips
    just above and below it (the whole page would cost a full-page OCR per page)."""
    w, h = image.size
    if words:
        return capture_context(
            words,
            bbox,
            (w, h),
            other_tables=tables,
            max_gap=settings.context_max_gap,
            caption_max_lines=settings.caption_max_lines,
            notes_max_lines=settings.notes_max_lines,
        )
    strip = settings.context_strip_inches * dpi
    x0, x1 = max(0, int(bbox[0] - 0.05 * w)), min(w, int(bbox[2] + 0.05 * w + 1))
    top = max(0, int(bbox[1] - strip))
    top = 0 if top <= PAGE_MARGIN * h else top
    bottom = min(h, int(bbox[3] + strip + 1))
    bottom = h if bottom >= (1 - PAGE_MARGIN) * h else bottom
    found: list[Word] = []
    for y0, y1 in ((top, int(bbox[1])), (int(bbox[3] + 1), bottom)):
        if y1 - y0 >= 8 and x1 - x0 >= 8:
            found += [
                Word(wd.text, (wd.bbox[0] + x0, wd.bbox[1] + y0, wd.bbox[2] + x0, wd.bbox[3] + y0), wd.confidence)
                for wd in stages.ocr(image.crop((x0, y0, x1, y1)))
            ]
    return capture_context(
        found,
        bbox,
        (w, h),
        other_tables=tables,
        seen=(top, bottom),
        max_gap=settings.context_max_gap,
        caption_max_lines=settings.caption_max_lines,
        notes_max_lines=settings.notes_max_lines,
    )


def _table_record(
    t: _Pending,
    objs: list[dict[str, Any]],
    doc_id: str,
    settings: Settings,
    dpi: int,
    page_size: tuple[int, int],
    engine: str = "tatr",
) -> tuple[dict[str, Any], str]:
    tid = table_id(t.page, t.index)
    if engine == "embedded":  # structure tokens with cell boxes
        tokens = tokens_from_raw(objs)
        grid = token_grid(tokens, t.words, t.crop.size)
        replay = payload(t.crop.size, [], t.words, image=f"{tid}.png", tokens=tokens)
    else:
        objects = [StructureObject(o["label"], float(o["score"]), tuple(o["bbox"])) for o in objs]
        grid = reconstruct(objects, t.words, t.crop.size, settings.thresholds(), settings.duplicate_overlap)
        replay = payload(t.crop.size, objects, t.words, image=f"{tid}.png")
    html = grid_to_html(grid)
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
        "flags": complexity_flags(grid, rotated=t.box.rotated, words=t.words, rules=settings.flag_rules()),
        "page_size": list(page_size),
        "context": t.context.to_dict() if t.context else None,
        "serialisations": serialisations(
            grid,
            TableContext(t.context.caption if t.context else "", list(t.context.notes) if t.context else [], [t.page]),
            table_id=tid,
        ),
        "structure": replay,
    }
    return record, html


def _manifest_entry(record: dict[str, Any], keys: dict[str, str]) -> dict[str, Any]:
    grid = record["grid"]
    return {
        "table_id": record["table_id"],
        "page": record["page"],
        "bbox": record["bbox"],
        "n_rows": grid["n_rows"],
        "n_cols": grid["n_cols"],
        "confidence": grid["confidence"],
        "text_source": record["text_source"],
        "is_complex": record["flags"]["is_complex"],
        "needs_vision": record["flags"]["needs_vision"],
        "score": record["flags"]["score"],
        "reasons": record["flags"]["reasons"],
        "files": keys,
    }


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
) -> dict[str, Any]:
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
        storage.put_json(manifest_key(doc_id), manifest)
        return manifest
    doc_id = doc_id_for(doc.sha256)
    if on_start:
        on_start(len(page_list))
    active = stages() if callable(stages) else stages
    options["tables"] = "detect" if active.detector is not None else "page"
    options["engine"] = active.engine
    records: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    try:
        for result in process_pages(
            doc, page_list, doc_id=doc_id, stages=active, storage=storage, settings=settings, dpi=dpi
        ):
            records.append(result.record())
            if on_page:
                on_page(result)
    except StorageError:
        raise  # the store itself is broken: no manifest can be written there either
    except Exception as exc:  # a bug or a model failure must not take the other documents down
        logger.exception("document %s failed", doc_id)
        errors.append({"reason": f"internal error: {type(exc).__name__}: {exc}"})
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
    if settings.link_continued_tables:
        manifest = attach_logical_tables(manifest, storage, tolerance=settings.continuation_column_tolerance)
    storage.put_json(manifest_key(doc_id), manifest)
    return manifest
