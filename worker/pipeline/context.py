"""A table's caption and notes: from the page's text layer, else by OCR of the strips just
above and below the table (a full-page OCR per page would cost more than the table itself)."""

from __future__ import annotations

from PIL import Image

from worker.core.captions import PAGE_MARGIN, Context, capture_context
from worker.core.types import BBox, Word
from worker.pipeline.run import Run


def table_context(run: Run, bbox: BBox, image: Image.Image, words: list[Word], tables: list[BBox]) -> Context:
    """Caption and notes of the table at `bbox` on this page (`tables`: every table on it)."""
    s = run.settings
    size = image.size
    if words:
        return capture_context(
            words,
            bbox,
            size,
            other_tables=tables,
            max_gap=s.context.max_gap,
            caption_max_lines=s.context.caption_max_lines,
            notes_max_lines=s.context.notes_max_lines,
        )
    top, bottom, found = _strip_words(run, bbox, image)
    return capture_context(
        found,
        bbox,
        size,
        other_tables=tables,
        seen=(top, bottom),
        max_gap=s.context.max_gap,
        caption_max_lines=s.context.caption_max_lines,
        notes_max_lines=s.context.notes_max_lines,
    )


def strip_box(run: Run, bbox: BBox, size: tuple[int, int]) -> tuple[int, int, int, int]:
    """(x0, top, x1, bottom) in page pixels: the table's width and a little more, from CONTEXT_STRIP_INCHES
    above it to as far below (to the page edge when that is within the page margin)."""
    w, h = size
    strip = run.settings.context.strip_inches * run.dpi
    x0, x1 = max(0, int(bbox[0] - 0.05 * w)), min(w, int(bbox[2] + 0.05 * w + 1))
    top = max(0, int(bbox[1] - strip))
    top = 0 if top <= PAGE_MARGIN * h else top
    bottom = min(h, int(bbox[3] + strip + 1))
    bottom = h if bottom >= (1 - PAGE_MARGIN) * h else bottom
    return x0, top, x1, bottom


def context_from_words(
    run: Run,
    bbox: BBox,
    image: Image.Image,
    words: list[Word],
    tables: list[BBox],
    strip: tuple[int, int, int, int],
) -> Context:
    """Caption and notes from OCR words of a larger region (worker.pipeline.page_ocr): the words
    whose centre lies in the table's strips, as if the strips alone had been read."""
    x0, top, x1, bottom = strip
    inside = [
        w
        for w in words
        if x0 <= (w.bbox[0] + w.bbox[2]) / 2 < x1
        and top <= (w.bbox[1] + w.bbox[3]) / 2 < bottom
        and not bbox[1] <= (w.bbox[1] + w.bbox[3]) / 2 <= bbox[3] + 1
    ]
    s = run.settings.context
    return capture_context(
        inside,
        bbox,
        image.size,
        other_tables=tables,
        seen=(top, bottom),
        max_gap=s.max_gap,
        caption_max_lines=s.caption_max_lines,
        notes_max_lines=s.notes_max_lines,
    )


def _strip_words(run: Run, bbox: BBox, image: Image.Image) -> tuple[int, int, list[Word]]:
    """OCR of the page strips above and below the table, in page pixels; the rows covered."""
    x0, top, x1, bottom = strip_box(run, bbox, image.size)
    found: list[Word] = []
    for y0, y1 in ((top, int(bbox[1])), (int(bbox[3] + 1), bottom)):
        if y1 - y0 >= 8 and x1 - x0 >= 8:
            found += [
                Word(wd.text, (wd.bbox[0] + x0, wd.bbox[1] + y0, wd.bbox[2] + x0, wd.bbox[3] + y0), wd.confidence)
                for wd in run.stages.ocr(image.crop((x0, y0, x1, y1)))
            ]
    return top, bottom, found
