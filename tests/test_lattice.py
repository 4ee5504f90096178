"""A fully ruled table read from its rules where the model's cells run across them (worker.core.lattice)."""

from __future__ import annotations

import json

import pytest

from worker.core.lattice import find_lattice, off_rules
from worker.core.reconstruct import reconstruct
from worker.core.replay import ReplayError, parse_payload, payload
from worker.core.token_grid import StructureToken, token_grid
from worker.core.types import RulingLines, StructureObject, TableGrid, Word

# a frame 300 x 260: a title row over all three columns, a header row whose labels wrap onto a
# second line, three body rows whose labels wrap onto two or three lines
H = (0.0, 30.0, 80.0, 140.0, 200.0, 260.0)
V = (0.0, 100.0, 200.0, 300.0)
FULL_H = tuple(((0.0, 300.0),) for _ in H)
V_RUNS = (((0.0, 260.0),), ((30.0, 260.0),), ((30.0, 260.0),), ((0.0, 260.0),))
LINES = RulingLines(H, V, FULL_H, V_RUNS)


def _w(text: str, x0: float, y0: float, x1: float | None = None) -> Word:
    return Word(text, (x0, y0, x1 if x1 is not None else x0 + 9 * len(text), y0 + 14))


WORDS = [
    _w("Survey results", 90, 8, 210),
    *(_w("Region", 10, 36), _w("name", 10, 56), _w("Sales", 110, 36), _w("2023", 110, 56)),
    *(_w("Sales", 210, 36), _w("2024", 210, 56)),
    *(_w("North", 10, 86), _w("coast", 10, 104), _w("area", 10, 122), _w("12", 110, 86), _w("15", 210, 86)),
    *(_w("South", 10, 146), _w("inland", 10, 164), _w("area", 10, 182), _w("7", 110, 146), _w("9", 210, 146)),
    *(_w("East", 10, 206), _w("3", 110, 206), _w("4", 210, 206)),
]
EXPECTED = {
    (0, 0): "Survey results",
    (1, 0): "Region name",
    (1, 1): "Sales 2023",
    (1, 2): "Sales 2024",
    (2, 0): "North coast area",
    (2, 1): "12",
    (2, 2): "15",
    (3, 0): "South inland area",
    (3, 1): "7",
    (3, 2): "9",
    (4, 0): "East",
    (4, 1): "3",
    (4, 2): "4",
}
REPAIR = "grid read from the table's drawn rules: the model's cells crossed or parted them"
SIZE = (300.0, 260.0)


def _tokens(row_boxes: list[tuple[float, float]], head: int = 1) -> list[StructureToken]:
    """A title row over three columns, then one row of three cells per (y0, y1) in `row_boxes`,
    the first `head` of them in the header."""
    out = [StructureToken("<thead>", 0.99), StructureToken("<tr>", 0.99)]
    out += [StructureToken("<td", 0.97, (100.0, 6.0, 250.0, 24.0)), StructureToken(' colspan="3"', 0.96)]
    out += [StructureToken(">", 0.99), StructureToken("</td>", 0.99), StructureToken("</tr>", 0.99)]
    for k, (y0, y1) in enumerate(row_boxes):
        if k == head:
            out += [StructureToken("</thead>", 0.99), StructureToken("<tbody>", 0.99)]
        out.append(StructureToken("<tr>", 0.99))
        out += [StructureToken("<td></td>", 0.98, (x + 8.0, y0, x + 70.0, y1)) for x in V[:3]]
        out.append(StructureToken("</tr>", 0.99))
    return [*out, StructureToken("</tbody>", 0.99)]


def _texts(grid: TableGrid) -> dict[tuple[int, int], str]:
    return {(c.row, c.col): c.text for c in grid.cells if c.text}


