"""A column holding only the overflow of long stub labels joined to the stub
(worker.core.overflow_columns), on the model's cells drawn as boxes and the words placed by hand."""

from __future__ import annotations

from helpers import grid_texts, line_words

from worker.core.bands import Band
from worker.core.overflow_columns import join_overflow_columns
from worker.core.spans import SpanRect
from worker.core.token_grid import StructureToken, token_grid
from worker.core.types import Word

X = (10.0, 150.0, 270.0, 380.0)  # stub, the model's extra column, "Mean", "Std. Dev."
ROW = 30.0
ROWS = [  # eu-027 p3 t1's photocopy: the long labels run into the extra column
    ["Age", "50.8", "15.9"],
    ["Men", "0.47", "0.50"],
    ["Households with children", "0.37", "0.48"],
    ["Number of children", "1.67", "1.38"],
]


def _model(rows: list[list[str]]) -> list[StructureToken]:
    """The header, then one row per label: a label longer than the stub is one cell over the
    stub and the extra column, a short one leaves the extra column an empty cell."""
    t = StructureToken
    out: list[StructureToken] = []
    for r, row in enumerate([["Variable", "", ""], *rows]):
        top = r * ROW
        out.append(t("<tr>", 0.99))
        if len(row[0]) * 9 > X[1] - X[0]:
            out += [t("<td", 0.97, (X[0], top + 2, X[2] - 10, top + ROW - 2)), t(' colspan="2"', 0.96)]
            out += [t(">", 0.99), t("</td>", 0.99)]
        else:
            out += [t("<td></td>", 0.98, (x, top + 2, x + 100, top + ROW - 2)) for x in X[:2]]
        out += [t("<td></td>", 0.98, (x, top + 2, x + 100, top + ROW - 2)) for x in X[2:]]
        out.append(t("</tr>", 0.99))
    return out


def _words(rows: list[list[str]], header: list[str]) -> list[Word]:
    words = line_words([X[0], *X[2:]], 9, header)
    for r, row in enumerate(rows, 1):
        words += line_words([X[0], *X[2:]], r * ROW + 9, row)
    return words


def test_a_column_only_long_stub_labels_run_into_is_joined_to_the_stub() -> None:
    grid = token_grid(_model(ROWS), _words(ROWS, ["Variable", "Mean", "Std. Dev."]))
    assert grid_texts(grid) == [["Variable", "Mean", "Std. Dev."], *ROWS]
    assert not any(c.colspan > 1 for c in grid.cells)
    assert any("overflow" in r for r in grid.repairs)


def test_the_tails_of_long_labels_in_the_columns_own_cells_go_back_to_their_labels() -> None:
    # every label one cell wide: the tails ("children", "(Euro/month)") sit in the extra column's cells
    t = StructureToken
    rows = [*ROWS, ["Household income (Euro/month)", "2,127", "1,389"]]
    model: list[StructureToken] = []
    for r in range(len(rows) + 1):
        model.append(t("<tr>", 0.99))
        model += [t("<td></td>", 0.98, (x, r * ROW + 2, x + 100, r * ROW + ROW - 2)) for x in X]
        model.append(t("</tr>", 0.99))
    grid = token_grid(model, _words(rows, ["Variable", "Mean", "Std. Dev."]))
    assert grid_texts(grid) == [["Variable", "Mean", "Std. Dev."], *rows]


def test_a_values_first_piece_in_the_column_goes_back_to_the_value() -> None:
    # a speck split "0.37" into "0" and ".37", and "0" lies in the extra column
    rows = _bands([0, 30, 60, 90, 120])
    cols = _bands([0, 150, 270, 380, 480])
    words = [
        Word("Households", (14, 5, 104, 19)),
        Word("with", (110, 5, 146, 19)),
        Word("children", (152, 5, 224, 19)),
        Word("0.37", (274, 5, 310, 19)),
        Word("0.48", (384, 5, 420, 19)),
        Word("Men", (14, 35, 41, 49)),
        Word("0", (262, 35, 271, 49)),
        Word(".37", (272, 35, 299, 49)),
        Word("0.50", (384, 35, 420, 49)),
        *(Word(t, (x, y, x + 36, y + 14)) for y in (65, 95) for x, t in ((14, "Age"), (274, "50.8"), (384, "15.9"))),
    ]
    rects = [SpanRect(r, r, c, c) for r in range(4) for c in range(4)]
    repairs: list[str] = []
    out, cols2 = join_overflow_columns(rects, rows, cols, words, repairs)
    assert [(b.lo, b.hi) for b in cols2] == [(0, 262), (262, 380), (380, 480)]
    assert out == [SpanRect(r, r, c, c) for r in range(4) for c in range(3)]


