"""Reconstruction rules on small hand-made object sets."""

from __future__ import annotations

from gridgen import expected_grid, oracle_objects

from worker.core.reconstruct import reconstruct
from worker.core.types import StructureObject, Word


def rebuild(objs, words, size):
    grid = reconstruct(objs, words, size)
    grid.owner_map()  # raises unless every slot belongs to exactly one cell
    return grid


def test_plain_grid_with_text():
    objs, words, size = oracle_objects(3, 3, [])
    grid = rebuild(objs, words, size)
    assert (grid.n_rows, grid.n_cols) == (3, 3)
    assert {(c.row, c.col): c.text for c in grid.cells}[(2, 1)] == "r2c1"
    assert grid.repairs == []


def test_multi_row_header_with_spanning_group_label():
    # row 0: "2024" over columns 1-2; column 0 header spans both header rows
    spans = [(0, 1, 1, 2), (0, 0, 2, 1)]
    objs, words, size = oracle_objects(4, 3, spans, header_rows=2)
    grid = rebuild(objs, words, size)
    assert grid.header_rows == 2
    assert grid.shape_signature() == expected_grid(4, 3, spans)
    assert all(c.is_header == (c.row < 2) for c in grid.cells)


def test_two_overlapping_spanning_cells_resolved():
    objs, words, size = oracle_objects(3, 3, [])
    objs.append(StructureObject("table spanning cell", 0.9, (0, 0, 160, 60)))  # rows 0-1, cols 0-1
    objs.append(StructureObject("table spanning cell", 0.8, (80, 30, 240, 90)))  # rows 1-2, cols 1-2 (clash)
    grid = rebuild(objs, [], size)  # no words: each cell's own word would contradict the spans
    spans = [c for c in grid.cells if c.rowspan * c.colspan > 1]
    assert (spans[0].row, spans[0].col, spans[0].rowspan, spans[0].colspan) == (0, 0, 2, 2)
    assert len(spans) == 2  # the weaker one trimmed to the slots still free, as a rectangle
    weaker = spans[1]
    assert weaker.row + weaker.rowspan - 1 == 2 and weaker.col + weaker.colspan - 1 == 2
    assert any("overlapping" in r for r in grid.repairs)


def test_overlapping_span_that_cannot_be_trimmed_is_dropped():
    objs, words, size = oracle_objects(3, 3, [])
    objs.append(StructureObject("table spanning cell", 0.9, (0, 0, 240, 60)))  # rows 0-1, all columns
    objs.append(StructureObject("table spanning cell", 0.8, (80, 0, 160, 90)))  # column 1, all rows
    grid = rebuild(objs, [], size)  # no words: each cell's own word would contradict the spans
    sig = grid.shape_signature()
    assert (0, 0, 2, 3) in sig and (2, 1, 1, 1) in sig
    assert any("dropped" in r for r in grid.repairs)


def test_spanning_cell_crossing_header_boundary_is_clipped():
    objs, words, size = oracle_objects(4, 2, [], header_rows=1)
    objs.append(StructureObject("table spanning cell", 0.9, (0, 0, 80, 90)))  # rows 0-2 of column 0
    grid = rebuild(objs, words, size)
    span = next(c for c in grid.cells if c.rowspan > 1)
    assert (span.row, span.rowspan) == (1, 2)  # the body side holds most of it
    assert not span.is_header
    assert any("header boundary" in r for r in grid.repairs)


def test_empty_column_is_kept():
    texts = {(r, 1): "" for r in range(3)}
    objs, words, size = oracle_objects(3, 3, [], texts=texts)
    grid = rebuild(objs, words, size)
    assert grid.n_cols == 3
    assert all(c.text == "" for c in grid.cells if c.col == 1)


def test_row_fully_covered_by_row_spans_keeps_its_row():
    spans = [(0, 0, 2, 1), (0, 1, 2, 1)]  # row 1 has no cell of its own
    objs, words, size = oracle_objects(3, 2, spans)
    grid = rebuild(objs, words, size)
    assert grid.n_rows == 3
    assert grid.shape_signature() == expected_grid(3, 2, spans)


