"""Pages -> tables -> stored outputs, a group of pages at a time.

Pages go in small groups so detection and structure run batched while memory stays bounded
by the group, not the document. Up to PIPELINE_LANES groups are in flight at once, and pages
are rendered and crops OCR'd on worker threads (subprocesses: they run beside torch), so
stage timings overlap and can sum to more than the wall time. Every page writes its own
record; the manifest is built from the records, so the queue reuses `process_pages`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from PIL import Image

from worker.contract import ErrorEntry
from worker.contract.page_transform import PageTransformRecord
from worker.core.aligned_text import parts_into_regions, reconcile_regions, under_thin_boxes
from worker.core.detections import TableBox, select_tables
from worker.core.geometry import clip
from worker.core.page_transform import PageTransform, invert, unbound_box
from worker.core.ruled_boxes import held_grid, reconcile, with_uncovered
from worker.core.types import BBox, Word
from worker.errors import TablesightError
from worker.heap import release_freed_memory
from worker.inputs import Document
from worker.outputs import manifest_entry, page_key, write_table
from worker.overlap import DocumentSlot, SubprocessPool, in_order, subprocess_threads, timed, torch_threads
from worker.pipeline.containment import contained, page_failure, table_failure
from worker.pipeline.context import table_context
from worker.pipeline.normalise import detector_input, normalise
from worker.pipeline.page_ocr import PageRead
from worker.pipeline.run import PDFIUM_LOCK, PageResult, Run, split_time, stage_clock
from worker.pipeline.stages import Stages
from worker.pipeline.table import FoundTable, build_table, crop_table, settle, table_crop_box
from worker.settings import Settings
from worker.storage.base import Storage
from worker.text_layer import pdf_words

Page = tuple[Image.Image, list[Word]]  # a rendered page and its text-layer words (page pixels)


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
    slot: DocumentSlot | None = None,
) -> Iterator[PageResult]:
    """Yield one PageResult per page, in order, after its tables and page record are written.

    `slot`: the document's place among those run side by side (worker.pipeline.documents), which
    gives its lanes and the shared pool, has set the model threads for every lane in flight, and is
    asked before each page group whether the run is to stop."""
    dpi = dpi or settings.inputs.dpi
    run = Run(doc, doc_id, stages.at_dpi(dpi), storage, settings, dpi, record_extra=record_extra or {})
    lanes = slot.held if slot is not None else settings.lanes.pipeline_lanes
    size = max(1, min(group_pages(stages, settings), math.ceil(len(pages) / lanes)))  # every lane gets pages
    groups = [pages[start : start + size] for start in range(0, len(pages), size)]
    if slot is not None:
        run.pool = slot.pool

        def checked(group: list[int]) -> list[PageResult]:
            slot.check()
            return contained_group(run, group)

        yield from in_order(groups, checked, lanes)
        return
    busy = min(lanes, len(groups)) or 1
    if stages.threads is not None:  # the cores shared out among the lanes that will be busy
        stages.threads(torch_threads(settings, lanes=busy))
    with SubprocessPool(pool_threads(stages, settings, busy)) as own:
        run.pool = own
        yield from in_order(groups, lambda group: contained_group(run, group), lanes)


def pool_threads(stages: Stages, settings: Settings, lanes: int) -> int:
    """The render and OCR pool's threads beside `lanes` busy lanes, for these stages' engine and OCR."""
    ocr = getattr(stages.ocr_engine, "name", None)
    return subprocess_threads(settings, lanes=lanes, engine=stages.engine, ocr=ocr)


def group_pages(stages: Stages, settings: Settings) -> int:
    """Pages a group holds: DETECTION_BATCH_SIZE, or where both models cap their batch (on CPU:
    MODELS__CPU_BATCH_SIZE; the layout detector's export takes one page) the larger cap. A
    bigger group then buys no batching and only holds more pages at once: with groups of 4 a
    long document had 8 pages in flight against 2 for a 2-page one (docs/speed.md, Memory)."""
    caps = [getattr(model, "max_batch", None) for model in (stages.detector, stages.structure) if model is not None]
    if caps and all(caps):
        return max(1, min(settings.models.detection_batch_size, max(c for c in caps if c)))
    return settings.models.detection_batch_size


def contained_group(run: Run, pages: list[int]) -> list[PageResult]:
    """`process_group`, with a failure kept to its page (worker.pipeline.containment): a group
    that fails runs again page by page, and a page that fails alone is stored with its reason."""
    try:
        return process_group(run, pages)
    except Exception as exc:
        if not contained(exc):
            raise
        if len(pages) > 1:
            return [result for p in pages for result in contained_group(run, [p])]
        failed = PageResult(pages[0], errors=[page_failure(pages[0], exc)])
        write_page_record(run, failed)
        return [failed]


def process_group(run: Run, pages: list[int]) -> list[PageResult]:
    """Render, detect, crop, recognise, rebuild and store one group of pages."""
    results = {p: PageResult(p) for p in pages}
    loaded = load_pages(run, pages, results)
    shared: dict[str, float] = {}
    with stage_clock(shared, "detection"):
        views = detector_views(run, loaded, results)
        boxes = detect_tables(run, loaded, views)
        if run.stages.detector is not None:
            second_pass(run, loaded, boxes, results)
            undetected = {p for p, found in boxes.items() if not found}
            ruled_tables(run, loaded, boxes, results, views)
            aligned_tables(run, loaded, boxes, results, views, undetected)
            dotted_rules_pass(run, loaded, boxes, results, views)
            prose_beyond_rules(run, loaded, boxes, results, views)
        del views  # the cleaned pages are not needed past detection (peak memory, docs/speed.md)
    found = [table for p in loaded for table in find_tables(run, p, loaded[p], boxes[p])]
    with stage_clock(shared, "structure"):
        inputs = [t.model_input for t in found]
        structures = run.stages.structure.predict(inputs, run.settings.models.structure_batch_size)
    split_time(shared, [results[p] for p in loaded], "detection")
    split_time(shared, [results[t.page] for t in found], "structure")
    for table, objects in zip(found, structures):
        store_table(run, table, objects, loaded[table.page][0].size, results[table.page])
    for p in pages:
        results[p].original = None  # the page as it came in is needed no longer
        write_page_record(run, results[p])
    release_freed_memory()  # the group's buffers are free now: hand their pages back (worker.heap)
    return [results[p] for p in pages]


def write_page_record(run: Run, result: PageResult) -> None:
    """The page's record, with the queue's marker when it runs there (`record_extra`)."""
    with stage_clock(result.timings, "storage"):
        record = result.record().dump()
        run.storage.put_json(page_key(run.doc_id, result.page), {**record, **run.record_extra})


def load_pages(run: Run, pages: list[int], results: dict[int, PageResult]) -> dict[int, Page]:
    """Each page rendered with its text layer (and normalised when it has none), read in the
    pool; a page that fails gets its error."""
    assert run.pool is not None
    loads = {p: run.pool.submit(load_page, run, p) for p in pages}
    loaded: dict[int, Page] = {}
    for p in pages:
        try:
            image, words, spent, normalised = loads[p].result()
        except TablesightError as exc:
            results[p].errors.append(ErrorEntry(page=p, reason=str(exc)))
            continue
        loaded[p] = (image, words)
        if normalised is not None:
            results[p].transform, results[p].normalisation, results[p].original = normalised
        for stage, seconds in spent.items():
            results[p].add_time(stage, seconds)
    return loaded


def load_page(
    run: Run, page: int
) -> tuple[Image.Image, list[Word], dict[str, float], tuple[PageTransform, PageTransformRecord, Image.Image] | None]:
    """Render one page and read its text layer (in the pool: pdftoppm is a subprocess); a page
    without text-layer words is normalised (turned, deskewed: worker.pipeline.normalise)."""
    timings: dict[str, float] = {}
    with stage_clock(timings, "render"):
        image = run.doc.render(page, run.dpi)
    words: list[Word] = []
    with stage_clock(timings, "text_layer"):
        if run.doc.kind == "pdf" and run.settings.inputs.text_layer:
            with PDFIUM_LOCK:
                words = pdf_words(run.doc, page, run.dpi)
    if words or not run.settings.normalise.pages:
        return image, words, timings, None
    with stage_clock(timings, "normalise"):
        normalised, transform, record = normalise(image, run.settings, run.dpi)
    return normalised, words, timings, (transform, record, image)


def detector_views(run: Run, loaded: dict[int, Page], results: dict[int, PageResult]) -> dict[int, Image.Image]:
    """Each page as the detector and the other table finders read it: a normalised page cleaned
    once (`detector_input`), any other as it is; nothing in page mode, which detects nothing."""
    if run.stages.detector is None:
        return {}
    s = run.settings
    return {p: detector_input(im, s) if results[p].original is not None else im for p, (im, _) in loaded.items()}


def page_tables(run: Run, pred: list[dict[str, Any]], page_size: tuple[int, int]) -> list[TableBox]:
    """A detector's prediction for one page as its tables, by the engine's threshold and the
    detection settings (every detector pass reads its predictions so)."""
    s = run.settings
    return select_tables(
        pred,
        threshold=run.engine.detection_threshold(s),
        rotated_threshold=s.detection.rotated_threshold,
        merge_iou=s.detection.merge_iou,
        page_size=page_size,
    )


def detect_tables(run: Run, loaded: dict[int, Page], views: dict[int, Image.Image]) -> dict[int, list[TableBox]]:
    """The tables on each page (read as `views` holds it), one batched detector call (or the
    whole page in page mode)."""
    if run.stages.detector is None:
        return {
            p: [TableBox((0.0, 0.0, float(im.width), float(im.height)), 1.0, False)] for p, (im, _) in loaded.items()
        }
    s = run.settings
    preds = run.stages.detector.predict([views[p] for p in loaded], s.models.detection_batch_size)
    return {p: page_tables(run, pred, im.size) for (p, (im, _)), pred in zip(loaded.items(), preds)}


def second_pass(
    run: Run, loaded: dict[int, Page], boxes: dict[int, list[TableBox]], results: dict[int, PageResult]
) -> None:
    """Recall fallback: a normalised page on which the detector found nothing is detected again
    as it came in, and what is found there is carried onto the normalised page. The layout
    detector's score on some pages falls below its threshold after any resampling (the demo's
    first page: 0.35 as scanned, nothing once deskewed by 0.13 degrees); this costs one more
    detector call on such pages only."""
    empty = [p for p in loaded if not boxes[p] and results[p].original is not None and results[p].transform]
    if not empty or not run.settings.normalise.second_pass:
        return
    s = run.settings
    originals = [results[p].original for p in empty]
    cleaned = [detector_input(im, s) for im in originals if im is not None]
    preds = run.stages.detector.predict(cleaned, s.models.detection_batch_size)  # type: ignore[union-attr]
    for p, original, pred in zip(empty, originals, preds):
        assert original is not None
        transform = results[p].transform
        assert transform is not None
        found = page_tables(run, pred, original.size)
        to_norm = invert(transform.to_original)
        w, h = loaded[p][0].size
        boxes[p] = [replace(b, bbox=clip(unbound_box(to_norm, b.bbox), (0.0, 0.0, float(w), float(h)))) for b in found]
        results[p].second_pass = len(found)


def dotted_rules_pass(
    run: Run,
    loaded: dict[int, Page],
    boxes: dict[int, list[TableBox]],
    results: dict[int, PageResult],
    views: dict[int, Image.Image],
) -> None:
    """Last recall fallback: a normalised page on which neither detector pass nor the ruled grids
    nor the aligned text found a table is detected again with its dotted and broken horizontal
    rules drawn solid (`models.dotted_rules`, `NORMALISE__SOLID_DOTTED_RULES`), where it has any.
    The layout detector reads a table partly by its rules, and a photocopy turns thin ones to
    dots: eu-017 p2's table scored 0.98 with its rules whole and nothing with them dotted. It
    runs last because where the grids found parts of tables, the drawn rules joined two tables
    into one box (eu-018 p1). One more detector call on such pages only."""
    s = run.settings
    if not s.normalise.solid_dotted_rules or run.stages.detector is None:
        return
    from models.dotted_rules import solid_rules

    empty = [p for p in loaded if not boxes[p] and results[p].original is not None and results[p].transform]
    drawn = {p: image for p in empty if (image := solid_rules(views[p])) is not None}
    if not drawn:
        return
    preds = run.stages.detector.predict(list(drawn.values()), s.models.detection_batch_size)
    for p, pred in zip(drawn, preds):
        boxes[p] = page_tables(run, pred, views[p].size)


LOW_BOX_SHARE = 0.06  # a box this share of the page high at most may be a band of text (2-3 lines)
WIDEN_MIN_IN = 0.1  # a box is widened to its grid only where the grid sticks out this far


def ruled_tables(
    run: Run,
    loaded: dict[int, Page],
    boxes: dict[int, list[TableBox]],
    results: dict[int, PageResult],
    views: dict[int, Image.Image],
) -> None:
    """Second finder on normalised pages: the detector's boxes checked against the page's ruled
    grids (`worker.core.ruled_boxes`): a box over two grids is split, a box over most of a grid
    widened to all of it, a grid no box covers added; then blank paper between a box's edges and
    the one grid it holds is trimmed off (`NORMALISE__TRIM_BOXES`), a box whose crop reaches past
    a page-wide rule into a heading is cut at the rule (`NORMALISE__CUT_FOREIGN_RULES`), and one
    whose crop's edge cuts a line of text outside the grid moves in to blank paper
    (`NORMALISE__CLEAR_CUT_LINES`). On photocopies the detector merged, missed or overdrew tables
    whose rules were plain, and rose into the headings over them."""
    s = run.settings
    if not s.normalise.ruled_tables:
        return
    from models.ruled_tables import (
        MIN_LONE_HEIGHT_IN,
        clear_cut_lines,
        cut_at_foreign_rules,
        find_grids,
        frames,
        is_low,
        trim_to_grid,
    )

    for p in loaded:
        transform = results[p].transform
        if results[p].original is None or transform is None:
            continue
        page, dpi = views[p], round(run.dpi * transform.scale)
        found = find_grids(page, dpi, MIN_LONE_HEIGHT_IN)
        grids = [g.box for g in found if not is_low(g, dpi)]
        low = [g.box for g in found if is_low(g, dpi)]
        threshold = run.engine.detection_threshold(s)
        if grids:
            parts = frames(page, grids, dpi)
            boxes[p], _, _ = reconcile(boxes[p], grids, threshold, WIDEN_MIN_IN * dpi, parts)
        if low:  # a table of two ruled rows the detector missed; it never widens or splits a box
            boxes[p], _ = with_uncovered(boxes[p], low, threshold)
        if s.normalise.cut_under_frames:
            boxes[p] = [_under_frame_cut(run, b, page, [g.box for g in found], dpi) for b in boxes[p]]
        if not grids:
            continue
        for i, b in enumerate(boxes[p]):
            grid = held_grid(b.bbox, grids)
            if grid is None:
                continue
            if s.normalise.trim_boxes:
                b = boxes[p][i] = replace(b, bbox=trim_to_grid(page, b.bbox, grid, dpi))
            if s.normalise.cut_foreign_rules:
                cut = cut_at_foreign_rules(page, b.bbox, grid, dpi, crop_margins(run, b, page.size))
                b = boxes[p][i] = replace(b, bbox=cut)
            if s.normalise.clear_cut_lines:
                cut = clear_cut_lines(page, b.bbox, grid, dpi, crop_margins(run, b, page.size))
                boxes[p][i] = replace(b, bbox=cut)


def _under_frame_cut(run: Run, box: TableBox, page: Image.Image, frames: list[BBox], dpi: int) -> TableBox:
    """`box` cut above a line under the one ruled frame it holds (two-row frames too) that runs
    across the frame's column rules (`models.frame_foot`, `NORMALISE__CUT_UNDER_FRAMES`)."""
    from models.frame_foot import cut_under_frame

    frame = held_grid(box.bbox, frames)
    if frame is None or box.rotated:
        return box
    return replace(box, bbox=cut_under_frame(page, box.bbox, frame, dpi, crop_margins(run, box, page.size)))


