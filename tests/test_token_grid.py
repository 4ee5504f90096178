"""Structure tokens with cell boxes -> TableGrid (the embedded engine's core), and its replay."""

from __future__ import annotations

import json

import pytest

from worker.cli.rebuild import rebuild_one
from worker.core.html_out import grid_to_html
from worker.core.replay import EMBEDDED, ReplayError, parse_payload, payload, replay_grid
from worker.core.token_grid import StructureToken, token_grid, tokens_from_raw
from worker.core.types import RulingLines, Word
from worker.evaluation.binding import bind


def _tokens(rows: list[list[tuple[str, int, int]]], head: int = 0, cell: tuple[int, int] = (100, 40)):
    """Token stream for rows of (text, rowspan, colspan), with boxes on a regular grid.

    Returns the tokens and, per text, the box of the cell (for placing words in it).
    """
    cw, ch = cell
    taken: set[tuple[int, int]] = set()
    out: list[StructureToken] = []
    boxes: dict[str, tuple[float, float, float, float]] = {}
    if head:
        out.append(StructureToken("<thead>", 0.99))
    for r, row in enumerate(rows):
        if head and r == head:
            out += [StructureToken("</thead>", 0.99), StructureToken("<tbody>", 0.99)]
        out.append(StructureToken("<tr>", 0.99))
        c = 0
        for text, rs, cs in row:
            while (r, c) in taken:
                c += 1
            taken |= {(r + i, c + j) for i in range(rs) for j in range(cs)}
            box = (c * cw + 4.0, r * ch + 4.0, (c + cs) * cw - 4.0, (r + rs) * ch - 4.0)
            boxes[text] = box
            if rs == cs == 1:
                out.append(StructureToken("<td></td>", 0.98, box))
            else:
                out.append(StructureToken("<td", 0.97, box))
                if rs > 1:
                    out.append(StructureToken(f' rowspan="{rs}"', 0.96))
                if cs > 1:
                    out.append(StructureToken(f' colspan="{cs}"', 0.96))
                out += [StructureToken(">", 0.99), StructureToken("</td>", 0.99)]
            c += cs
        out.append(StructureToken("</tr>", 0.99))
    out.append(StructureToken("</tbody>", 0.99))
    return out, boxes


def _word(text: str, box: tuple[float, float, float, float]) -> Word:
    x0, y0, x1, y1 = box
    return Word(text, (x0 + 6, y0 + 6, min(x1, x0 + 60), y1 - 6))


FINANCIAL = [
    [("Region", 2, 1), ("Product", 2, 1), ("2023", 1, 2), ("2024", 1, 2)],
    [("Rev23", 1, 1), ("Cost23", 1, 1), ("Rev24", 1, 1), ("Cost24", 1, 1)],
    [("North", 2, 1), ("Widgets", 1, 1), ("1", 1, 1), ("2", 1, 1), ("3", 1, 1), ("4", 1, 1)],
    [("Gadgets", 1, 1), ("5", 1, 1), ("6", 1, 1), ("7", 1, 1), ("8", 1, 1)],
    [("Total", 1, 2), ("9", 1, 1), ("10", 1, 1), ("11", 1, 1), ("12", 1, 1)],
]


def test_spans_headers_and_words_land_in_their_cells() -> None:
    tokens, boxes = _tokens(FINANCIAL, head=2)
    words = [_word(t, b) for t, b in boxes.items()]
    grid = token_grid(tokens, words, (600, 200))
    grid.owner_map()  # a partition of the grid
    assert (grid.n_rows, grid.n_cols, grid.header_rows) == (5, 6, 2)
    by_text = {c.text: c for c in grid.cells}
    assert set(by_text) == set(boxes)
    assert (by_text["Region"].row, by_text["Region"].col, by_text["Region"].rowspan) == (0, 0, 2)
    assert (by_text["2024"].row, by_text["2024"].col, by_text["2024"].colspan) == (0, 4, 2)
    assert (by_text["Gadgets"].row, by_text["Gadgets"].col) == (3, 1)
    assert (by_text["Total"].row, by_text["Total"].colspan) == (4, 2)
    assert (by_text["12"].row, by_text["12"].col) == (4, 5)
    assert by_text["Rev23"].is_header and not by_text["North"].is_header
    assert grid.repairs == []
    html = grid_to_html(grid)
    assert '<th scope="col" rowspan="2">Region</th>' in html and '<th scope="row" colspan="2">Total</th>' in html


