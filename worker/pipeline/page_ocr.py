"""OCR once per scanned page: its tables and their caption strips read in one pass.

Without a text layer each table used to cost three OCR calls (its crop, the strip above, the strip
below), and a strip between two tables was read twice. Here each table's region (the table and
its strips) is merged with the regions it overlaps, each merged region is read once in the pool,
and the words are split back: those whose centre lies in a crop are the table's (as text-layer
words are, worker.core.detections.words_in_crop), those in a table's strips its caption and notes.
Same pixels, same OCR settings; fewer calls (each loads tesseract's model) and no pixel read twice.
"""

from __future__ import annotations

from concurrent.futures import Future

from PIL import Image

from worker.core.captions import Context
from worker.core.detections import TableBox, words_in_crop
from worker.core.types import Word
from worker.overlap import timed
from worker.pipeline.context import context_from_words, strip_box
from worker.pipeline.run import Run

Box = tuple[int, int, int, int]


def merge_boxes(boxes: list[Box]) -> list[Box]:
    """The unions of overlapping boxes (transitively), top to bottom."""
    merged = list(boxes)
    changed = True
    while changed:
        changed = False
        for i in range(len(merged)):
            for j in range(i + 1, len(merged)):
                a, b = merged[i], merged[j]
                if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                    merged[i] = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                    del merged[j]
                    changed = True
                    break
            if changed:
                break
    return sorted(merged, key=lambda r: (r[1], r[0]))


def read_regions(run: Run, image: Image.Image, regions: list[Box]) -> list[Word]:
    """Words of each region, in page pixels (one OCR call per region)."""
    words: list[Word] = []
    for x0, y0, x1, y1 in regions:
        for w in run.stages.ocr(image.crop((x0, y0, x1, y1))):
            b = w.bbox
            words.append(Word(w.text, (b[0] + x0, b[1] + y0, b[2] + x0, b[3] + y0), w.confidence))
    return words


class PageRead:
    """One page's OCR in the pool, and per-table futures of (words, seconds) and (context, seconds).

    The page's OCR seconds are shared equally by its tables (their `ocr` stage); caption capture from
    the words is near free and counted in `context`."""

    def __init__(self, run: Run, image: Image.Image, boxes: list[TableBox], crop_boxes: list[Box]) -> None:
        self.run, self.image, self.boxes, self.crop_boxes = run, image, boxes, crop_boxes
        self.strips = [strip_box(run, b.bbox, image.size) for b in boxes]
        regions = [
            (min(c[0], s[0]), min(c[1], s[1]), max(c[2], s[2]), max(c[3], s[3]))
            for c, s in zip(crop_boxes, self.strips)
        ]
        self.regions = merge_boxes(regions)
        self.words: list[Future[tuple[list[Word], float]]] = [Future() for _ in boxes]
        self.contexts: list[Future[tuple[Context, float]]] = [Future() for _ in boxes]
        assert run.pool is not None
        run.pool.submit(timed, read_regions, run, image, self.regions).add_done_callback(self._split)

    def _split(self, done: Future[tuple[list[Word], float]]) -> None:
        try:
            words, seconds = done.result()
        except BaseException as exc:  # noqa: BLE001 - every table waiting on this page gets the error
            for f in self.words + self.contexts:
                f.set_exception(exc)
            return
        share = seconds / max(1, len(self.boxes))
        others = [b.bbox for b in self.boxes]
        for i, (box, crop_box, strip) in enumerate(zip(self.boxes, self.crop_boxes, self.strips)):
            self.words[i].set_result((words_in_crop(words, crop_box), share))
            try:
                context = timed(context_from_words, self.run, box.bbox, self.image, words, others, strip)
                self.contexts[i].set_result(context)
            except Exception as exc:  # noqa: BLE001 - raised where the table settles
                self.contexts[i].set_exception(exc)
