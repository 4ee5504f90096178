"""The naive loop a first user writes, and its settings: the bar the pipeline is measured against.

Page by page: render, detect (batch 1), crop, recognise structure (batch 1), OCR the crop, rebuild,
write; no overlap, torch's default threads, fp32. `tablesight bench` (worker.devtools.bench) runs it
in process, worker.devtools.bench_process as a fresh process; both import it from here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from PIL import Image

from worker.settings import Settings


def naive_settings(base: Settings, default_threads: int, context_capture: bool) -> Settings:
    """What a first user runs: torch at its default threads, fp32, tesseract's default threads, and
    the OCR one call per crop and strip (no page pass)."""
    return base.replace(
        **{
            "ocr_threads": 0,
            "channels_last": False,
            "half_precision": False,
            "torch_threads": default_threads,
            "inference_runtime": "torch",
            "context_capture": context_capture,
        },
        ocr={"page_pass": False},
    )


def run_naive(
    path: Path, stages: Any, storage: Any, settings: Settings, dpi: int, cpu: dict[str, float] | None = None
) -> dict[str, Any]:
    """The naive loop over one document; writes what the pipeline writes. Returns the manifest.

    `cpu` gets each stage's CPU seconds (process and subprocesses): nothing overlaps here, so
    the process's CPU during a stage is that stage's."""
    from worker.contract import Manifest, PageRecord
    from worker.core.detections import padded_box, rotate_words_clockwise, select_tables, words_in_crop
    from worker.inputs import open_document
    from worker.outputs import build_manifest, doc_id_for, manifest_entry, manifest_key, page_key, write_table
    from worker.pipeline.context import table_context
    from worker.pipeline.run import Run
    from worker.pipeline.table import FoundTable, build_table
    from worker.retrieval.logical_tables import attach_logical_tables
    from worker.text_layer import pdf_words

    stage_clock = cpu_clock(cpu if cpu is not None else {})
    started = time.time()
    doc = open_document(path, settings=settings)
    doc_id = doc_id_for(doc.sha256)
    run = Run(doc, doc_id, stages, storage, settings, dpi)
    records = []
    for page in range(1, doc.page_count + 1):
        timings: dict[str, float] = {}
        with stage_clock(timings, "render"):
            image = doc.render(page, dpi)
        with stage_clock(timings, "text_layer"):
            words = pdf_words(doc, page, dpi) if settings.inputs.text_layer else []
        with stage_clock(timings, "detection"):
            boxes = select_tables(
                stages.detector.predict([image], 1)[0],
                threshold=settings.detection.threshold,
                rotated_threshold=settings.detection.rotated_threshold,
                merge_iou=settings.detection.merge_iou,
                page_size=image.size,
            )
        tables = []
        for index, box in enumerate(boxes, 1):
            crop_box = padded_box(
                box.bbox, image.size, settings.detection.crop_padding, settings.detection.crop_padding_min_px
            )
            crop, inside = image.crop(crop_box), words_in_crop(words, crop_box)
            if box.rotated:
                crop = crop.transpose(Image.Transpose.ROTATE_270)
                inside = rotate_words_clockwise(inside, crop_box[3] - crop_box[1])
            with stage_clock(timings, "structure"):
                objects = stages.structure.predict([crop], 1)[0]
            source = "text-layer"
            if not inside:
                source = "ocr"
                with stage_clock(timings, "ocr"):
                    inside = stages.ocr(crop)
            table = FoundTable(page, index, box, crop_box, crop, inside, source)
            if settings.context.capture and not box.rotated:
                with stage_clock(timings, "context"):
                    table.context = table_context(run, box.bbox, image, words, [b.bbox for b in boxes])
            with stage_clock(timings, "reconstruct"):
                record, html = build_table(run, table, objects, image.size)
            with stage_clock(timings, "storage"):
                keys = write_table(storage, crop, html, record)
            tables.append(manifest_entry(record, keys))
        rec = PageRecord(page=page, tables=tables, timings={k: round(v, 4) for k, v in timings.items()})
        with stage_clock(timings, "storage"):
            storage.put_json(page_key(doc_id, page), rec.dump())
        records.append(rec)
    manifest = build_manifest(
        doc_id=doc_id,
        source=path.name,
        sha256=doc.sha256,
        kind=doc.kind,
        page_count=doc.page_count,
        pages=list(range(1, doc.page_count + 1)),
        page_records=records,
        errors=[],
        models=stages.models(),
        options={"dpi": dpi, "pages": None, "tables": "detect", "engine": stages.engine},
        started=started,
    )
    data = manifest.dump()
    if settings.context.link_continued_tables:
        data = Manifest.model_validate(
            attach_logical_tables(data, storage, tolerance=settings.context.continuation_column_tolerance)
        ).dump()
    storage.put_json(manifest_key(doc_id), data)
    return data


def cpu_clock(cpu: dict[str, float]) -> Callable[[dict[str, float], str], AbstractContextManager[None]]:
    """A stage clock (wall time into `timings`) that also adds the stage's CPU seconds to `cpu`."""

    @contextmanager
    def clock(timings: dict[str, float], stage: str) -> Iterator[None]:
        c0, t0 = cpu_seconds(), time.perf_counter()
        try:
            yield
        finally:
            timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - t0
            cpu[stage] = cpu.get(stage, 0.0) + cpu_seconds() - c0

    return clock


def cpu_seconds() -> float:
    """CPU time used so far by this process and its waited-for children: less sensitive to other
    load on the host than wall time, and what a dedicated worker's cores would have to supply."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
