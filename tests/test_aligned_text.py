"""Unruled tables found as aligned text (worker.core.aligned_text, models.aligned_text): the pure
rules on synthetic blob lists, and one drawn page of each kind (a numeric table, prose)."""

from __future__ import annotations

import random

from PIL import Image, ImageDraw, ImageFont

from models.aligned_text import find_aligned
from worker.core.aligned_text import (
    Region,
    aligned_regions,
    parts_into_regions,
    reconcile_regions,
    text_rows,
    under_thin_boxes,
)
from worker.core.detections import TableBox
from worker.core.geometry import iou
from worker.core.types import BBox

XH = 10.0  # x-height of the synthetic blobs; a text line is 2 x-heights high


def _grid(
    x0: float, y0: float, rows: int, widths: list[float], gutter: float = 40.0, pitch: float = 30.0
) -> list[BBox]:
    """Blobs of a table: `rows` lines, one blob per column of the given widths."""
    blobs = []
    for r in range(rows):
        x = x0
        for w in widths:
            blobs.append((x, y0 + r * pitch, x + w, y0 + r * pitch + 2 * XH))
            x += w + gutter
    return blobs


def _prose(x0: float, y0: float, lines: int, width: float, pitch: float = 24.0) -> list[BBox]:
    return [(x0, y0 + i * pitch, x0 + width, y0 + i * pitch + 2 * XH) for i in range(lines)]


def test_a_block_of_four_rows_and_three_columns_of_numbers_is_a_table() -> None:
    blobs = _grid(100, 200, rows=4, widths=[60, 50, 50])
    regions = aligned_regions(blobs, XH)
    assert len(regions) == 1
    region = regions[0]
    assert (region.rows, region.columns) == (4, 3)
    assert region.box == region.core == (100, 200, 100 + 60 + 40 + 50 + 40 + 50, 200 + 3 * 30 + 2 * XH)


def test_three_rows_are_too_few_and_a_paragraph_above_is_not_taken_in() -> None:
    assert aligned_regions(_grid(100, 200, rows=3, widths=[60, 50, 50]), XH) == []
    table = _grid(100, 300, rows=5, widths=[120, 50, 50])
    above = _prose(100, 150, 4, 300)  # body text ending 3 x-heights above the table
    regions = aligned_regions(above + table, XH)
    assert len(regions) == 1 and regions[0].box[1] == 300


def test_two_column_body_text_is_not_a_table() -> None:
    left = _prose(100, 100, 30, 460)
    right = _prose(600, 100, 30, 460)  # one gutter, long lines either side
    ragged = [(b[0], b[1], b[2] - (i % 5) * 30, b[3]) for i, b in enumerate(left + right)]
    assert aligned_regions(left + right, XH) == []
    assert aligned_regions(ragged, XH) == []


def test_a_list_and_a_two_column_label_table_of_few_rows_are_not_tables() -> None:
    bullets = _grid(100, 100, rows=8, widths=[15, 300])  # "1." and a line of text: short on the left
    assert aligned_regions(bullets, XH) == []
    labels = _grid(100, 100, rows=4, widths=[150, 50])  # label and number, only four rows
    assert aligned_regions(labels, XH) == []
    assert len(aligned_regions(_grid(100, 100, rows=7, widths=[150, 50]), XH)) == 1


def test_a_table_beside_a_page_column_of_prose_keeps_only_the_table() -> None:
    table = _grid(100, 100, rows=6, widths=[80, 40, 40], pitch=24.0)
    prose = _prose(500, 100, 6, 500)  # lines on the same rows, one per row, 50 x-heights long
    regions = aligned_regions(table + prose, XH)
    assert len(regions) == 1
    assert regions[0].box[2] == 100 + 80 + 40 + 40 + 40 + 40
    assert regions[0].columns == 3


def test_a_wrapped_label_and_a_spanning_heading_stay_in_the_table() -> None:
    heading = [(290, 70, 400, 70 + 2 * XH)]  # over the two number columns
    table = _grid(100, 100, rows=6, widths=[120, 50, 50])
    wrapped = [(100, 100 + 6 * 30, 180, 100 + 6 * 30 + 2 * XH)]  # a label's second line
    more = _grid(100, 100 + 7 * 30, rows=2, widths=[120, 50, 50])
    regions = aligned_regions(heading + table + wrapped + more, XH)
    assert len(regions) == 1
    assert regions[0].box[1] == 70 and regions[0].box[3] == 100 + 8 * 30 + 2 * XH
    assert regions[0].core is not None and regions[0].core[1] == 100  # the rows, without the heading


