"""Rows the structure model read together, parted on their text lines (worker.core.stacked_rows).

The model's cells are drawn as boxes; the words are placed by hand on their own lines, as an OCR
reads them, so each test says which lines sit inside which of the model's rows."""

from __future__ import annotations

from helpers import grid_texts as _texts
from helpers import line_words

from worker.core.token_grid import StructureToken, token_grid
from worker.core.types import Word

X = (10.0, 210.0, 330.0, 450.0)  # the four columns' left edges; each 110 px wide (the stub 190)
LINE = 20.0  # one text line a row


def _model(rows: list[tuple[float, float]], head: int = 0) -> list[StructureToken]:
    """A model reading: four cells a row, each row the band (top, bottom) given."""
    out: list[StructureToken] = []
    for r, (top, bottom) in enumerate(rows):
        if head and r == 0:
            out.append(StructureToken("<thead>", 0.99))
        if head and r == head:
            out += [StructureToken("</thead>", 0.99), StructureToken("<tbody>", 0.99)]
        out.append(StructureToken("<tr>", 0.99))
        for c, x in enumerate(X):
            right = X[c + 1] - 6 if c + 1 < len(X) else x + 110
            out.append(StructureToken("<td></td>", 0.98, (x, top, right, bottom)))
        out.append(StructureToken("</tr>", 0.99))
    return out


def _line(y: float, texts: list[str]) -> list[Word]:
    return line_words(X, y, texts)


HEAD = ["Country", "Domestic", "Imported", "Total"]
BODY = [
    ["Austria", "86.2", "13.8", "3,375"],
    ["Belgium", "0", "1.5", "3,973"],
    ["Bulgaria", "0.4", "100.0", "1,136"],
    ["Cyprus", "83.0", "3.8", "158"],
]


def _table_words(first_body_line: float) -> list[Word]:
    """The header's line at y = 6 and the body's rows one line each from `first_body_line` on."""
    words = _line(6, HEAD)
    for k, row in enumerate(BODY):
        words += _line(first_body_line + LINE * k, row)
    return words


def test_rows_of_figures_read_as_one_tall_row_are_parted_at_their_lines() -> None:
    words = _table_words(30)
    grid = token_grid(_model([(2, 24), (26, 110)], head=1), words)
    assert _texts(grid) == [HEAD, *BODY]
    assert grid.header_rows == 1
    assert any("given their own lines" in r for r in grid.repairs)


def test_the_first_data_row_read_into_the_header_row_goes_back_to_the_body() -> None:
    """The header row holds the labels' line and the first row of figures under it."""
    words = _table_words(26)
    grid = token_grid(_model([(2, 42), (44, 100)], head=1), words)
    assert _texts(grid) == [HEAD, *BODY]
    assert grid.header_rows == 1


def test_wrapped_labels_and_lines_without_a_stub_word_stay_in_their_row() -> None:
    """A label wrapped over two lines, its figures on the lower one; a row of standard errors
    under its estimates; the rows the model did read apart are kept as they are."""
    words = _line(6, HEAD)
    words += _line(30, ["Czech", "", "", ""]) + _line(50, ["Republic", "98.6", "1.4", "17,655"])
    words += _line(74, ["Denmark", "3.1", "10.2", "1,662"]) + _line(94, ["", "(0.4)", "(1.1)", "(12)"])
    grid = token_grid(_model([(2, 24), (26, 70), (72, 112)], head=1), words)
    assert _texts(grid) == [
        HEAD,
        ["Czech Republic", "98.6", "1.4", "17,655"],
        ["Denmark", "3.1 (0.4)", "10.2 (1.1)", "1,662 (12)"],
    ]
    assert not any("given their own lines" in r for r in grid.repairs)


def test_rows_of_figures_under_the_models_last_row_join_the_table_but_a_note_does_not() -> None:
    words = _table_words(30)
    words += _line(30 + LINE * 4 + 14, ["Source: Eurostat", "", "", ""])  # a note under the table
    grid = token_grid(_model([(2, 24), (26, 48)], head=1), words)
    assert _texts(grid) == [HEAD, *BODY]
    assert not any("Source" in c.text for c in grid.cells)


def test_a_test_statistic_just_under_the_last_row_is_no_row_of_the_table() -> None:
    """ "x2=876.6 p <0.0005" under the last row has a label and a value-like text, but fills one
    column of three: a note, not a row (its line sits just under the model's last box)."""
    words = _table_words(30)
    words += _line(30 + LINE * 4 - 4, ["x2=876.6 p", "<0.0005", "", ""])
    grid = token_grid(_model([(2, 24), *((26 + LINE * k, 44 + LINE * k) for k in range(4))], head=1), words)
    assert _texts(grid)[:5] == [HEAD, *BODY]
    assert grid.n_rows == 5
