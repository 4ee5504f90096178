"""One table through the pipeline: its crop and words, then its grid and stored record."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Any

from PIL import Image

from worker.contract import TableRecord
from worker.contract.page_transform import PageTransformRecord
from worker.core.box_text import lift_box_text, with_box_text
from worker.core.captions import Context
from worker.core.detections import TableBox, rotate_words_clockwise, words_in_crop
from worker.core.flags import complexity_flags
from worker.core.html_out import grid_to_html
from worker.core.page_transform import PageTransform
from worker.core.speck_words import drop_specks
from worker.core.types import RulingLines, Word
from worker.outputs import table_record
from worker.overlap import timed
from worker.pipeline.normalise import crop_input, structure_input
from worker.pipeline.numbers import check_numbers
from worker.pipeline.run import Run
from worker.pipeline.screen_labels import read_bold_screens
from worker.pipeline.second_look import second_look


@dataclass
class FoundTable:
    """A detected table waiting for its structure; OCR and context may still run in the pool."""

    page: int
    index: int
    box: TableBox
    crop_box: tuple[int, int, int, int]
    crop: Image.Image
    words: list[Word] | Future[tuple[list[Word], float]]  # a Future while OCR runs on a worker
    text_source: str
    context: Context | Future[tuple[Context, float]] | None = None
    structure_crop: Image.Image | None = None  # what the structure model reads, when not `crop`
    raw_crop: Image.Image | None = None  # the crop as cut, when `crop` is a softened copy of it

    @property
    def model_input(self) -> Image.Image:
        """The image the structure model reads (`normalise.denoise_structure`: noisy crops median-filtered)."""
        return self.structure_crop if self.structure_crop is not None else self.crop


def table_crop_box(run: Run, box: TableBox, page_size: tuple[int, int]) -> tuple[int, int, int, int]:
    """Where the table is cut from its page: the engine's crop of its box (the page in page mode)."""
    if not run.detecting:
        return (0, 0, page_size[0], page_size[1])
    return run.engine.crop_box(box, page_size, run.settings)


def crop_table(
    run: Run,
    page: int,
    index: int,
    box: TableBox,
    page_image: Image.Image,
    page_words: list[Word],
    ocr: Future[tuple[list[Word], float]] | None = None,
) -> FoundTable:
    """The table's crop and its words; OCR, when needed, starts in the pool (see `settle`), or is
    `ocr`, the table's share of a page read already under way (worker.pipeline.page_ocr)."""
    crop_box = table_crop_box(run, box, page_image.size)
    cut = page_image.crop(crop_box)
    crop = crop_input(cut, run.settings)
    raw = cut if crop is not cut else None  # a photocopy's softened copy lost its dashes with its specks
    inside = words_in_crop(page_words, crop_box)
    if box.rotated:
        crop = crop.transpose(Image.Transpose.ROTATE_270)  # 90° clockwise: sideways text upright
        raw = raw.transpose(Image.Transpose.ROTATE_270) if raw is not None else None
        inside = rotate_words_clockwise(inside, crop_box[3] - crop_box[1])
    if inside:
        return FoundTable(page, index, box, crop_box, crop, inside, "text-layer")
    view = structure_input(crop, run.settings)
    words: list[Word] | Future[tuple[list[Word], float]]
    if ocr is not None:
        words = ocr
    elif run.pool is None:
        words = run.stages.ocr(crop)
    else:
        words = run.pool.submit(timed, run.stages.ocr, crop)
    return FoundTable(page, index, box, crop_box, crop, words, "ocr", structure_crop=view, raw_crop=raw)


def settle(table: FoundTable, timings: dict[str, float]) -> None:
    """Wait for the table's OCR and context reads; their pool time goes to its page."""
    for attr, stage in (("words", "ocr"), ("context", "context")):
        value = getattr(table, attr)
        if isinstance(value, Future):
            result, seconds = value.result()
            setattr(table, attr, result)
            timings[stage] = timings.get(stage, 0.0) + seconds


def scan_rules(table: FoundTable, run: Run) -> RulingLines | None:
    """Ruling lines of an OCR'd crop, the evidence `lift_box_text` needs to trim `|` glyphs."""
    if table.text_source != "ocr" or not run.settings.refine.lines:
        return None
    from models.rules import crop_rules

    return crop_rules(table.crop, run.dpi)


def build_table(
    run: Run,
    table: FoundTable,
    objects: list[dict[str, Any]],
    page_size: tuple[int, int],
    transform: PageTransform | None = None,
    normalisation: PageTransformRecord | None = None,
) -> tuple[TableRecord, str]:
    """Grid, HTML, flags and serialisations of one settled table: its record and its HTML.

    On a normalised page (`transform`), the table's box and the page size go back to the page
    as it came in; the crop, its box and the cells stay on the normalised page the models saw."""
    assert not isinstance(table.words, Future) and not isinstance(table.context, Future), "settle() first"
    screened = 0
    if table.text_source == "ocr" and run.settings.ocr.bold_screens and table.raw_crop is not None:
        table.words, screened = read_bold_screens(table.raw_crop, table.words, run.stages.ocr)
    specks = 0
    if table.text_source == "ocr" and run.settings.ocr.drop_specks:
        table.words, specks = drop_specks(table.words)
    dashes: list[Word] = []
    if table.text_source == "ocr" and run.settings.ocr.dashes:
        # the placeholder dashes the OCR cannot see (models.dashes): they join the table's words,
        # so a stored replay rebuilds the same grid
        from models.dashes import placeholder_dashes

        dashes = placeholder_dashes(table.raw_crop if table.raw_crop is not None else table.crop, table.words)
        table.words = [*table.words, *dashes]
    table.raw_crop = None  # what it was kept for is done
    built = run.engine.build_grid(objects, table.words, table.crop, run.dpi, run.settings)
    built = second_look(run, built, table.words, table.crop)
    if dashes:
        built.grid.repairs.append(f"{len(dashes)} placeholder dash(es) read from the crop's pixels")
    if specks:
        built.grid.repairs.append(f"{specks} speck(s) read as a character left out")
    if screened:
        built.grid.repairs.append(f"{screened} label(s) read again from a dotted band cleared of its dots")
    moved = lift_box_text(built.grid, table.words, built.lines or scan_rules(table, run))
    table.context = with_box_text(table.context, moved)
    numbers = check_numbers(
        built.grid,
        text_source=table.text_source,
        words=table.words,
        crop=table.crop,
        stages=run.stages,
        settings=run.settings,
        dpi=run.dpi,
        caption=table.context.caption if table.context else "",
        notes=list(table.context.notes) if table.context else [],
    )
    grid = numbers.grid
    flags = complexity_flags(
        grid,
        rotated=table.box.rotated,
        words=table.words,
        rules=run.settings.flags.rules(),
        totals_mismatches=numbers.mismatches,
    )
    record = table_record(
        doc_id=run.doc_id,
        page=table.page,
        index=table.index,
        dpi=run.dpi,
        box=table.box if transform is None else replace(table.box, bbox=transform.box_to_original(table.box.bbox)),
        crop_box=table.crop_box,
        crop_size=table.crop.size,
        text_source=table.text_source,
        grid=grid,
        flags=flags,
        context=table.context,
        page_size=page_size if transform is None else transform.original_size,
        structure=built.structure,
        words=table.words,
        lines=built.lines,
        tokens=built.tokens,
        engine=run.stages.engine,
        totals=numbers.totals,
        text_repairs=[*moved.trimmed, *numbers.repairs],
        page_transform=normalisation,
    )
    return record, grid_to_html(grid)