def test_row_bands_follow_the_cell_boxes() -> None:
    tokens, _ = _tokens([[("a", 1, 1), ("b", 1, 1)], [("c", 1, 1), ("d", 1, 1)]], cell=(80, 30))
    grid = token_grid(tokens, [], (160, 60))
    assert [round(b[1]) for b in grid.row_bboxes] == [4, 30]  # tiles from the first cell's top
    assert [round(b[3]) for b in grid.row_bboxes] == [30, 56]
    assert [round(b[0]) for b in grid.col_bboxes] == [4, 80]


def test_ragged_rows_and_overlong_spans_are_repaired_not_fatal() -> None:
    box = (0.0, 0.0, 50.0, 20.0)
    tokens = [
        StructureToken("<tr>", 1.0),
        StructureToken("<td", 0.9, box),
        StructureToken(' rowspan="5"', 0.9),
        StructureToken(">", 0.9),
        StructureToken("</td>", 0.9),
        StructureToken("<td></td>", 0.9, (50.0, 0.0, 100.0, 20.0)),
        StructureToken("<td></td>", 0.9, (100.0, 0.0, 150.0, 20.0)),
        StructureToken("</tr>", 1.0),
        StructureToken("<tr>", 1.0),
        StructureToken("<td></td>", 0.9, (50.0, 20.0, 100.0, 40.0)),
        StructureToken("</tr>", 1.0),
        StructureToken("<td></td>", 0.9, None),  # a cell outside any row, without a box
    ]
    grid = token_grid(tokens, [], (150, 60))
    grid.owner_map()
    assert (grid.n_rows, grid.n_cols) == (3, 3)
    assert any("row span" in r for r in grid.repairs)
    assert any("short row" in r for r in grid.repairs)
    assert any("outside a row" in r for r in grid.repairs)


def test_no_cells_gives_an_empty_grid_with_the_words_kept() -> None:
    words = [Word("x", (1.0, 1.0, 5.0, 5.0))]
    grid = token_grid([StructureToken("<tr>", 1.0), StructureToken("</tr>", 1.0)], words)
    assert grid.n_rows == 0 and grid.unassigned_words == words and grid.repairs