def test_specks_dots_and_sideways_words_are_not_text() -> None:
    """A speck and a word set sideways are no text; a dash is, beside a word on its line, but a
    line of nothing but dashes is a broken rule's pieces and no line at all."""
    blobs = [(0, 0, 3, 3), (10, 8, 16, 10), (20, 0, 35, 60), (40, 0, 80, 20)]
    assert text_rows(blobs, XH) == [[(10, 8, 16, 10), (40, 0, 80, 20)]]
    assert text_rows([(0, 0, 3, 3), (10, 0, 16, 2), (40, 30, 80, 50)], XH) == [[(40, 30, 80, 50)]]


def test_regions_reconciled_with_the_detectors_boxes() -> None:
    rows = (100.0, 130.0, 500.0, 400.0)
    region = Region((100.0, 100.0, 500.0, 400.0), 10, 3, core=rows)  # a heading line above its rows
    covered = [TableBox((90.0, 90.0, 510.0, 410.0), 0.9, False)]
    assert reconcile_regions(covered, [region], 0.5, XH) == (covered, 0, 0)
    elsewhere = [TableBox((100.0, 600.0, 500.0, 800.0), 0.9, False)]
    out, added, widened = reconcile_regions(elsewhere, [region], 0.5, XH)
    assert (added, widened) == (1, 0) and out[1] == TableBox(region.box, 0.5, False)
    cut_short = [TableBox((95.0, 125.0, 505.0, 300.0), 0.9, False)]  # the detector stopped two-thirds down
    out, added, widened = reconcile_regions(cut_short, [region], 0.5, XH)
    assert (added, widened) == (0, 1) and out == [TableBox((95.0, 125.0, 505.0, 400.0), 0.9, False)]
    short_by_a_line = [TableBox((95.0, 125.0, 505.0, 370.0), 0.9, False)]  # within two rows: left alone
    assert reconcile_regions(short_by_a_line, [region], 0.5, XH) == (short_by_a_line, 0, 0)
    half = [TableBox((100.0, 250.0, 500.0, 900.0), 0.9, False)]  # overlaps, but mostly lies elsewhere
    assert reconcile_regions(half, [region], 0.5, XH) == (half, 0, 0)


def test_a_caption_taken_for_the_table_grows_down_over_the_rows_under_it() -> None:
    """The detector boxed two caption lines and missed the thirty rows under them (noise scan)."""
    region = Region((180.0, 320.0, 960.0, 1160.0), 30, 5)
    caption = TableBox((170.0, 200.0, 1020.0, 240.0), 0.39, False)
    out, taken = under_thin_boxes([caption], [region], XH)
    assert taken == 1 and out == [TableBox((170.0, 200.0, 1020.0, 1160.0), 0.39, False)]
    # far under it, or beside it: a table of its own, at the box's score
    far = Region((180.0, 900.0, 960.0, 1400.0), 12, 4)
    assert under_thin_boxes([caption], [far], XH) == ([caption, TableBox(far.box, 0.39, False)], 1)
    # a box of a whole table on the page: nothing is looked for; a region already boxed stays
    table = TableBox((170.0, 200.0, 1020.0, 700.0), 0.9, False)
    assert under_thin_boxes([caption, table], [far], XH) == ([caption, table], 0)
    boxed = Region((170.0, 205.0, 1020.0, 238.0), 4, 4)
    assert under_thin_boxes([caption], [boxed], XH) == ([caption], 0)


def _drawn(lines: list[str], x0: int = 120, y0: int = 200, pitch: int = 34) -> Image.Image:
    page = Image.new("L", (1190, 1684), 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=20)
    for i, line in enumerate(lines):
        for text, x in zip(line.split("|"), (0, 330, 500, 670)):
            draw.text((x0 + x, y0 + i * pitch), text.strip(), fill=0, font=font)
    return page


def test_a_drawn_unruled_numeric_table_is_found_and_a_page_of_prose_is_not() -> None:
    rows = ["Region | 2007 | 2008 | 2009"] + [
        f"{name} | {3 * i + 12}.{i} | {1000 + 37 * i:,} | {i + 1}.5"
        for i, name in enumerate(["North East", "North West", "Yorkshire", "East Midlands", "London", "South West"])
    ]
    page = _drawn(rows)
    regions, x_height = find_aligned(page)
    assert 6 <= x_height <= 14
    assert len(regions) == 1
    assert regions[0].columns == 4 and regions[0].rows == 7
    assert iou(regions[0].box, (120, 200, 120 + 670 + 60, 200 + 6 * 34 + 20)) > 0.7
    prose = "The layout detector reads tables by their look, and on a blurred scan it loses some of them"
    assert find_aligned(_drawn([prose] * 20, pitch=28))[0] == []