def test_word_straddling_two_cells_goes_to_the_larger_share():
    objs, _, size = oracle_objects(1, 2, [])
    grid = rebuild(objs, [Word("straddle", (60, 10, 90, 20))], size)  # 20 px in col 0, 10 px in col 1
    texts = {c.col: c.text for c in grid.cells}
    assert texts == {0: "straddle", 1: ""}
    assert grid.cells[0].confidence < 1.0  # a word cut by a cell line lowers confidence


def test_words_in_reading_order():
    objs, _, size = oracle_objects(1, 1, [], row_h=[60], col_w=[200])
    words = [Word("world", (60, 5, 100, 20)), Word("again", (10, 30, 50, 45)), Word("hello", (10, 6, 50, 21))]
    grid = rebuild(objs, words, size)
    assert grid.cells[0].text == "hello world again"


def test_word_outside_the_table_is_reported_not_lost():
    objs, words, size = oracle_objects(2, 2, [])
    far = Word("caption", (10, 500, 60, 510))
    near = Word("edge", (10, 61, 40, 70))  # just below the last row
    grid = reconstruct(objs, words + [far, near], (400, 600))
    assert far in grid.unassigned_words
    assert any("edge" in c.text for c in grid.cells)


def test_zero_rows_or_columns():
    grid = rebuild([StructureObject("table", 0.9, (0, 0, 100, 50))], [Word("x", (5, 5, 15, 15))], (100, 50))
    assert (grid.n_rows, grid.n_cols) == (1, 1) and grid.cells[0].text == "x"
    assert any("no rows" in r for r in grid.repairs)
    empty = reconstruct([], [], None)
    assert (empty.n_rows, empty.n_cols, empty.cells) == (0, 0, [])


def test_duplicate_rows_and_columns_suppressed():
    objs, words, size = oracle_objects(3, 2, [])
    objs.append(StructureObject("table row", 0.6, (0, 32, 160, 58)))  # duplicate of row 1
    objs.append(StructureObject("table column", 0.55, (2, 0, 78, 90)))  # duplicate of column 0
    grid = rebuild(objs, words, size)
    assert (grid.n_rows, grid.n_cols) == (3, 2)
    assert any("duplicate row" in r for r in grid.repairs)


def test_thresholds_per_class():
    objs, words, size = oracle_objects(2, 2, [(0, 0, 1, 2)])
    grid = reconstruct(objs, words, size, thresholds={"table spanning cell": 0.95})
    assert all(c.colspan == 1 for c in grid.cells)


def test_rows_snap_into_gap_free_bands():
    objs = [
        StructureObject("table", 0.9, (0, 0, 100, 100)),
        StructureObject("table row", 0.9, (0, 5, 100, 40)),
        StructureObject("table row", 0.9, (0, 50, 100, 95)),
        StructureObject("table column", 0.9, (0, 0, 100, 100)),
    ]
    grid = rebuild(objs, [], (100, 100))
    (a, b) = grid.row_bboxes
    assert a[1] == 0 and a[3] == b[1] == 45 and b[3] == 100


def test_projected_row_header_becomes_full_width_group_label():
    objs, words, size = oracle_objects(4, 3, [], header_rows=1, texts={(2, 1): "", (2, 2): ""})
    objs.append(StructureObject("table projected row header", 0.9, (0, 60, 240, 90)))
    grid = rebuild(objs, words, size)
    prh = next(c for c in grid.cells if c.is_projected_row_header)
    assert (prh.row, prh.col, prh.colspan) == (2, 0, 3) and prh.text == "r2c0"


def test_confidence_from_scores_and_ocr():
    objs, _, size = oracle_objects(1, 1, [])
    grid = rebuild(objs, [Word("a", (30, 10, 50, 20), confidence=0.5)], size)
    assert 0.4 < grid.cells[0].confidence < 0.5
    assert 0 < grid.confidence < 1
