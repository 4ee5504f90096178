"""Ruled grids as a second table finder (models.ruled_tables, worker.core.ruled_boxes): drawn
pages, photocopied by the scan simulator, and the rules that reconcile grids with the detector."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from models.ruled_tables import (
    MIN_LONE_HEIGHT_IN,
    PAPER,
    clear_cut_lines,
    cut_at_foreign_rules,
    dashes_bridged,
    find_grids,
    frames,
    is_low,
    trim_to_grid,
)
from models.rules import DARK, rule_length, runs
from worker.core.detections import TableBox
from worker.core.geometry import iou
from worker.core.ruled_boxes import held_grid, reconcile, with_uncovered
from worker.evaluation.degrade import degrade

DPI = 144


def _page(tables: list[tuple[int, int, int, int, int]], frames: list[tuple[int, int, int, int]] = ()) -> Image.Image:
    """A white page with ruled tables (x0, y0, rows, cols, cell width; 2-px rules, a 1-pt rule at
    144 dpi), text in their cells, and
    `frames`: boxes drawn round a paragraph (two rules each way: not a table)."""
    page = Image.new("L", (1190, 1684), 255)
    draw = ImageDraw.Draw(page)
    for x0, y0, rows, cols, cw in tables:
        rh = 22
        for r in range(rows + 1):
            draw.line([(x0, y0 + r * rh), (x0 + cols * cw, y0 + r * rh)], fill=0, width=2)
        for c in range(cols + 1):
            draw.line([(x0 + c * cw, y0), (x0 + c * cw, y0 + rows * rh)], fill=0, width=2)
        for r in range(rows):
            for c in range(cols):
                draw.text((x0 + c * cw + 6, y0 + r * rh + 5), f"{r * 10 + c} 000", fill=0)
    for x0, y0, x1, y1 in frames:
        draw.rectangle([x0, y0, x1, y1], outline=0)
        for i in range(4):
            draw.text((x0 + 8, y0 + 8 + 16 * i), "a paragraph of prose inside a frame", fill=0)
    return page


TWO_TABLES = [(150, 300, 6, 4, 160), (150, 520, 9, 3, 200)]  # one above the other, 30 px apart


def test_two_ruled_tables_on_a_photocopy_are_two_grids_with_their_boxes() -> None:
    page = _page(TWO_TABLES, frames=[(150, 900, 700, 990)])
    expected = [(150, 300, 790, 432), (150, 520, 750, 718)]
    for seed in (0, 1, 2):  # bold or thin strokes, specks, ink drop-outs in the rules
        copy = degrade(page, DPI, "photocopy", "moderate", seed=seed).image
        grids = find_grids(copy, DPI)
        assert len(grids) == 2, (seed, grids)  # the framed paragraph (2 x 2 rules) is not a table
        for grid, box in zip(grids, expected):
            assert iou(grid.box, box) > 0.95, (seed, grid, box)
        # every rule counted (a rule broken by drop-outs may count twice)
        assert [g.vertical for g in grids] == [5, 4] and grids[0].horizontal >= 7 and grids[1].horizontal >= 10


def _dashed(draw: ImageDraw.ImageDraw, a: tuple[int, int], b: tuple[int, int], dash: int = 4, gap: int = 4) -> None:
    """A rule from `a` to `b` (horizontal or vertical) drawn as dashes `gap` px apart."""
    (x0, y0), (x1, y1) = a, b
    length = max(x1 - x0, y1 - y0)
    for t in range(0, length, dash + gap):
        e = min(t + dash, length)
        draw.line([(x0 + t, y0), (x0 + e, y0)] if y0 == y1 else [(x0, y0 + t), (x0, y0 + e)], fill=0)


def test_a_two_row_table_with_dashed_rules_is_a_grid() -> None:
    """eu-007 p5's photocopy: a two-row table whose thin rules came out as dashes 4 px apart,
    more than a one-pixel closing joins. The dashes are bridged; the words in its cells, joined
    by the same bridging, are letters tall and never count as rules. On a grey page (the same
    table, antialiased) dashes are drawn so, a chart's gridlines, and are left alone."""
    page = Image.new("L", (1190, 1684), 255)
    draw = ImageDraw.Draw(page)
    x0, y0, widths, rh = 300, 180, (150, 90, 120, 200), 26
    xs = [x0 + sum(widths[:i]) for i in range(len(widths) + 1)]
    for r in range(3):
        _dashed(draw, (x0, y0 + r * rh), (xs[-1], y0 + r * rh))
    for x in xs:
        _dashed(draw, (x, y0), (x, y0 + 2 * rh))
    for r in range(2):
        for x in xs[:-1]:
            draw.text((x + 8, y0 + r * rh + 7), "Turnover 6028", fill=0)
    assert find_grids(page, DPI, MIN_LONE_HEIGHT_IN) == []
    copy = page.point(lambda v: 0 if v < 128 else 255)  # black and white, as a photocopy leaves it
    grids = find_grids(copy, DPI, MIN_LONE_HEIGHT_IN)
    assert len(grids) == 1, grids
    assert iou(grids[0].box, (x0, y0, xs[-1], y0 + 2 * rh)) > 0.9, grids
    assert (grids[0].horizontal, grids[0].vertical) == (3, 5)