def test_rows_the_model_read_across_the_rules_come_from_the_rules():
    # the header's second line read as a row of its own, each body row's box at the foot of
    # its label: the model's rows straddle the rules under them
    tokens = _tokens([(36.0, 50.0), (56.0, 70.0), (118.0, 128.0), (178.0, 190.0), (235.0, 250.0)], head=2)
    misread = token_grid(tokens, WORDS, SIZE, RulingLines(H, V))  # where the rules run not known
    assert misread.n_rows == 6 and _texts(misread)[(4, 0)] == "coast area South"
    grid = token_grid(tokens, WORDS, SIZE, LINES)
    assert REPAIR in grid.repairs
    assert _texts(grid) == EXPECTED
    title = next(c for c in grid.cells if c.row == 0)
    assert title.colspan == 3 and title.is_header
    assert {c.row for c in grid.cells if c.is_header} == {0, 1}


def test_a_header_label_wrapped_onto_two_model_rows_is_one_cell():
    # every body row right; the header's two lines read as two rows inside one ruled cell
    tokens = _tokens([(36.0, 50.0), (56.0, 70.0), (104.0, 136.0), (164.0, 196.0), (222.0, 250.0)], head=2)
    misread = token_grid(tokens, WORDS, SIZE, RulingLines(H, V))
    assert (misread.n_rows, _texts(misread)[(1, 0)], _texts(misread)[(2, 0)]) == (6, "Region", "name")
    grid = token_grid(tokens, WORDS, SIZE, LINES)
    assert REPAIR in grid.repairs
    assert _texts(grid) == EXPECTED


def test_a_model_grid_that_agrees_with_the_rules_is_kept():
    tokens = _tokens([(36.0, 70.0), (86.0, 136.0), (146.0, 196.0), (206.0, 220.0)])
    grid = token_grid(tokens, WORDS, SIZE, LINES)
    assert REPAIR not in grid.repairs
    assert _texts(grid) == EXPECTED


def test_an_open_table_whose_rules_do_not_mark_its_sides_draws_no_lattice():
    # no frame left and right, and only the top and bottom rules reach past the inner ones
    inner = ((100.0, 200.0),)
    h_runs = (FULL_H[0], *(inner for _ in H[1:-1]), FULL_H[-1])
    assert find_lattice(RulingLines(H, V[1:3], h_runs, V_RUNS[1:3]), WORDS) is None
    assert find_lattice(RulingLines(H, V), WORDS) is None  # where the rules run is not known


def test_an_open_sided_table_is_read_from_its_rules_between_the_ends_of_its_rows_rules():
    """Photocopy, dev eu-012 p4 t2: rules across every row, rules between the columns, none
    down the outer edges, and the top rule leaving the stub head open. Most rows' rules start
    and end at the same two x: those are the table's sides. SLANet-plus read the rows a line
    low and a column too many; the rules give the table back."""
    h_runs = (((100.0, 300.0),), *(((0.0, 300.0),) for _ in H[1:]))
    open_sides = RulingLines(H, V[1:3], h_runs, V_RUNS[1:3])
    lattice = find_lattice(open_sides, WORDS)
    assert lattice is not None and (len(lattice.rows), len(lattice.cols)) == (5, 3)
    tokens = _tokens([(36.0, 50.0), (56.0, 70.0), (118.0, 128.0), (178.0, 190.0), (235.0, 250.0)], head=2)
    grid = token_grid(tokens, WORDS, SIZE, open_sides)
    assert REPAIR in grid.repairs
    assert _texts(grid) == EXPECTED
    # a page rule wider than the table is one rule: no side at its ends
    wide = (((-50.0, 350.0),), *(((0.0, 300.0),) for _ in H[1:]))
    lattice = find_lattice(RulingLines(H, V[1:3], wide, V_RUNS[1:3]), WORDS)
    assert lattice is not None and lattice.frame[0] == 0.0 and lattice.frame[2] == 300.0