def test_a_table_with_dotted_rules_between_its_rows_is_found_whole() -> None:
    """Dotted rules between the rows (a photocopy breaks plain ones into dots too) were joined
    into one long flat blob per rule, read as a line of body text and as a dash bridging the
    columns: the table was cut at its first rule (dev eu-018 p1, photocopy)."""
    rows = ["Region | 2007 | 2008 | 2009"] + [
        f"{name} | {3 * i + 12}.{i} | {1000 + 37 * i:,} | {i + 1}.5"
        for i, name in enumerate(["North East", "North West", "Yorkshire", "East Midlands", "London", "South West"])
    ]
    page = _drawn(rows)
    draw = ImageDraw.Draw(page)
    rng = random.Random(0)
    for i in range(len(rows) - 1):
        y = 200 + i * 34 + 22  # just under the row's letters
        for x in range(120, 120 + 730, 4):
            if rng.random() < 0.8:  # some dots lost
                draw.rectangle((x, y, x + 1, y), fill=0)
    regions, _ = find_aligned(page)
    # the box holds the table, its heading line included; a dot row touching a comma still joins
    # two of one row's cells, so that row and the one above it are taken in as headings (before
    # the rules' pieces were dropped as lines, they were counted as rows and the box ran past)
    assert len(regions) == 1 and regions[0].rows >= 5
    assert iou(regions[0].box, (120, 204, 120 + 670 + 50, 200 + 6 * 34 + 24)) > 0.9


def test_the_pieces_a_photocopy_left_of_dotted_rules_do_not_cut_the_table() -> None:
    """Between the rows, what a photocopy left of dotted rules: flat pieces a few x-heights long
    wherever dots survived, as flat as dashes, bridging the column gutters. A line of them was
    read as a row whose gutters match no column and cut the table (dev eu-018 p1's second
    table, photocopy seed 0: TEDS 0.398 on a box over half of it)."""
    widths = [120.0, 50.0, 50.0, 50.0]
    table = _grid(100, 200, rows=10, widths=widths)
    rng = random.Random(3)
    pieces: list[BBox] = []
    for r in range(9):
        y = 200 + r * 30 + 2 * XH + 4  # under the row's letters
        x = 100.0
        while x < 100 + sum(widths) + 3 * 40:
            w = rng.uniform(0.5, 5.5) * XH
            pieces.append((x, y, x + w, y + 2))
            x += w + rng.uniform(1.0, 4.0) * XH
    assert all(b in text_rows(pieces + table, XH)[0] or b not in pieces for b in table)
    regions = aligned_regions(table + pieces, XH)
    assert [(r.rows, r.columns) for r in regions] == [(10, 4)]
    assert regions[0].box == (100, 200, 100 + sum(widths) + 3 * 40, 200 + 9 * 30 + 2 * XH)
    rows = text_rows(table + pieces, XH)
    assert len(rows) == 10 and all(len(r) == 4 for r in rows)


def test_grid_boxes_lying_in_a_region_grow_to_it_and_become_one() -> None:
    """On a page the detector found nothing on, the ruled grids gave the header band of a table,
    in two parts: both lie inside the table's aligned region, grow to it, and are one box. A grid
    box outside every region, and a region holding no box, are left as they are."""
    region = Region((165.0, 833.0, 1020.0, 1150.0), 12, 13)
    elsewhere = Region((165.0, 1300.0, 1020.0, 1500.0), 8, 5)
    left = TableBox((170.0, 833.0, 672.0, 928.0), 0.25, False)
    right = TableBox((710.0, 833.0, 1020.0, 880.0), 0.25, False)
    lone = TableBox((170.0, 100.0, 600.0, 180.0), 0.25, False)
    boxes, grown = parts_into_regions([left, right, lone], [region, elsewhere])
    assert grown == 2
    assert sorted(b.bbox for b in boxes) == sorted([lone.bbox, region.box])


def test_grid_boxes_of_whole_tables_are_not_grown_into_their_neighbours() -> None:
    """Noise, seed 2, dev eu-001 p3: the detector found nothing, the grids found both tables
    whole, and the lower table's aligned region ran up into the upper one's last row. A box as
    high as its region is a whole table, and a box is never grown over another table."""
    upper = TableBox((195.0, 146.0, 996.0, 698.0), 0.25, False)
    lower = TableBox((201.0, 712.0, 990.0, 993.0), 0.25, False)
    region = Region((195.0, 682.0, 996.0, 993.0), 12, 4)
    assert parts_into_regions([upper, lower], [region]) == ([upper, lower], 0)
    band = TableBox((201.0, 712.0, 990.0, 780.0), 0.25, False)  # only the lower table's header band
    assert parts_into_regions([upper, band], [region]) == ([upper, band], 0)  # it would reach over the upper