def _shaded_table(fill: int, shades: list[tuple[int, int, int, int]], white_rows: tuple[int, ...] = ()) -> Image.Image:
    """A ruled table of 7 rows and 4 columns at (150, 300), its `shades` (first column, first row,
    last column, last row: cells) filled `fill` grey, the text of `white_rows` in white."""
    page = Image.new("L", (1190, 1684), 255)
    draw = ImageDraw.Draw(page)
    x0, y0, cw, rh = 150, 300, 160, 22
    for c0, r0, c1, r1 in shades:
        draw.rectangle((x0 + c0 * cw, y0 + r0 * rh, x0 + (c1 + 1) * cw, y0 + (r1 + 1) * rh), fill=fill)
    for r in range(8):
        draw.line([(x0, y0 + r * rh), (x0 + 4 * cw, y0 + r * rh)], fill=0, width=2)
    for c in range(5):
        draw.line([(x0 + c * cw, y0), (x0 + c * cw, y0 + 7 * rh)], fill=0, width=2)
    for r in range(7):
        for c in range(4):
            draw.text((x0 + c * cw + 6, y0 + r * rh + 5), f"{r * 10 + c} 000", fill=255 if r in white_rows else 0)
    return page


def _banded(fill: int) -> Image.Image:
    """Its two header rows and total row shaded, their labels in white."""
    return _shaded_table(fill, [(0, 0, 3, 1), (0, 6, 3, 6)], white_rows=(0, 1, 6))


def test_a_table_with_shaded_bands_photocopied_is_a_grid() -> None:
    """eu-020 p3's photocopy (seed 1): the shaded header and total bands came out as fields of
    dots, every dot column a short vertical rule, and the table's grid was packed too tight for a
    table; the detector found nothing either. The grid is found again with the screens' dots
    taken out (`models.halftone.screen_mask`), its bands' outer rules included."""
    for fill, seeds in ((180, range(6)), (160, (0, 1, 2, 3, 5))):
        page = _banded(fill)
        for seed in seeds:
            copy = degrade(page, DPI, "photocopy", "moderate", seed=seed).image
            grids = find_grids(copy, DPI, MIN_LONE_HEIGHT_IN)
            assert [iou(g.box, (150, 300, 790, 454)) > 0.8 for g in grids] == [True], (fill, seed, grids)


def test_specks_on_a_grey_shade_are_no_dashed_rule() -> None:
    """eu-020 p3's noise scan: sensor noise leaves specks darker than ink all over a grey shaded
    column, and bridging them as a dashed rule's dashes drew rules across the column. A dashed
    rule's gaps are paper; the specks' are grey."""
    length = rule_length(DPI)
    for fill, strength in ((170, "moderate"), (185, "strong")):
        for seed in range(6):
            scan = degrade(_shaded_table(fill, [(0, 0, 0, 6)]), DPI, "noise", strength, seed=seed).image
            grey = np.asarray(scan)[302:452, 154:308]  # inside the shaded column, off its rules
            dark = grey < DARK
            bridged = dashes_bridged(dark, grey >= PAPER, DPI, length)
            assert not (runs(bridged, length) & ~runs(dark, length)).any(), (fill, strength, seed)
    dashes = np.zeros((20, 200), dtype=bool)
    dashes[10, [x for x in range(200) if x % 8 < 4]] = True  # 4 px dashes 4 px apart, on paper
    assert runs(dashes_bridged(dashes, ~dashes, DPI, length), 190)[10].all()