def test_a_photocopys_break_in_a_rule_is_no_span_and_a_missing_stretch_is():
    broken = list(FULL_H)
    broken[3] = ((0.0, 130.0), (150.0, 300.0))  # 20 px lost under the second column: ink, not a span
    lattice = find_lattice(RulingLines(H, V, tuple(broken), V_RUNS), WORDS)
    assert lattice is not None and all(r.r0 == r.r1 for r in lattice.rects if r.r0 > 0)
    broken[3] = ((0.0, 100.0), (200.0, 300.0))  # not drawn under the second column at all ...
    one_value = [w for w in WORDS if w.text != "7"]  # ... where one value spans both rows
    lattice = find_lattice(RulingLines(H, V, tuple(broken), V_RUNS), one_value)
    assert lattice is not None
    spans = [(r.r0, r.r1, r.c0, r.c1) for r in lattice.rects if (r.r0, r.c0) != (r.r1, r.c1)]
    assert spans == [(0, 0, 0, 2), (2, 3, 1, 1)]


def test_two_texts_clear_of_a_lost_rule_stay_two_cells():
    # the rule under "12" lost over its whole column (a photocopy's drop-out), "7" under it
    broken = list(FULL_H)
    broken[3] = ((0.0, 100.0), (200.0, 300.0))
    lattice = find_lattice(RulingLines(H, V, tuple(broken), V_RUNS), WORDS)
    assert lattice is not None
    assert [(r.r0, r.r1, r.c0, r.c1) for r in lattice.rects if (r.r0, r.c0) != (r.r1, r.c1)] == [(0, 0, 0, 2)]


def test_letters_standing_on_a_rules_line_do_not_draw_it():
    # ink found on the line of the rule at x=100 inside the title row: the title's letters
    v_runs = list(V_RUNS)
    v_runs[1] = ((8.0, 22.0), (30.0, 260.0))
    title = [Word("Survey results", (60.0, 8.0, 240.0, 22.0))]
    lattice = find_lattice(RulingLines(H, V, FULL_H, tuple(v_runs)), title + WORDS[2:])
    assert lattice is not None
    assert (0, 0, 0, 2) in {(r.r0, r.r1, r.c0, r.c1) for r in lattice.rects}


def test_a_gap_that_leaves_no_rectangle_is_no_lattice():
    v_runs = list(V_RUNS)
    v_runs[1] = ((30.0, 80.0), (140.0, 260.0))  # row 2 open between columns 0 and 1 ...
    broken = list(FULL_H)
    broken[3] = ((0.0, 100.0), (200.0, 300.0))  # ... and down into row 3 in column 1 only: an L
    label_only = [w for w in WORDS if w.text not in ("12", "7")]
    assert find_lattice(RulingLines(H, V, tuple(broken), tuple(v_runs)), label_only) is None


def test_a_table_ruled_by_columns_only_is_no_lattice():
    # frame, header rule and column rules; the body's rows of figures are not ruled apart
    h, h_runs = (0.0, 30.0, 200.0), (((0.0, 300.0),),) * 3
    v_runs = (((0.0, 200.0),),) * 4
    body = [_w(str(10 + r), 10 + 100 * c, 40 + 20 * r) for r in range(6) for c in range(3)]
    header = [_w("Region", 10, 8), _w("2023", 110, 8), _w("2024", 210, 8)]
    assert find_lattice(RulingLines(h, V, h_runs, v_runs), header + body) is None


def test_ink_that_starts_and_stops_inside_cells_is_no_rule():
    # a "rule" found in the header's bold text, between its two lines: its stretches end inside
    # the cells (and it lies far enough from the rules beside it to be no double rule)
    h = (0.0, 30.0, 55.0, 80.0, 140.0, 200.0, 260.0)
    h_runs = list(FULL_H)
    h_runs.insert(2, ((20.0, 80.0), (130.0, 170.0), (230.0, 280.0)))
    lattice = find_lattice(RulingLines(h, V, tuple(h_runs), V_RUNS), WORDS)
    assert lattice is not None and len(lattice.rows) == 5


