"""Which lines of a caption strip are read (worker.core.strip_lines), and that reading only those
gives the caption step what reading every line gave (synthetic boxes; PP-OCR on a rendered page)."""

from __future__ import annotations

import pytest
from test_captions import scanned_page, w
from test_ppocr import needs_weights

from worker.core.captions import capture_context
from worker.core.strip_lines import rows_of, strip_lines_to_read
from worker.core.types import BBox, Word
from worker.settings import Settings

TABLE: BBox = (100.0, 300.0, 600.0, 500.0)


def box(y: float, x0: float = 100.0, x1: float = 500.0, h: float = 14.0) -> BBox:
    return (x0, y, x1, y + h)


def test_rows_group_boxes_side_by_side_top_to_bottom() -> None:
    boxes = [box(40), box(10, 100, 200), box(12, 300, 400)]
    assert [r.members for r in rows_of(boxes)] == [[1, 2], [0]]


def test_above_only_the_caption_is_read_when_a_paragraph_gap_parts_it_from_the_prose() -> None:
    prose = [box(180 + 16 * k) for k in range(4)]  # rows 180..242, two px apart
    caption = box(280)  # 280..294, 6 px above the table; 38 px below the prose: a paragraph gap
    boxes = [*prose, caption]
    assert strip_lines_to_read(boxes, TABLE, above=True, max_lines=3, max_gap=2.5) == [4]


def test_a_long_block_is_read_up_to_the_line_cap_only() -> None:
    block = [box(290 - 16 * k) for k in range(1, 7)]  # six rows one line gap apart, nearest first
    assert strip_lines_to_read(block, TABLE, above=True, max_lines=3, max_gap=2.5) == [0, 1, 2]


def test_below_nothing_is_read_when_the_nearest_line_is_too_far_for_a_note() -> None:
    far = [box(600), box(616)]  # 100 px below the table: ~7 line heights
    assert strip_lines_to_read(far, TABLE, above=False, max_lines=4, max_gap=2.5) == []
    near = [box(505), box(521, 100, 250), box(521, 300, 450), box(600)]
    assert strip_lines_to_read(near, TABLE, above=False, max_lines=4, max_gap=2.5) == [0, 1, 2]


def test_lines_of_another_table_or_beyond_it_are_not_this_tables() -> None:
    other: BBox = (100.0, 530.0, 600.0, 700.0)
    boxes = [box(505), box(560), box(710)]  # a note, a line inside the next table, one beyond it
    got = strip_lines_to_read(boxes, TABLE, above=False, max_lines=4, max_gap=2.5, other_tables=[TABLE, other])
    assert got == [0]


def _words(lines: list[tuple[str, float]]) -> list[Word]:
    return [word for text, y in lines for word in w(text, 100, y, h=12)]


def test_unread_lines_keep_the_block_length_and_the_clear_flags_of_reading_everything() -> None:
    size = (800.0, 1100.0)
    cases = [
        # caption, then prose beyond a gap (read: the caption; unread: the prose)
        ([("Table 2: Costs", 282)], [("Body text of the report goes on", 200), ("and on here", 216)]),
        # a block of five lines with no caption mark: too long for a caption either way
        ([("one", 282), ("two", 266), ("three", 250)], [("four", 234), ("five", 218)]),
        # a marked caption inside a long block: the mark decides
        ([("x y", 282), ("Table 4 Results", 266), ("z", 250)], [("more", 234)]),
    ]
    for read, unread in cases:
        everything = capture_context(_words(read + unread), TABLE, size, seen=(150, 500))
        seen_boxes = [box(y - 1, 100, 100 + 7 * len(t) + 7, 14) for t, y in unread]
        partial = capture_context(_words(read), TABLE, size, seen=(150, 500), unread=seen_boxes)
        assert partial.to_dict() == everything.to_dict()
    # the first case, spelled out
    ctx = capture_context(_words(cases[0][0]), TABLE, size, seen=(150, 500), unread=[box(199, 100, 330)])
    assert ctx.caption == "Table 2: Costs" and ctx.above_clear is False


@needs_weights
def test_ppocr_reads_only_the_caption_and_note_lines_and_finds_the_same_context() -> None:
    from worker.engines.ocr import load_ocr_engine
    from worker.evaluation.caption_eval import _timings
    from worker.pipeline import Run, Stages
    from worker.pipeline.context import table_context

    settings = Settings(_env_file=None, ocr={"engine": "ppocr"})
    engine = load_ocr_engine(settings.ocr, 200, settings.models)
    timings = _timings(engine)
    page, table = scanned_page()
    got = {}
    for way, ocr in (("full", lambda im: engine.read(im)), ("nearest", engine.read)):
        stages = Stages(structure=None, detector=None, ocr=ocr, ocr_engine=engine)  # type: ignore[arg-type]
        run = Run(doc=None, doc_id="0" * 16, stages=stages, storage=None, settings=settings, dpi=200)  # type: ignore[arg-type]
        timings.reset()
        got[way] = (table_context(run, table, page, [], [table]).to_dict(), timings.lines)
    (full, full_lines), (nearest, nearest_lines) = got["full"], got["nearest"]
    assert nearest == full
    assert nearest["caption"] == "Table 3: Revenue and cost by region"
    assert nearest["notes"] == ["Note: all figures in thousands of euros.", "Source: company accounts."]
    assert nearest["above_clear"] is False  # the prose above was seen, not read
    assert nearest_lines == 3 and full_lines == 5, (nearest_lines, full_lines)


@pytest.mark.parametrize("max_lines", [0])
def test_no_lines_are_read_when_captions_are_capped_at_zero(max_lines: int) -> None:
    assert strip_lines_to_read([box(282)], TABLE, above=True, max_lines=max_lines, max_gap=2.5) == []


def test_only_an_engine_that_finds_lines_first_is_a_line_reader() -> None:
    from worker.engines.ocr import line_reader, load_ocr_engine

    settings = Settings(_env_file=None, ocr={"engine": "tesseract"})
    assert line_reader(load_ocr_engine(settings.ocr, 144, settings.models)) is None  # reads whole strips
