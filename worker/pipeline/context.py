"""A table's caption and notes: from the page's text layer, else by OCR of the strips just
above and below the table (a full-page OCR per page would cost more than the table itself)."""

from __future__ import annotations

import statistics

from PIL import Image

from worker.core.captions import PAGE_MARGIN, Context, capture_context
from worker.core.strip_lines import strip_lines_to_read
from worker.core.types import BBox, Word
from worker.engines.ocr import LineReader, line_reader
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
    top, bottom, found, unread = _strip_words(run, bbox, image, tables)
    return capture_context(
        found,
        bbox,
        size,
        other_tables=tables,
        seen=(top, bottom),
        unread=unread,
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


def _strip_words(
    run: Run, bbox: BBox, image: Image.Image, tables: list[BBox]
) -> tuple[int, int, list[Word], list[BBox]]:
    """OCR of the page strips above and below the table, in page pixels: the rows covered, the
    words read, and the boxes of lines seen and not read (an engine that finds lines first reads
    only those the caption step can use: worker.core.strip_lines)."""
    x0, top, x1, bottom = strip_box(run, bbox, image.size)
    reader = _line_reader(run)
    found: list[Word] = []
    unread: list[BBox] = []
    ratios: list[float] = []
    for y0, y1 in ((top, int(bbox[1])), (int(bbox[3] + 1), bottom)):
        if y1 - y0 >= 8 and x1 - x0 >= 8:
            strip = image.crop((x0, y0, x1, y1))
            seen: list[BBox] = []
            if reader is None:
                words = run.stages.ocr(strip)
            else:
                words, seen, inked = _nearest_lines(run, reader, strip, (x0, y0), bbox, tables, above=y1 <= bbox[1])
                ratios += inked
            found += [
                Word(wd.text, (wd.bbox[0] + x0, wd.bbox[1] + y0, wd.bbox[2] + x0, wd.bbox[3] + y0), wd.confidence)
                for wd in words
            ]
            unread += [(b[0] + x0, b[1] + y0, b[2] + x0, b[3] + y0) for b in seen]
    # the finder's boxes are taller than the words' ink: unread lines are given the ink height the
    # read ones have for their box, so that they weigh in the line height as if read
    k = statistics.median(ratios) if ratios else 1.0
    unread = [
        (b[0], (b[1] + b[3]) / 2 - k * (b[3] - b[1]) / 2, b[2], (b[1] + b[3]) / 2 + k * (b[3] - b[1]) / 2)
        for b in unread
    ]
    return top, bottom, found, unread


def _line_reader(run: Run) -> LineReader | None:
    """The OCR engine as a line reader, when `stages.ocr` is its own `read` (not a test's reader)."""
    engine = run.stages.ocr_engine
    if engine is None or getattr(run.stages.ocr, "__self__", None) is not engine:
        return None
    return line_reader(engine)


def _nearest_lines(
    run: Run,
    reader: LineReader,
    strip: Image.Image,
    origin: tuple[int, int],
    bbox: BBox,
    tables: list[BBox],
    *,
    above: bool,
) -> tuple[list[Word], list[BBox], list[float]]:
    """The words of the strip's lines the caption step can use, the boxes of the rest (strip
    pixels), and per line read its words' median height over its box's. A line read as nothing
    (below the score floor) does not count: the choice is made again without it, so the next line
    is read in its place."""
    s = run.settings.context
    found = reader.detect_lines(strip)
    ox, oy = origin
    page_boxes: list[BBox] = [(b[0] + ox, b[1] + oy, b[2] + ox, b[3] + oy) for b in found.boxes]
    alive = list(range(len(page_boxes)))
    words: dict[int, list[Word]] = {}
    while True:
        chosen = strip_lines_to_read(
            [page_boxes[i] for i in alive],
            bbox,
            above=above,
            max_lines=s.caption_max_lines if above else s.notes_max_lines,
            max_gap=s.max_gap,
            other_tables=tables,
        )
        todo = [alive[k] for k in chosen if alive[k] not in words]
        if not todo:
            break
        for i, line in zip(todo, reader.read_lines(found, todo)):
            words[i] = line
            if not line:
                alive.remove(i)
    read = [w for i in sorted(words) for w in words[i]]
    inked = [
        statistics.median(w.bbox[3] - w.bbox[1] for w in words[i]) / max(1, found.boxes[i][3] - found.boxes[i][1])
        for i in words
        if words[i]
    ]
    return read, [found.boxes[i] for i in alive if i not in words], inked