# one header line between rules 30 and 56: a letter's stroke on a rule's line in it joins the rule below
H1 = (0.0, 30.0, 56.0, 120.0, 180.0)
H1_RUNS = (((0.0, 300.0),),) * 5
BODY1 = [
    _w(t, 10 + 100 * c, 64 + 60 * r)
    for r, row in enumerate((("North", "12", "15"), ("South", "7", "9")))
    for c, t in enumerate(row)
]


def _v1_runs(k: int, start: float) -> tuple[tuple[tuple[float, float], ...], ...]:
    runs = [((0.0, 180.0),), ((30.0, 180.0),), ((30.0, 180.0),), ((0.0, 180.0),)]
    runs[k] = ((start, 180.0),)
    return tuple(runs)


def test_a_letters_stroke_between_two_words_of_a_phrase_is_no_wall():
    # "number of | franchisors" over columns 0 and 1: the "f" stands on the line of the rule below
    words = [_w("number", 40, 36, 86), _w("of", 90, 36, 98), _w("franchisors", 102, 36, 190), *BODY1]
    lines = RulingLines(H1, V, H1_RUNS, _v1_runs(1, 38.0))
    held = find_lattice(lines, words, [(0.0, 30.0, 200.0, 56.0)])  # the model read one label
    assert held is not None and (1, 1, 0, 1) in {(r.r0, r.r1, r.c0, r.c1) for r in held.rects}
    alone = find_lattice(lines, words)  # the model read two cells ("1980** | By"): two cells
    assert alone is not None and (1, 1, 0, 1) not in {(r.r0, r.r1, r.c0, r.c1) for r in alone.rects}
    apart = [_w("number", 30, 36, 76), _w("of", 80, 36, 88), _w("franchisors", 112, 36, 190), *BODY1]
    lattice = find_lattice(lines, apart, [(0.0, 30.0, 200.0, 56.0)])
    assert lattice is not None  # a cell's padding either side of the rule: two cells, whatever the model
    assert (1, 1, 0, 1) not in {(r.r0, r.r1, r.c0, r.c1) for r in lattice.rects}


def test_a_word_close_against_a_rule_follows_the_models_reading():
    # "1991" centred over columns 1 and 2, its last "1" on the rule's line in the header row
    words = [_w("1991", 176, 38, 208), *BODY1]
    lines = RulingLines(H1, V, H1_RUNS, _v1_runs(2, 38.0))
    held = find_lattice(lines, words, [(100.0, 30.0, 300.0, 56.0)])
    assert held is not None and (1, 1, 2) in {
        (r.r0, r.c0, r.c1) for r in held.rects
    }  # the model's span: the rule stops
    alone = find_lattice(lines, words)
    assert alone is not None and (1, 1, 2) not in {(r.r0, r.c0, r.c1) for r in alone.rects}  # a figure against it


def test_a_rule_the_ocr_read_as_1_is_no_text():
    lattice = find_lattice(LINES, WORDS)
    assert lattice is not None
    ones = [Word("1", (99.0, 88.0, 101.0, 104.0)), Word("1", (199.0, 150.0, 201.0, 166.0))]
    assert off_rules(lattice, WORDS + ones) == WORDS


def test_table_transformers_rows_across_the_rules_come_from_the_rules_too():
    # the same lattice read by Table Transformer: its row boxes a label's line off the rules
    objects = [StructureObject("table", 0.99, (0.0, 0.0, 300.0, 260.0))]
    objects += [
        StructureObject("table row", 0.9, (0.0, a, 300.0, b))
        for a, b in ((0, 30), (30, 50), (50, 112), (112, 172), (172, 232), (232, 260))
    ]
    objects += [StructureObject("table column", 0.9, (x, 0.0, x + 100.0, 260.0)) for x in V[:3]]
    objects += [
        StructureObject("table spanning cell", 0.9, (0.0, 0.0, 300.0, 30.0)),
        StructureObject("table column header", 0.9, (0.0, 0.0, 300.0, 80.0)),
    ]
    misread = reconstruct(objects, WORDS, SIZE, lines=RulingLines(H, V))
    assert _texts(misread)[(2, 0)] == "name North coast"
    grid = reconstruct(objects, WORDS, SIZE, lines=LINES)
    assert REPAIR in grid.repairs
    assert _texts(grid) == EXPECTED
    assert {c.row for c in grid.cells if c.is_header} == {0, 1}