def test_page_text_beyond_the_table_edge_stays_out_of_cells() -> None:
    tokens, boxes = _tokens([[("a", 1, 1), ("b", 1, 1)], [("c", 1, 1), ("d", 1, 1)]], cell=(100, 40))
    words = [_word(t, b) for t, b in boxes.items()] + [Word("caption", (10.0, -30.0, 90.0, -12.0))]

    def down(b: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        return (b[0], b[1] + 40, b[2], b[3] + 40)  # room above the table for a line of page text

    moved = [StructureToken(t.token, t.score, None if t.bbox is None else down(t.bbox)) for t in tokens]
    grid = token_grid(moved, [Word(w.text, down(w.bbox)) for w in words], (200, 120))
    assert "caption" not in " ".join(c.text for c in grid.cells)
    assert [w.text for w in grid.unassigned_words] == ["caption"]


def test_replay_payload_round_trip_rebuilds_the_same_html() -> None:
    tokens, boxes = _tokens(FINANCIAL, head=2)
    words = [_word(t, b) for t, b in boxes.items()]
    grid = token_grid(tokens, words, (600, 200))
    stored = json.loads(json.dumps(payload((600, 200), [], words, image="t.png", tokens=tokens)))
    assert stored["engine"] == EMBEDDED and stored["objects"] == []
    item = parse_payload(stored)
    assert item.engine == EMBEDDED and len(item.tokens) == len(tokens)
    assert grid_to_html(replay_grid(item)) == grid_to_html(grid)
    assert rebuild_one(stored) == grid_to_html(grid)


def test_payload_without_engine_is_table_transformer() -> None:
    item = parse_payload({"objects": [], "words": []})
    assert item.engine == "tatr" and item.tokens == []


@pytest.mark.parametrize(
    "bad",
    [
        {"engine": "other", "objects": []},
        {"engine": "embedded"},
        {"engine": "embedded", "tokens": [{"token": 3}]},
        {"engine": "embedded", "tokens": [{"token": "<td></td>", "score": 7}]},
    ],
)
def test_bad_embedded_payloads_give_one_reason(bad: dict) -> None:
    with pytest.raises(ReplayError):
        parse_payload(bad)


def test_tokens_from_raw_takes_the_models_plain_output() -> None:
    raw = [{"token": "<tr>", "score": 0.9}, {"token": "<td></td>", "score": 0.8, "bbox": [1, 2, 3, 4]}]
    assert tokens_from_raw(raw) == [StructureToken("<tr>", 0.9), StructureToken("<td></td>", 0.8, (1.0, 2.0, 3.0, 4.0))]


def test_row_boundaries_move_off_text_when_the_boxes_sit_too_high() -> None:
    """Cell boxes drifting up by up to half a row still give every word its own row."""
    rows = [[(f"r{r}c{c}", 1, 1) for c in range(3)] for r in range(8)]
    tokens, boxes = _tokens(rows, cell=(100, 30))
    drifted = [
        StructureToken(
            t.token,
            t.score,
            None if t.bbox is None else (t.bbox[0], t.bbox[1] * 0.95 - 6, t.bbox[2], t.bbox[3] * 0.95 - 6),
        )
        for t in tokens
    ]
    words = [Word(text, (b[0] + 6, b[1] + 6, b[0] + 50, b[3] - 6)) for text, b in boxes.items()]
    grid = token_grid(drifted, words, (300, 240))
    assert {c.text: (c.row, c.col) for c in grid.cells} == {f"r{r}c{c}": (r, c) for r in range(8) for c in range(3)}
    assert "row boundaries moved off the text lines they cut" in grid.repairs


def test_one_boundary_through_a_tall_cell_moves_alone_and_the_other_rows_stay() -> None:
    """Rows of cells six lines tall, the model's second boundary a few pixels into the last line
    of the row above, and the last row's cells ending above its last line (outside the rows
    whatever is done inside): that boundary moves down past the line, and no row is shifted by a
    line (a joint scale-and-shift stretching the table to take the last line in found a cut-free
    fit one line off every boundary, dev eu-003 p1)."""
    rows = [[(f"r{r}c{c}", 1, 1) for c in range(3)] for r in range(4)]
    tokens, boxes = _tokens(rows, cell=(100, 120))
    moved = [StructureToken(t.token, t.score, None if t.bbox is None else _nudged(t.bbox)) for t in tokens]
    words = []
    for text, b in boxes.items():  # six lines of 12 px every 18 px; the cell's label on the first
        for line in range(6):
            y0 = b[1] + 6 + 18 * line
            words.append(Word(text if line == 0 else f"{text}-{line}", (b[0] + 6, y0, b[0] + 50, y0 + 12)))
    grid = token_grid(moved, words, (300, 500))
    texts = {c.text.split()[0]: (c.row, c.col) for c in grid.cells}
    assert texts == {f"r{r}c{c}": (r, c) for r in range(4) for c in range(3)}
    for cell in grid.cells[:9]:  # every line of a cell in it, none in the next row
        assert len(cell.text.split()) == 6, cell.text


# Geometry of an office scan's table (dev eu-025 p2 t3), texts our own: a stub head spanning
# two header rows, three header labels, four body rows, and a note line in the crop's margin.
_NOTE_CELLS = [(27, 10, 283, 119), (362, 7, 832, 65), (304, 60, 490, 98), (496, 61, 684, 97), (691, 61, 900, 96)]
_NOTE_CELLS += [
    (52, 105, 305, 141), (317, 102, 498, 136), (510, 103, 687, 136), (704, 103, 898, 135),
    (52, 143, 306, 180), (324, 141, 498, 176), (509, 142, 688, 174), (701, 142, 904, 174),
    (43, 182, 302, 221), (322, 181, 497, 218), (507, 181, 690, 217), (697, 181, 906, 217),
    (45, 221, 293, 260), (318, 219, 496, 256), (508, 219, 690, 255), (698, 219, 908, 256),
]  # fmt: skip
_NOTE_WORDS = [
    ("Symptoms", (94, 29, 259, 53)), ("How", (344, 29, 390, 48)), ("often", (400, 29, 453, 48)),
    ("No", (394, 68, 432, 87)), ("Sometimes", (532, 68, 673, 92)), ("Often", (738, 68, 854, 92)),
    ("r0c0", (48, 102, 161, 129)), ("r0c1", (460, 109, 499, 129)), ("r0c2", (654, 102, 692, 129)),
    ("r0c3", (846, 109, 886, 129)), ("r1c0", (48, 149, 207, 168)), ("r1c1", (460, 149, 498, 168)),
    ("r1c2", (667, 149, 692, 168)), ("r1c3", (862, 149, 886, 168)), ("r2c0", (48, 187, 143, 212)),
    ("r2c1", (459, 187, 499, 207)), ("r2c2", (668, 187, 693, 207)), ("r2c3", (876, 190, 886, 206)),
    ("r3c0", (48, 227, 191, 246)), ("r3c1", (459, 227, 499, 246)), ("r3c2", (665, 227, 692, 246)),
    ("r3c3", (862, 227, 887, 246)), ("Note", (64, 265, 75, 276)), ("p=0.4", (112, 269, 169, 276)),
    ("n=9", (295, 269, 377, 276)),
]  # fmt: skip


def test_a_note_line_under_the_table_does_not_pull_the_rows_down() -> None:
    """Moving every boundary down by most of a row (a scale and a shift) cuts no word and takes
    the note under the table in, but then each row's values are read under the row above's
    label, and the header's last row joins its first. Only the model's own rows' text counts."""
    t = StructureToken
    cells = iter(_NOTE_CELLS)
    tokens = [t("<tr>", 1.0), t("<td", 1.0, next(cells)), t(' rowspan="2"', 1.0), t(">", 1.0), t("</td>", 1.0)]
    tokens += [t("<td", 1.0, next(cells)), t(' colspan="3"', 1.0), t(">", 1.0), t("</td>", 1.0), t("</tr>", 1.0)]
    for n in (3, 4, 4, 4, 4):
        tokens += [t("<tr>", 1.0)] + [t("<td></td>", 1.0, next(cells)) for _ in range(n)] + [t("</tr>", 1.0)]
    grid = token_grid(tokens, [Word(text, box) for text, box in _NOTE_WORDS], (912, 276))
    texts = {c.text.split()[0]: (c.row, c.col) for c in grid.cells if c.text}  # a note word may join the last row
    assert texts["No"] == (1, 1) and texts["Symptoms"] == (0, 0) and texts["How"] == (0, 1)
    assert {f"r{r}c{c}": texts[f"r{r}c{c}"] for r in range(4) for c in range(4)} == {
        f"r{r}c{c}": (r + 2, c) for r in range(4) for c in range(4)
    }


def _nudged(box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    """Row 1's cells end 12 px early and row 2's start 12 px early (boundary 2 cuts row 1's last
    line, well above its middle); row 3's end 24 px early."""
    x0, y0, x1, y1 = box
    if 120 <= y0 < 240:
        return (x0, y0, x1, y1 - 12)
    if 240 <= y0 < 360:
        return (x0, y0 - 12, x1, y1)
    if y0 >= 360:
        return (x0, y0, x1, y1 - 24)
    return box


def test_an_inverted_token_box_is_repaired_not_fatal() -> None:
    """Like Table Transformer's objects, one bad box must not lose the table."""
    item = parse_payload(
        {
            "engine": "embedded",
            "image_size": [100, 50],
            "tokens": [
                {"token": "<tr>"},
                {"token": "<td></td>", "bbox": [1, 2, 0, 0]},
                {"token": "<td></td>", "bbox": [50, 0, 90, 20]},
                {"token": "</tr>"},
            ],
            "words": [{"text": "kept", "bbox": [55, 2, 70, 10]}],
        }
    )
    grid = replay_grid(item)
    grid.owner_map()
    assert (grid.n_rows, grid.n_cols) == (1, 2) and [c.text for c in grid.sorted_cells()] == ["", "kept"]


def _grid_with_head(rows: list[list[str]], head: int):
    tokens, boxes = _tokens([[(t, 1, 1) for t in row] for row in rows], head=head)
    return token_grid(tokens, [_word(t, boxes[t]) for row in rows for t in row if t])


def test_a_row_of_figures_the_model_put_in_its_header_goes_back_to_the_body() -> None:
    """On a turned or noisy scan SLANet sometimes puts the first data row into <thead>: every
    value below would be read under "50 / 12" as its column labels."""
    rows = [["Substance", "Air", "Water"], ["Benzene", "50", "12"], ["Toluene", "7", "-"], ["Xylene", "30", "4"]]
    grid = _grid_with_head(rows, head=2)
    assert grid.header_rows == 1
    assert [c.is_header for c in grid.cells if c.row == 1] == [False, False, False]
    assert any("returned to the body" in r for r in grid.repairs)
    html = grid_to_html(grid)
    assert html.index("Benzene") > html.index("</thead>")


@pytest.mark.parametrize(
    "second",
    [["", "2023", "2024"], ["", "(1)", "(2)"], ["", "kg", "%"], ["Country", "Air", "Water"]],
    ids=["years", "column-numbers", "units", "labels"],
)
def test_header_rows_of_years_numbers_units_and_labels_stay_in_the_header(second: list[str]) -> None:
    rows = [["Substance", "Emissions", "Releases"], second, ["Benzene", "50", "12"], ["Xylene", "30", "4"]]
    assert _grid_with_head(rows, head=2).header_rows == 2


def test_the_header_line_the_first_body_row_took_goes_back_to_the_header() -> None:
    """The model's header row ends between "to air" and "kg/year": the units line sits at the
    top of the first body row, above that row's label and values, and belongs to the header."""
    rows = [["Substance", "to air", "to water"], ["Benzene", "50", "12"], ["Toluene", "7", "3"]]
    tokens, boxes = _tokens([[(t, 1, 1) for t in row] for row in rows], head=1)
    words = [_word(t, boxes[t]) for t in rows[0] + rows[2]]
    for text in ("to air", "to water"):  # the units line under each label, inside row 1's band
        x0, _, x1, _ = boxes[text]
        words.append(Word("kg/year", (x0 + 6, 42.0, x0 + 60, 54.0)))
    for text in rows[1]:
        x0, _, x1, _ = boxes[text]
        words.append(Word(text, (x0 + 6, 60.0, x0 + 40, 72.0)))
    grid = token_grid(tokens, words)
    texts = {(c.row, c.col): c.text for c in grid.cells}
    assert texts[(0, 1)] == "to air kg/year" and texts[(0, 2)] == "to water kg/year"
    assert [texts[(1, c)] for c in range(3)] == ["Benzene", "50", "12"]
    assert any("given back to the header" in r for r in grid.repairs)


def test_a_first_body_row_of_two_lines_keeps_its_lines() -> None:
    """A row whose label starts on its first line, or whose first line holds values, is the body's."""
    rows = [["Substance", "to air", "to water"], ["Benzene", "50", "12"], ["Toluene", "7", "3"]]
    tokens, boxes = _tokens([[(t, 1, 1) for t in row] for row in rows], head=1)
    base = [_word(t, boxes[t]) for t in rows[0] + rows[2]]
    stub_first = [Word("Benzene", (10.0, 42.0, 60.0, 54.0)), Word("(C6H6)", (10.0, 60.0, 60.0, 72.0))]
    stub_first += [Word(t, (boxes[t][0] + 6, 60.0, boxes[t][0] + 40, 72.0)) for t in rows[1][1:]]
    values_first = [Word(t, (boxes[t][0] + 6, 42.0, boxes[t][0] + 40, 54.0)) for t in rows[1]]
    values_first += [Word("(est.)", (boxes[t][0] + 6, 60.0, boxes[t][0] + 40, 72.0)) for t in rows[1][1:]]
    for extra in (stub_first, values_first):
        grid = token_grid(tokens, base + extra)
        assert not any("given back to the header" in r for r in grid.repairs)
        assert {(c.row, c.col): c.text for c in grid.cells}[(0, 1)] == "to air"


def _header_over_drifting_rows(ruled: bool) -> dict[str, tuple[int, int]]:
    """A group label row, a header row of two lines ("air" over its unit) and eight body rows
    whose boxes sit 6 px above their text, ruled between every row when `ruled`: the model's
    boundary under the header cuts the unit line, the one above it grazes "air" (as SLANet's
    boxes did on eu-001's resampled scan)."""
    toks: list[StructureToken] = []
    words: list[Word] = []

    def row(y0: float, y1: float, lines: list[tuple[float, float]], names: list[str]) -> None:
        toks.append(StructureToken("<tr>", 0.99))
        for c, name in enumerate(names):
            toks.append(StructureToken("<td></td>", 0.98, (100.0 * c + 2, y0, 100.0 * c + 98, y1)))
            for k, (a, b) in enumerate(lines):
                words.append(Word(name if k == 0 else f"{name}-unit", (100.0 * c + 10, a, 100.0 * c + 60, b)))
        toks.append(StructureToken("</tr>", 0.99))

    row(2, 38, [(15, 27)], ["stub", "group", "groupb"])
    row(40, 72, [(39.5, 51), (66, 80)], ["s1", "air", "land"])
    for k in range(8):
        row(74 + 20 * k, 94 + 20 * k, [(84 + 20 * k, 96 + 20 * k)], [f"b{k}c0", f"b{k}c1", f"b{k}c2"])
    lines = RulingLines(h=(0.0, 40.0, 80.0, *[100.0 + 20 * k for k in range(8)]), v=()) if ruled else None
    grid = token_grid(toks, words, (300, 260), lines)
    return {c.text: (c.row, c.col) for c in grid.cells}


def test_on_a_ruled_table_row_boundaries_through_text_go_onto_the_rules() -> None:
    """A joint shift of every boundary finds a cut-free fit that takes "air" into the group
    label's row; the rules between the lines say where each row parts."""
    cells = _header_over_drifting_rows(ruled=True)
    assert cells["group"] == (0, 1) and cells["air air-unit"] == (1, 1)
    assert all(cells[f"b{k}c1"] == (2 + k, 1) for k in range(8))
    assert "group air" in _header_over_drifting_rows(ruled=False)  # what the rules mend


def test_ruled_rows_whose_boxes_sit_half_a_row_high_keep_their_text() -> None:
    """Boxes 13 px above rows 30 px tall: the rule nearest each boundary is the one over its
    row's text, so rules are matched to the rows the text shows, not to the nearest box."""
    rows = [[(f"r{r}c{c}", 1, 1) for c in range(3)] for r in range(8)]
    tokens, boxes = _tokens(rows, cell=(100, 30))
    high = [
        StructureToken(
            t.token, t.score, None if t.bbox is None else (t.bbox[0], t.bbox[1] - 13, t.bbox[2], t.bbox[3] - 13)
        )
        for t in tokens
    ]
    words = [Word(text, (b[0] + 6, b[1] + 5, b[0] + 50, b[3] - 5)) for text, b in boxes.items()]
    lines = RulingLines(h=tuple(30.0 * k for k in range(9)), v=())
    grid = token_grid(high, words, (300, 240), lines)
    assert {c.text: (c.row, c.col) for c in grid.cells} == {f"r{r}c{c}": (r, c) for r in range(8) for c in range(3)}


def test_a_row_label_spanning_up_into_the_header_is_cut_back_to_its_values_row() -> None:
    """SLANet set the stub's header cell one row low: the first body row's label spans the
    header's last row and its own, so no header could be marked. The label's words and the
    values beside them put it in its own row, and every value then reads under its label."""
    rows = [
        [("stubhead", 1, 1), ("THRESHOLD", 1, 3)],
        [("Arsenic", 2, 1), ("air", 1, 1), ("water", 1, 1), ("land", 1, 1)],
        [("20", 1, 1), ("5", 1, 1), ("6", 1, 1)],
        [("Lead", 1, 1), ("200", 1, 1), ("21", 1, 1), ("22", 1, 1)],
    ]
    tokens, boxes = _tokens(rows)
    words = [_word(t, b) for t, b in boxes.items() if t not in ("stubhead", "Arsenic")]
    words.append(Word("Arsenic", (10.0, 90.0, 70.0, 108.0)))  # in the third row's band only
    grid = token_grid(tokens, words, (400, 160))
    cells = {c.text: (c.row, c.col, c.rowspan) for c in grid.cells if c.text}
    assert cells["Arsenic"] == (2, 0, 1) and cells["20"][:2] == (2, 1)
    html = grid_to_html(grid)
    gt = (
        "<table><thead><tr><th></th><th colspan=3>THRESHOLD</th></tr><tr><th></th><th>air</th><th>water</th>"
        "<th>land</th></tr></thead><tbody><tr><td>Arsenic</td><td>20</td><td>5</td><td>6</td></tr>"
        "<tr><td>Lead</td><td>200</td><td>21</td><td>22</td></tr></tbody></table>"
    )
    got = bind(html, gt)
    assert got["bound"] == got["values"] == 6


def test_wrapped_labels_under_a_stub_head_spanning_from_above_join_into_one_row() -> None:
    """ "to air" over "kg/year" read as two rows under a group label, the stub's empty head
    spanning the group label's row and the first: the two label rows are one, the stub head
    takes the joined row, and the values read under "to air kg/year"."""
    rows = [
        [("stubhead", 2, 1), ("THRESHOLD", 1, 3)],
        [("air", 1, 1), ("water", 1, 1), ("land", 1, 1)],
        [("empty", 1, 1), ("kg1", 1, 1), ("kg2", 1, 1), ("kg3", 1, 1)],
        [("Arsenic", 1, 1), ("20", 1, 1), ("5", 1, 1), ("6", 1, 1)],
        [("Lead", 1, 1), ("200", 1, 1), ("21", 1, 1), ("22", 1, 1)],
    ]
    tokens, boxes = _tokens(rows)
    words = [
        _word(t, b)
        for t, b in boxes.items()
        if t in ("THRESHOLD", "Arsenic", "20", "5", "6", "Lead", "200", "21", "22")
    ]
    for name, c in (("air", 1), ("water", 2), ("land", 3)):
        words += [
            Word("to", (100.0 * c + 10, 62, 100.0 * c + 24, 74)),
            Word(name, (100.0 * c + 28, 62, 100.0 * c + 60, 74)),
        ]
        words.append(Word("kg/year", (100.0 * c + 10, 82, 100.0 * c + 60, 94)))
    grid = token_grid(tokens, words, (400, 200))
    assert grid.n_rows == 4
    labels = {c.text: (c.row, c.col) for c in grid.cells if c.text}
    assert labels["to air kg/year"] == (1, 1) and labels["Arsenic"] == (2, 0)
    gt = (
        "<table><thead><tr><th rowspan=2></th><th colspan=3>THRESHOLD</th></tr><tr><th>to air kg/year</th>"
        "<th>to water kg/year</th><th>to land kg/year</th></tr></thead><tbody>"
        "<tr><td>Arsenic</td><td>20</td><td>5</td><td>6</td></tr>"
        "<tr><td>Lead</td><td>200</td><td>21</td><td>22</td></tr></tbody></table>"
    )
    got = bind(grid_to_html(grid), gt)
    assert got["bound"] == got["values"] == 6
