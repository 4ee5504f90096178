"""Rows and columns corrected with the words and ruling lines: each rule, and each switch."""

from __future__ import annotations

from gridgen import expected_grid, oracle_objects

from worker.core.reconstruct import reconstruct
from worker.core.refine import RefineRules
from worker.core.types import ROW, RulingLines, StructureObject, Word

OFF = RefineRules(lines=False, gaps=False, split=False, slivers=False)


def _oracle(*args, **kwargs):
    """gridgen's oracle with capitalised words ("R1C0"): a lower-case start reads as a wrapped phrase."""
    objs, words, size = oracle_objects(*args, **kwargs)
    return objs, [Word(w.text.upper(), w.bbox) for w in words], size


def _texts(grid):
    return {(c.row, c.col): c.text for c in grid.cells}


def _want(n_rows, n_cols):
    return {(r, c): f"R{r}C{c}" for r in range(n_rows) for c in range(n_cols)}


def _moved_rows(objs, dy):
    """Row boxes shifted down by dy (a model that is consistently a little low)."""
    return [
        StructureObject(o.label, o.score, (o.bbox[0], o.bbox[1] + dy, o.bbox[2], o.bbox[3] + dy))
        if o.label == ROW
        else o
        for o in objs
    ]


def test_boundary_cutting_words_moves_into_the_gap():
    objs, words, size = _oracle(4, 3, [])
    # words 12 px tall centred in 30 px rows; rows 11 px low put each boundary through a
    # word's upper part, 4 px of the word above it.
    words = [Word(w.text, (w.bbox[0], w.bbox[1] - 5, w.bbox[2], w.bbox[3] + 5)) for w in words]
    moved = _moved_rows(objs, 14)
    grid = reconstruct(moved, words, size)
    assert _texts(grid) == _want(4, 3)
    assert any("moved into the gap" in r for r in grid.repairs)
    for (_, y0, _, y1), r in zip(grid.row_bboxes, range(4)):
        assert y0 <= 30 * r + 15 - 11 and y1 >= 30 * r + 15 + 11  # no word cut
    plain = reconstruct(moved, words, size, refine=OFF)
    assert not any("moved" in r for r in plain.repairs)


def test_boundary_moves_onto_a_near_ruling_line():
    objs, words, size = _oracle(3, 2, [])
    moved = _moved_rows(objs, 6)
    grid = reconstruct(moved, words, size, lines=RulingLines(h=(30.0, 60.0)))
    assert [round(b[1]) for b in grid.row_bboxes] == [0, 30, 60]
    assert any("ruling line" in r for r in grid.repairs)
    assert _texts(grid) == _want(3, 2)
    off = reconstruct(moved, words, size, lines=RulingLines(h=(30.0, 60.0)), refine=RefineRules(lines=False))
    assert [round(b[1]) for b in off.row_bboxes] == [0, 36, 66]


def test_dropped_row_recovered_from_the_words():
    objs, words, size = _oracle(5, 3, [], header_rows=1)
    dropped = [o for o in objs if not (o.label == ROW and o.bbox[1] == 60)]
    grid = reconstruct(dropped, words, size)
    assert grid.shape_signature() == expected_grid(5, 3, [])
    assert _texts(grid) == _want(5, 3)
    assert any("recovered" in r for r in grid.repairs)
    assert reconstruct(dropped, words, size, refine=RefineRules(split=False)).n_rows == 4


def test_merged_neighbouring_rows_split_but_a_wrapped_label_is_not():
    objs, words, size = _oracle(4, 3, [])
    rows = [o for o in objs if o.label == ROW]
    merged = [o for o in objs if o not in rows[1:3]] + [StructureObject(ROW, 0.9, (0, 30, 240, 90))]
    assert reconstruct(merged, words, size).n_rows == 4
    # one cell wrapped over two lines (a lower-case continuation) in an otherwise one-line row
    objs2, words2, size2 = _oracle(3, 3, [], row_h=[30, 60, 30])
    words2 = [w for w in words2 if w.text != "R1C0"] + [
        Word("Total", (5, 35, 60, 47)),
        Word("expenditure", (5, 73, 75, 85)),
    ]
    grid = reconstruct(objs2, words2, size2)
    assert grid.n_rows == 3
    assert _texts(grid)[(1, 0)] == "Total expenditure"


def test_duplicate_that_survives_suppression_leaves_no_empty_row():
    objs, words, size = _oracle(4, 2, [])
    words = [Word(w.text, (w.bbox[0], w.bbox[1] - 3, w.bbox[2], w.bbox[3] + 3)) for w in words]
    row1 = next(o for o in objs if o.label == ROW and o.bbox[1] == 30)
    dup = StructureObject(ROW, 0.6, (0, 30 + 10.5, 160, 60 + 10.5))  # IoU 0.48 with its original
    grid = reconstruct([*objs, dup], words, size)
    assert row1 in objs
    assert grid.shape_signature() == expected_grid(4, 2, [])
    assert _texts(grid) == _want(4, 2)
    assert reconstruct([*objs, dup], words, size, refine=OFF).n_rows == 5


def test_no_words_no_change():
    objs, _, size = _oracle(3, 3, [])
    moved = _moved_rows(objs, 7)
    a = reconstruct(moved, [], size)
    b = reconstruct(moved, [], size, refine=OFF)
    assert a.row_bboxes == b.row_bboxes and a.repairs == b.repairs


def test_invented_span_over_two_texts_is_undone_and_a_missed_header_span_is_made():
    objs, words, size = _oracle(4, 3, [])
    false_span = StructureObject("table spanning cell", 0.7, (80, 30, 240, 60))  # R1C1 + R1C2
    grid = reconstruct([*objs, false_span], words, size)
    assert grid.shape_signature() == expected_grid(4, 3, [])
    assert any("undone" in r for r in grid.repairs)
    assert reconstruct([*objs, false_span], words, size, refine=RefineRules(spans=False)).shape_signature() != (
        expected_grid(4, 3, [])
    )
    # a header label centred over columns 1 and 2, whose spanning cell the model missed
    head = [w for w in words if not w.text.startswith("R0C")] + [Word("Births", (140, 9, 180, 21))]
    grid = reconstruct(objs, head, size)
    assert grid.shape_signature() == expected_grid(4, 3, [(0, 1, 1, 2), (0, 0, 1, 1)])[1:] or (
        (0, 1, 1, 2) in grid.shape_signature()
    )
    assert _texts(grid)[(0, 1)] == "Births"