def _flowchart() -> Image.Image:
    """Boxes of text joined by arrows, in three rows of different heights (eu-014 p1's figure)."""
    page = Image.new("L", (1190, 1684), 255)
    draw = ImageDraw.Draw(page)
    boxes = {
        "Municipal taxes": (397, 453, 605, 500),
        "Municipalities": (662, 453, 867, 500),
        "Taxes": (128, 536, 205, 576),
        "State budget": (240, 536, 367, 576),
        "Ministry of Education": (400, 536, 613, 576),
        "Education providers": (660, 536, 895, 628),
        "Institutions": (927, 536, 1070, 625),
        "National Board of Education": (347, 635, 670, 680),
    }
    for text, (x0, y0, x1, y1) in boxes.items():
        draw.rectangle((x0, y0, x1, y1), outline=0, width=2)
        draw.text((x0 + 12, (y0 + y1) // 2 - 5), text, fill=0)
    for x0, x1, y in ((205, 240, 556), (367, 400, 556), (613, 660, 556), (895, 927, 556), (605, 662, 477)):
        draw.line([(x0, y), (x1, y)], fill=0, width=2)
        draw.polygon([(x1, y), (x1 - 9, y - 5), (x1 - 9, y + 5)], fill=0)
    for x, y0, y1 in ((765, 500, 536), (510, 635, 576)):
        draw.line([(x, y0), (x, y1)], fill=0, width=2)
    return page


def test_a_photocopied_flowchart_is_no_table() -> None:
    """eu-014 p1's photocopy: a flowchart's boxes, joined through their arrows, make a grid packed
    too tight for a table, and with the (few) screen dots taken out it passed for one: a false
    table on a page that holds none. The second look keeps whole tables only, with two rules
    across their width."""
    for seed in range(8):
        copy = degrade(_flowchart(), DPI, "photocopy", "moderate", seed=seed).image
        assert find_grids(copy, DPI, MIN_LONE_HEIGHT_IN) == [], seed


def test_a_chart_or_photo_dense_with_lines_is_not_a_grid() -> None:
    page = Image.new("L", (1190, 1684), 255)
    draw = ImageDraw.Draw(page)
    for i in range(60):  # gridlines 4 px apart: a chart's or a halftone's, not rows of text
        draw.line([(200, 300 + 4 * i), (600, 300 + 4 * i)], fill=0)
        draw.line([(200 + 4 * i, 300), (200 + 4 * i, 540)], fill=0)
    assert find_grids(page, DPI) == []


def test_a_box_over_two_grids_is_split_and_a_missed_grid_is_added() -> None:
    grids = [(150.0, 300.0, 790.0, 432.0), (150.0, 520.0, 750.0, 718.0), (150.0, 900.0, 700.0, 1100.0)]
    merged = TableBox((140.0, 290.0, 800.0, 730.0), 0.81, False)  # the detector's one box over two tables
    out, split, added = reconcile([merged], grids, 0.5)
    assert (split, added) == (1, 1)
    assert [b.bbox for b in out] == grids
    assert [b.score for b in out] == [0.81, 0.81, 0.5]


def test_a_frame_whose_middle_rules_a_photocopy_broke_is_one_table_and_two_tables_are_two() -> None:
    """eu-007 p5's table on a photocopy (seed 1): thin rules broke over three rows, so its grid
    came out as two, one above the other, and the detector's box over the whole table was split
    into them. The side rules run on, dotted, through the rows between: one frame, one table.
    Two tables with a caption between them, same sides, stay two."""
    page = _page([(150, 300, 12, 4, 160)])
    draw = ImageDraw.Draw(page)
    draw.rectangle((147, 366 - 1, 793, 432 + 1), fill=255)  # rows 3 to 6: every rule gone ...
    for x in (150, 790):  # ... but the sides, dotted
        for y in range(366, 434, 3):
            draw.rectangle((x, y, x + 1, y), fill=0)
    for y in (366 + 11, 388 + 11, 410 + 11):
        draw.text((156, y - 6), "a row", fill=0)
    # the plain rules make two grids, and bridging adds grids only where they made none
    grids = [g.box for g in find_grids(page, DPI)]
    assert len(grids) == 2, grids
    assert [iou(g, e) > 0.95 for g, e in zip(grids, [(150, 300, 792, 366), (150, 432, 792, 566)])] == [True, True]
    # the two grids the thin rules broke it into are one frame
    joined = frames(page, grids, DPI)
    assert len(joined) == 1 and iou(joined[0], (150, 300, 790, 564)) > 0.97
    box = TableBox((140.0, 290.0, 800.0, 574.0), 0.9, False)
    assert reconcile([box], grids, 0.5, 0.0, joined)[:2] == ([box], 0)
    assert reconcile([box], grids, 0.5)[1] == 1  # without the frames: split, as before
    two = _page([(150, 300, 4, 4, 160), (150, 440, 4, 4, 160)])
    ImageDraw.Draw(two).text((150, 405), "Table 2: a caption between the tables", fill=0)
    grids = [g.box for g in find_grids(two, DPI, MIN_LONE_HEIGHT_IN)]
    assert len(grids) == 2 and frames(two, grids, DPI) == grids


def test_a_table_of_two_ruled_rows_is_found_as_a_low_grid_and_only_added() -> None:
    """Two rows of 22 px (0.31 in at 144 dpi): under the height of a table's grid, but a table of
    its own where no box covers it (noise scans: the detector missed one, dev eu-007 p5)."""
    page = _page([(300, 180, 2, 4, 140), (150, 520, 9, 3, 200)])
    assert [g.box[1] for g in find_grids(page, DPI)] == [520.0]  # the low one is no grid
    for seed in (0, 1, 2):
        noisy = degrade(page, DPI, "noise", "moderate", seed=seed).image
        grids = find_grids(noisy, DPI, MIN_LONE_HEIGHT_IN)
        assert [is_low(g, DPI) for g in grids] == [True, False], (seed, grids)
        assert iou(grids[0].box, (300, 180, 860, 224)) > 0.9, (seed, grids)
    low = (300.0, 180.0, 860.0, 224.0)
    missed, _ = with_uncovered([TableBox((150.0, 520.0, 750.0, 718.0), 0.9, False)], [low], 0.5)
    assert missed[-1] == TableBox(low, 0.5, False)
    # inside a detected table (its ruled header band): it adds nothing
    covered = [TableBox((280.0, 170.0, 880.0, 700.0), 0.9, False)]
    assert with_uncovered(covered, [low], 0.5) == (covered, 0)


def test_a_box_holding_one_frame_and_cutting_into_the_next_is_drawn_back_between_them() -> None:
    """eu-003 p1 on a photocopy (seed 1): the detector's box held the lower table and the bottom
    half of the table above it, and the structure model read 4 x 6 as 12 x 8. A table's box never
    cuts through another table's frame: its edge goes back to the paper between the two."""
    upper, lower = (150.0, 300.0, 790.0, 432.0), (150.0, 520.0, 750.0, 718.0)
    into_upper = TableBox((140.0, 360.0, 800.0, 730.0), 0.76, False)
    out, split, _ = reconcile([into_upper], [upper, lower], 0.5)
    assert split == 0 and out[0].bbox == (140.0, 476.0, 800.0, 730.0)
    into_lower = TableBox((140.0, 290.0, 800.0, 600.0), 0.8, False)
    assert reconcile([into_lower], [upper, lower], 0.5)[0][0].bbox == (140.0, 290.0, 800.0, 476.0)
    side = (820.0, 300.0, 1100.0, 432.0)  # a table beside it, cut into on the right
    assert reconcile([TableBox((140.0, 290.0, 900.0, 440.0), 0.8, False)], [upper, side], 0.5)[0][0].bbox == (
        140.0,
        290.0,
        805.0,
        440.0,
    )
    # a box holding no whole frame is not drawn back: it is widened to the one it mostly holds
    part = TableBox((140.0, 360.0, 800.0, 600.0), 0.7, False)
    assert reconcile([part], [upper, lower], 0.5)[0][0].bbox == (140.0, 300.0, 800.0, 600.0)


def test_a_box_cutting_a_grid_is_widened_and_one_holding_its_grid_is_kept() -> None:
    grid = (150.0, 300.0, 790.0, 600.0)
    cut = TableBox((140.0, 290.0, 800.0, 500.0), 0.7, False)  # the last rows cut off
    out, _, added = reconcile([cut], [grid], 0.5)
    assert added == 0 and out == [TableBox((140.0, 290.0, 800.0, 600.0), 0.7, False)]
    # a box with an unruled title above its frame keeps the title
    titled = TableBox((140.0, 250.0, 800.0, 610.0), 0.9, False)
    assert reconcile([titled], [grid], 0.5)[0] == [titled]
    # two boxes that each held half the frame become one table
    halves = [TableBox((140.0, 290.0, 800.0, 460.0), 0.8, False), TableBox((140.0, 440.0, 800.0, 610.0), 0.6, False)]
    out, _, _ = reconcile(halves, [grid], 0.5)
    assert len(out) == 1 and out[0].score == 0.8 and iou(out[0].bbox, grid) > 0.9


def test_blank_specked_paper_beside_a_grid_is_trimmed_and_a_title_is_kept() -> None:
    page = _page([(150, 300, 6, 4, 160)])
    draw = ImageDraw.Draw(page)
    draw.text((150, 270), "Table 1: thresholds for releases to air", fill=0)
    rng = np.random.default_rng(0)
    for x, y in zip(rng.integers(820, 1150, 12), rng.integers(260, 450, 12)):  # specks on the paper
        draw.rectangle([int(x), int(y), int(x) + 2, int(y) + 2], fill=0)
    grid = find_grids(page, DPI)[0].box
    drawn = (140.0, 262.0, 1160.0, 440.0)  # the detector's box, twice the table's width
    assert held_grid(drawn, [grid]) == grid
    x0, y0, x1, y1 = trim_to_grid(page, drawn, grid, DPI)
    assert abs(x1 - grid[2]) < 0.1 * DPI  # the specked paper on the right is gone
    assert y0 < 272  # the title line above the frame stays in
    assert (x0, y1) == (140.0, 440.0) or (x0 <= grid[0] and y1 >= grid[3])


def _headed_table(rule_width: tuple[int, int] = (60, 1130)) -> tuple[Image.Image, tuple[float, ...]]:
    """A ruled table (frame at y 300) under a heading and a rule across the page 20 px above it,
    as a report's section heading sits over its table; its grid's box."""
    page = _page([(150, 300, 6, 4, 160)])
    draw = ImageDraw.Draw(page)
    draw.text((500, 262), "Heavy metals", fill=0)
    draw.line([(rule_width[0], 280), (rule_width[1], 280)], fill=0, width=2)
    return page, find_grids(page, DPI)[0].box


def test_a_crop_reaching_past_a_page_rule_into_a_heading_is_cut_at_the_rule() -> None:
    page, grid = _headed_table()
    for seed in (0, 1, 2):  # bold or thin strokes: the rule is still found
        copy = degrade(page, DPI, "photocopy", "moderate", seed=seed).image
        box = (grid[0] - 8, 268.0, grid[2] + 8, grid[3] + 8)  # the box rose into the heading
        x0, y0, x1, y1 = cut_at_foreign_rules(copy, box, grid, DPI, (8.0, 8.0))
        assert 282 + 8 <= y0 <= grid[1], (seed, y0)  # the crop (8 px above the box) starts below the rule
        assert (x0, x1, y1) == (box[0], box[2], box[3])
    # a crop that holds the rule but no ink beyond it is left as it is (a clean page's box)
    box = (grid[0] - 8, 285.0, grid[2] + 8, grid[3] + 8)
    assert cut_at_foreign_rules(page, box, grid, DPI, (8.0, 8.0)) == box


def test_a_rule_ending_at_the_table_frame_is_the_tables_own_and_stays() -> None:
    page, grid = _headed_table(rule_width=(150, 790))  # as wide as the table: its own top rule
    box = (grid[0] - 8, 268.0, grid[2] + 8, grid[3] + 8)
    assert cut_at_foreign_rules(page, box, grid, DPI, (8.0, 8.0)) == box


def test_a_crop_edge_cutting_a_caption_moves_to_the_blank_paper_and_a_whole_title_stays() -> None:
    page = _page([(150, 300, 6, 4, 160)])
    draw = ImageDraw.Draw(page)
    draw.text((150, 276), "Table 3 - European ABCP issuance", fill=0)  # glyph rows about 278-286
    grid = find_grids(page, DPI)[0].box
    cut = (grid[0] - 8, 290.0, grid[2] + 8, grid[3] + 8)  # its crop (8 px more) starts mid-caption
    y0 = clear_cut_lines(page, cut, grid, DPI, (8.0, 8.0))[1]
    ink = np.asarray(page)[int(y0 - 8) : int(grid[1]) - 2, 100:900] < 128
    assert 290 < y0 <= grid[1] and not ink.any()  # the crop starts on paper, the cut line left out
    whole = (grid[0] - 8, 284.0, grid[2] + 8, grid[3] + 8)  # its crop holds the caption whole
    assert clear_cut_lines(page, whole, grid, DPI, (8.0, 8.0)) == whole


def test_a_page_rule_along_the_crop_edge_is_no_cut_line() -> None:
    page, grid = _headed_table()  # the page rule at y 280-281, the frame at 300
    box = (grid[0] - 8, 288.0, grid[2] + 8, grid[3] + 8)  # its crop's first rows are the rule
    assert clear_cut_lines(page, box, grid, DPI, (8.0, 8.0)) == box