def crop_margins(run: Run, box: TableBox, page_size: tuple[int, int]) -> tuple[float, float]:
    """How far the engine's crop of `box` reaches above and below it: what SLANet reads is the crop."""
    crop = run.engine.crop_box(box, page_size, run.settings)
    return box.bbox[1] - crop[1], crop[3] - box.bbox[3]


def aligned_tables(
    run: Run,
    loaded: dict[int, Page],
    boxes: dict[int, list[TableBox]],
    results: dict[int, PageResult],
    views: dict[int, Image.Image],
    undetected: set[int],
) -> None:
    """Third finder on normalised pages, after the ruled grids: regions of aligned text
    (`worker.core.aligned_text`) no box covers are added, on pages where nothing was found
    (`NORMALISE__ALIGNED_TABLES_ALL_PAGES`: on every page, where a box holding only part of a
    region is also lengthened to its rows). Unruled tables, and rules too faint after a blur,
    get nothing from the grids: the layout detector lost whole pages' tables on blurred scans.
    On every page, it added no recall on dev pages and 3 false tables on 53 clean ones. On a
    page the detector found nothing on (`undetected`), boxes the ruled grids gave are parts of
    tables (a photocopy's header bands, its rows dotted) and grow to the regions they lie in
    (`NORMALISE__GRIDS_INTO_ALIGNED`); no region is added there."""
    s = run.settings
    if not (s.normalise.aligned_tables or s.normalise.aligned_under_thin_boxes or s.normalise.grids_into_aligned):
        return
    from models.aligned_text import find_aligned

    for p in loaded:
        if results[p].original is None or results[p].transform is None:
            continue
        if s.normalise.aligned_tables and (not boxes[p] or s.normalise.aligned_tables_all_pages):
            regions, x_height = find_aligned(views[p])
            if regions:
                boxes[p], _, _ = reconcile_regions(boxes[p], regions, run.engine.detection_threshold(s), x_height)
        elif s.normalise.grids_into_aligned and boxes[p] and p in undetected:
            regions, _ = find_aligned(views[p])
            boxes[p], _ = parts_into_regions(boxes[p], regions)
        elif s.normalise.aligned_under_thin_boxes and boxes[p] and all(_low(b.bbox, views[p].height) for b in boxes[p]):
            regions, x_height = find_aligned(views[p])
            boxes[p], _ = under_thin_boxes(boxes[p], regions, x_height)