def test_one_column_of_figures_read_as_two_is_one_again():
    # the model parts the last column at x=250: one row's figure sits right of it, the rest left,
    # all of them overlapping across it (one column of figures, no rule between)
    words = [w for w in WORDS if w.text not in ("15", "9", "4")]
    words += [_w("15.5%", 212, 86), _w("9.25%", 236, 146), _w("4.1%", 214, 206)]
    boxes = [(36.0, 70.0), (86.0, 136.0), (146.0, 196.0), (206.0, 220.0)]
    out = [StructureToken("<thead>", 0.99), StructureToken("<tr>", 0.99)]
    out += [StructureToken("<td", 0.97, (100.0, 6.0, 250.0, 24.0)), StructureToken(' colspan="4"', 0.96)]
    out += [StructureToken(">", 0.99), StructureToken("</td>", 0.99), StructureToken("</tr>", 0.99)]
    for k, (y0, y1) in enumerate(boxes):
        if k == 1:
            out += [StructureToken("</thead>", 0.99), StructureToken("<tbody>", 0.99)]
        out.append(StructureToken("<tr>", 0.99))
        out += [
            StructureToken("<td></td>", 0.98, (x0, y0, x1, y1))
            for x0, x1 in ((8, 70), (108, 170), (208, 248), (252, 296))
        ]
        out.append(StructureToken("</tr>", 0.99))
    tokens = [*out, StructureToken("</tbody>", 0.99)]
    misread = token_grid(tokens, words, SIZE, RulingLines(H, V))
    assert misread.n_cols == 4
    grid = token_grid(tokens, words, SIZE, LINES)
    assert REPAIR in grid.repairs and grid.n_cols == 3
    assert [_texts(grid)[(r, 2)] for r in (2, 3, 4)] == ["15.5%", "9.25%", "4.1%"]


def test_a_frame_the_crop_cut_open_is_no_lattice():
    # the crop starts under the title row's top rule: the title row's rules run up past the
    # first rule found, to the title's words
    cut = RulingLines(H[1:], V, FULL_H[1:], V_RUNS)
    assert find_lattice(cut, WORDS) is None
    # a rule's piece read as text just past the frame is no table beyond it
    assert find_lattice(LINES, [*WORDS, Word("1", (299.0, 100.0, 301.0, 102.0))]) is not None


def test_where_each_rule_is_drawn_is_stored_for_the_replay():
    stored = json.loads(json.dumps(payload(SIZE, [], WORDS, lines=LINES)))
    assert stored["lines"]["h_runs"][0] == [[0.0, 300.0]]
    assert parse_payload(stored).lines == LINES
    stored["lines"]["v_runs"] = stored["lines"]["v_runs"][:2]  # one entry per rule, or a clear error
    with pytest.raises(ReplayError, match="one entry per rule"):
        parse_payload(stored)
    del stored["lines"]["v_runs"], stored["lines"]["h_runs"]  # files written before: positions only
    assert parse_payload(stored).lines == RulingLines(H, V)


def test_a_double_rule_drawn_apart_is_one_boundary():
    v = (0.0, 92.0, 108.0, 200.0, 300.0)  # the rule after the first column drawn twice, 16 px apart
    v_runs = (V_RUNS[0], V_RUNS[1], V_RUNS[1], V_RUNS[2], V_RUNS[3])
    lattice = find_lattice(RulingLines(H, v, FULL_H, v_runs), WORDS)
    assert lattice is not None and len(lattice.cols) == 3
    assert lattice.cols[0].hi == lattice.cols[1].lo == 100.0