def test_columns_set_close_together_stay() -> None:
    # eu-007 p5 t5: "Butter Margarine" and "6028 1385" a word space apart, every row filled
    rows = _bands([0, 30, 60])
    cols = _bands([0, 150, 240, 300, 420])
    words = [
        Word("Products", (10, 5, 80, 19)),
        Word("Butter", (160, 5, 210, 19)),
        Word("Margarine", (222, 5, 290, 19)),
        Word("Low fat products", (310, 5, 410, 19)),
        Word("Turnover", (10, 35, 80, 49)),
        Word("6028", (190, 35, 225, 49)),
        Word("1385", (240, 35, 275, 49)),
        Word("836", (330, 35, 355, 49)),
    ]
    rects = [SpanRect(r, r, c, c) for r in range(2) for c in range(4)]
    repairs: list[str] = []
    assert join_overflow_columns(rects, rows, cols, words, repairs) == (rects, cols) and not repairs


def test_a_sparse_column_of_values_set_close_to_its_neighbours_stays() -> None:
    # eu-005 p2 (text layer): "PBUK | EH", EH filled in one row of four, "67.9 72.9" 12 px apart
    rows = _bands([0, 30, 60, 90, 120])
    cols = _bands([0, 150, 250, 330, 450])
    words = [Word(t, (14, y, 74, y + 14)) for y, t in ((5, "Austria"), (35, "Greece"), (65, "Italy"), (95, "UK"))]
    words += [Word(t, (206, y, 238, y + 14)) for y, t in ((5, "67.9"), (35, "58.7"), (65, "35"), (95, "50.1"))]
    words += [Word("72.9", (250, 5, 282, 19)), *(Word("61.0", (380, y, 412, y + 14)) for y in (5, 35, 65, 95))]
    rects = [SpanRect(r, r, c, c) for r in range(4) for c in range(4)]
    repairs: list[str] = []
    assert join_overflow_columns(rects, rows, cols, words, repairs) == (rects, cols) and not repairs


def test_a_column_with_a_word_of_its_own_stays() -> None:
    # the header names the extra column: it is a column, however empty its body
    words = _words(ROWS, ["Variable", "Mean", "Std. Dev."]) + line_words([X[1]], 9, ["Unit"])
    grid = token_grid(_model(ROWS), words)
    assert grid.n_cols == 4
    assert grid_texts(grid)[0] == ["Variable", "Unit", "Mean", "Std. Dev."]


def _bands(edges: list[float]) -> list[Band]:
    return [Band(a, b, 0.9) for a, b in zip(edges, edges[1:])]


def test_a_wordless_column_is_left_to_wordless_bands_and_a_label_begun_in_the_column_is_its_own() -> None:
    rows = _bands([0, 30, 60])
    cols = _bands([0, 100, 200, 300])
    words = [Word("Total", (10, 5, 60, 20)), Word("12", (210, 35, 230, 50))]
    rects = [SpanRect(r, r, c, c) for r in (0, 1) for c in (0, 1, 2)]
    repairs: list[str] = []
    assert join_overflow_columns(rects, rows, cols, words, repairs) == (rects, cols) and not repairs
    # a label begun in column 1 and running into column 2 is column 1's own: nothing moves
    words = [Word("Total", (10, 5, 60, 20)), Word("long label", (110, 5, 250, 20)), Word("12", (210, 35, 230, 50))]
    rects = [SpanRect(0, 0, 0, 0), SpanRect(0, 0, 1, 2), *(SpanRect(1, 1, c, c) for c in (0, 1, 2))]
    assert join_overflow_columns(rects, rows, cols, words, repairs) == (rects, cols) and not repairs