def prose_beyond_rules(
    run: Run,
    loaded: dict[int, Page],
    boxes: dict[int, list[TableBox]],
    results: dict[int, PageResult],
    views: dict[int, Image.Image],
) -> None:
    """Last on normalised pages: a box whose crop holds a caption above the table's top rule, or
    a note under its bottom rule, is cut on the paper between the prose and the rule (`models.prose_rules`,
    `NORMALISE__CUT_PROSE_AT_RULES`): the structure model read the prose as rows and columns."""
    if not run.settings.normalise.cut_prose_at_rules:
        return
    from models.prose_rules import cut_prose_at_rules

    for p in loaded:
        transform = results[p].transform
        if results[p].original is None or transform is None:
            continue
        page, dpi = views[p], round(run.dpi * transform.scale)
        boxes[p] = [
            b if b.rotated else replace(b, bbox=cut_prose_at_rules(page, b.bbox, dpi, crop_margins(run, b, page.size)))
            for b in boxes[p]
        ]


def _low(box: BBox, page_height: int) -> bool:
    """Low enough to be a band of text (`under_thin_boxes` decides by the page's x-height)."""
    return box[3] - box[1] <= LOW_BOX_SHARE * page_height


def find_tables(run: Run, page: int, loaded: Page, boxes: list[TableBox]) -> list[FoundTable]:
    """Crop every table of a page; OCR and caption capture start in the pool meanwhile."""
    image, words = loaded
    read = page_read(run, image, words, boxes)
    found = []
    for index, box in enumerate(boxes, 1):
        if read is not None and box in read.boxes:  # words and context from the page's one OCR pass
            i = read.boxes.index(box)
            table = crop_table(run, page, index, box, image, words, read.words[i])
            table.context = read.contexts[i]
            found.append(table)
            continue
        table = crop_table(run, page, index, box, image, words)
        if run.settings.context.capture and run.detecting and not box.rotated:
            assert run.pool is not None
            others = [b.bbox for b in boxes]
            table.context = run.pool.submit(timed, table_context, run, box.bbox, image, words, others)
        found.append(table)
    return found


def page_read(run: Run, image: Image.Image, words: list[Word], boxes: list[TableBox]) -> PageRead | None:
    """One OCR pass over the page's upright tables and their caption strips, on scans (OCR__PAGE_PASS)."""
    s = run.settings
    upright = [b for b in boxes if not b.rotated]
    if words or not upright or not (s.ocr.page_pass and s.context.capture and run.detecting) or run.pool is None:
        return None
    return PageRead(run, image, upright, [table_crop_box(run, b, image.size) for b in upright])


def store_table(
    run: Run, table: FoundTable, objects: list[dict[str, Any]], page_size: tuple[int, int], result: PageResult
) -> None:
    """Rebuild one table from its structure objects and write its files; list it on its page.
    A table whose reading fails (its OCR, its rebuilding) leaves its reason on the page instead."""
    try:
        settle(table, result.timings)
        with stage_clock(result.timings, "reconstruct"):
            record, html = build_table(run, table, objects, page_size, result.transform, result.normalisation)
    except Exception as exc:
        if not contained(exc):
            raise
        result.errors.append(table_failure(table.page, table.index, exc))
        return
    with stage_clock(result.timings, "storage"):
        keys = write_table(run.storage, table.crop, html, record)
    result.tables.append(manifest_entry(record, keys))