def test_two_tables_in_one_crop_are_no_one_lattice():
    # small print (8 px): the frame's sides broken for 30 px between two tables, a caption between
    small = [Word(w.text, (w.bbox[0], w.bbox[1], w.bbox[2], w.bbox[1] + 8)) for w in WORDS]
    v_runs = (
        ((0.0, 125.0), (155.0, 260.0)),
        ((30.0, 125.0), (155.0, 260.0)),
        ((30.0, 260.0),),
        ((0.0, 125.0), (155.0, 260.0)),
    )
    assert find_lattice(RulingLines(H, V, FULL_H, v_runs), small) is None
    bridged = (
        ((0.0, 125.0), (140.0, 260.0)),
        ((30.0, 125.0), (140.0, 260.0)),
        ((30.0, 260.0),),
        ((0.0, 125.0), (140.0, 260.0)),
    )
    assert find_lattice(RulingLines(H, V, FULL_H, bridged), small) is not None  # 15 px: a drop-out


def test_columns_at_gutters_the_rules_do_not_draw_keep_the_models_grid():
    # the rule between the last two columns too light to be found: the lattice sees one column
    # there, the model two, at a gutter a text height wide in every body row
    lines = RulingLines(H, (0.0, 100.0, 300.0), FULL_H, (V_RUNS[0], V_RUNS[1], V_RUNS[3]))
    tokens = _tokens([(36.0, 70.0), (86.0, 136.0), (146.0, 196.0), (206.0, 220.0)])
    grid = token_grid(tokens, WORDS, SIZE, lines)
    assert REPAIR not in grid.repairs
    assert _texts(grid) == EXPECTED


def test_a_header_set_off_by_its_shading_keeps_the_models_rows():
    # no rule under the header (a fill's edge parts it from the body): the lattice's second row
    # holds the labels and the first row of figures; the model reads them as two rows
    h = (0.0, 30.0, 140.0, 200.0, 260.0)
    lines = RulingLines(h, V, tuple(((0.0, 300.0),) for _ in h), V_RUNS)
    tokens = _tokens([(36.0, 70.0), (86.0, 136.0), (146.0, 196.0), (206.0, 220.0)])
    grid = token_grid(tokens, WORDS, SIZE, lines)
    assert REPAIR not in grid.repairs
    assert _texts(grid) == EXPECTED


def test_rules_drawn_in_the_header_only_are_no_full_lattice():
    # a shaded header's column rules, the body's too light to be found: no lattice to read
    v_runs = (V_RUNS[0], ((30.0, 80.0),), ((30.0, 80.0),), V_RUNS[3])
    assert find_lattice(RulingLines(H, V, FULL_H, v_runs), WORDS) is None


def test_an_empty_column_the_model_set_astride_a_rule_is_no_column():
    # eu-007 p3's photocopy: the model's columns stand off the rules, an empty one astride the
    # rule between the first two; a speck under the frame read as "4" makes a row of its own
    objects = [StructureObject("table", 0.99, (0.0, 0.0, 300.0, 280.0))]
    objects += [
        StructureObject("table row", 0.9, (0.0, a, 300.0, b))
        for a, b in ((0, 30), (30, 80), (80, 140), (140, 200), (200, 260), (260, 280))
    ]
    objects += [
        StructureObject("table column", 0.9, (a, 0.0, b, 280.0))
        for a, b in ((0, 80), (80, 108), (108, 200), (200, 300))
    ]
    objects += [
        StructureObject("table spanning cell", 0.9, (0.0, 0.0, 300.0, 30.0)),
        StructureObject("table column header", 0.9, (0.0, 0.0, 300.0, 80.0)),
    ]
    words = [*WORDS, Word("4", (150.0, 266.0, 155.0, 272.0))]
    size = (300.0, 280.0)
    misread = reconstruct(objects, words, size, lines=RulingLines(H, V))
    assert (misread.n_rows, misread.n_cols) == (6, 4) and _texts(misread)[(5, 2)] == "4"
    grid = reconstruct(objects, words, size, lines=LINES)
    assert REPAIR in grid.repairs
    assert (grid.n_rows, grid.n_cols) == (5, 3)
    assert _texts(grid) == EXPECTED


def test_an_empty_column_between_two_rules_stays_with_the_model():
    # a column drawn on both sides that holds no text is the table's own: the model's grid
    # agrees with the rules and is kept
    v = (0.0, 100.0, 200.0, 240.0, 300.0)
    v_runs = (V_RUNS[0], V_RUNS[1], V_RUNS[2], ((30.0, 260.0),), V_RUNS[3])
    words = [
        Word(w.text, (w.bbox[0] + 40.0, w.bbox[1], w.bbox[2] + 40.0, w.bbox[3])) if w.bbox[0] >= 200 else w
        for w in WORDS
    ]
    objects = [StructureObject("table", 0.99, (0.0, 0.0, 300.0, 260.0))]
    objects += [
        StructureObject("table row", 0.9, (0.0, a, 300.0, b))
        for a, b in ((0, 30), (30, 80), (80, 140), (140, 200), (200, 260))
    ]
    objects += [StructureObject("table column", 0.9, (a, 0.0, b, 260.0)) for a, b in zip(v, v[1:])]
    objects += [
        StructureObject("table spanning cell", 0.9, (0.0, 0.0, 300.0, 30.0)),
        StructureObject("table column header", 0.9, (0.0, 0.0, 300.0, 80.0)),
    ]
    grid = reconstruct(objects, words, SIZE, lines=RulingLines(H, v, FULL_H, v_runs))
    assert REPAIR not in grid.repairs
    assert grid.n_cols == 4 and not any(c.text for c in grid.cells if c.col == 2 and c.row > 0)


def test_an_open_sided_table_keeps_its_stub_column_or_draws_no_lattice():
    """Clean render, dev eu-013 p5 t3: three rules across (the top one leaving the stub head
    open), rules between the year columns, none down the sides. The bottom rule and the one
    above it start at the stub's left edge: that is the table's left side, and the stub label
    is in the lattice. Where only the bottom rule reaches under the stub, no side is known
    there: the label beside the frame says the table goes on, and no lattice is drawn (drawn
    from the first year's rule, it lost the label and every value's row)."""
    h = (13.0, 46.0, 79.0)
    v = (264.0, 395.0, 525.0, 655.0, 786.0)
    v_runs = tuple(((13.0, 80.0),) for _ in v)
    words = [_w("On labour market training", 12, 56, 240)]
    for k, x in enumerate(v):
        words += [_w(str(2001 + k), x + 40, 22), _w(f"{29 + k} 300", x + 30, 56)]
    h_runs = (((264.0, 916.0),), ((10.0, 916.0),), ((8.0, 917.0),))
    lattice = find_lattice(RulingLines(h, v, h_runs, v_runs), words)
    assert lattice is not None and len(lattice.cols) == 6 and lattice.frame[0] == 8.0
    h_runs = (((264.0, 916.0),), ((264.0, 916.0),), ((8.0, 917.0),))
    assert find_lattice(RulingLines(h, v, h_runs, v_runs), words) is None


def test_text_inside_the_frame_the_models_grid_leaves_out_comes_from_the_rules():
    """Blurred scan, dev eu-004 p2 t2: the model's first row started under the first line of the
    header's labels ("number of" over "food outlets 1996/7"), which fell outside its grid, and
    every value's column lost half its label. Inside a closed frame that text is the table's:
    the grid is read from the rules, and the title and the labels are whole."""
    rows = []
    for y0, y1 in [(50.0, 70.0), (86.0, 136.0), (146.0, 196.0), (206.0, 220.0)]:
        rows += [StructureToken("<tr>", 0.99)]
        rows += [StructureToken("<td></td>", 0.98, (x + 8.0, y0, x + 70.0, y1)) for x in V[:3]]
        rows += [StructureToken("</tr>", 0.99)]
    grid = token_grid(rows, WORDS, SIZE, LINES)  # no title row, the header from its second line
    assert REPAIR in grid.repairs
    assert _texts(grid) == EXPECTED
