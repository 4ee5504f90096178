"""Stub cells spanning rows, checked against their text lines (worker.core.stub_spans).

The model's cells are drawn as boxes and the words placed by hand on their lines, as an OCR
reads them, so each test says which lines sit inside which of the model's rows."""

from __future__ import annotations

from helpers import grid_texts as _texts
from helpers import line_words

from worker.core.token_grid import StructureToken, token_grid
from worker.core.types import Word

X = (10.0, 260.0, 380.0)  # the three columns' left edges (the stub 240 px wide, the others 110)
ROW = 36.0


def _model(spans: dict[int, int], n_rows: int) -> list[StructureToken]:
    """A header row, then `n_rows` body rows; `spans` maps a body row to its stub's rowspan."""
    t = StructureToken
    out = [t("<tr>", 0.99)] + [t("<td></td>", 0.98, (x, 4, x + 100, ROW - 4)) for x in X] + [t("</tr>", 0.99)]
    covered: set[int] = set()
    for r in range(1, n_rows + 1):
        out.append(t("<tr>", 0.99))
        top = r * ROW
        if r in spans:
            out += [
                t("<td", 0.97, (X[0], top + 2, X[0] + 230, top + spans[r] * ROW - 2)),
                t(f' rowspan="{spans[r]}"', 0.96),
            ]
            out += [t(">", 0.99), t("</td>", 0.99)]
            covered |= set(range(r + 1, r + spans[r]))
        elif r not in covered:
            out.append(t("<td></td>", 0.98, (X[0], top + 2, X[0] + 230, top + ROW - 2)))
        out += [t("<td></td>", 0.98, (x, top + 2, x + 100, top + ROW - 2)) for x in X[1:]]
        out.append(t("</tr>", 0.99))
    return out


def _line(y: float, texts: list[str]) -> list[Word]:
    return line_words(X, y, texts, height=14.0)


def _words(rows: list[list[str]]) -> list[Word]:
    """The header's line, then each body row's line in the middle of its row."""
    words = _line(11, ["Outcome", "Freq.", "Percent"])
    for r, row in enumerate(rows, 1):
        words += _line(r * ROW + 11, row)
    return words


BODY = [
    ["I/we kept the assets", "344", "75.2"],
    ["I/we sold some of the assets", "53", "11.6"],
    ["I/we sold all of them", "61", "13.2"],
    ["Total", "458", "100.0"],
]


def test_two_rows_labels_read_as_one_cell_are_cut_at_their_lines() -> None:
    """The model spans the first two labels over both rows, and the last two: each label has
    its own line in its own row, beside its own figures, so each row gets its own label."""
    grid = token_grid(_model({1: 2, 3: 2}, 4), _words(BODY), (500, 5 * ROW))
    assert _texts(grid)[1:] == BODY
    assert "2 row label(s) spanning rows cut into one per row at their text lines" in grid.repairs


def test_a_label_over_two_rows_of_one_line_or_a_wrapped_label_stays_spanning() -> None:
    """One line over two rows ("Asthma" beside its count and share rows) is a label of both;
    two lines whose second goes on in lower case are one wrapped label."""
    rows = [["Asthma", "344", "75.2"], ["", "53", "11.6"], ["Hay fever", "61", "13.2"], ["Total", "458", "100.0"]]
    grid = token_grid(_model({1: 2}, 4), _words(rows), (500, 5 * ROW))
    spans = {(c.row, c.col): c.rowspan for c in grid.cells}
    assert spans[(1, 0)] == 2
    rows = [
        ["Neck and", "344", "75.2"],
        ["shoulder pain", "53", "11.6"],
        ["Back pain", "61", "13.2"],
        ["Total", "458", "100.0"],
    ]
    grid = token_grid(_model({1: 2}, 4), _words(rows), (500, 5 * ROW))
    cells = {(c.row, c.col): c for c in grid.cells}
    assert cells[(1, 0)].rowspan == 2 and cells[(1, 0)].text == "Neck and shoulder pain"


GROUPED = [
    ["Alcohol use", "20", "4.3"],
    ["", "56", "12.0"],
    ["Chronic illness and", "40", "8.6"],
    ["chronic pain", "28", "6.0"],
    ["Stress", "237", "50.5"],
    ["", "110", "23.5"],
]


def test_labels_spanning_rows_set_one_row_too_high_are_moved_to_where_their_text_starts() -> None:
    """Photocopy, dev eu-021 p7: the model spans each label over the last row of the label
    before and its own first, so a wrapped label's second line ("chronic pain") lies in the cell
    below its first. Each label's text starts on its first row: the spans are rebuilt from there,
    one label over two rows each. A label one line high in a cell of its own says nothing of
    where its rows start (years centred over three rows, eu-012 p4): without a cut label, the
    model's spans stay."""
    grid = token_grid(_model({2: 2, 4: 2}, 6), _words(GROUPED), (500, 7 * ROW))
    spans = {(c.row, c.col): c.rowspan for c in grid.cells if c.col == 0 and c.row > 0}
    assert spans == {(1, 0): 2, (3, 0): 2, (5, 0): 2}
    labels = ["Alcohol use", "", "Chronic illness and chronic pain", "", "Stress", ""]
    assert [row[0] for row in _texts(grid)[1:]] == labels
    one_line = [
        ["Allergies" if r[0].startswith("Chronic") else "" if r[0] == "chronic pain" else r[0], *r[1:]] for r in GROUPED
    ]
    grid = token_grid(_model({2: 2, 4: 2}, 6), _words(one_line), (500, 7 * ROW))
    assert not any("where their text starts" in r for r in grid.repairs)


def test_labels_centred_across_their_two_rows_leave_the_spans_as_the_model_drew_them() -> None:
    """A one-line label set on the boundary of its two rows says nothing of which row it starts
    on: the model's spans stay."""
    words = _line(11, ["Outcome", "Freq.", "Percent"])
    for r, row in enumerate(GROUPED, 1):
        words += _line(r * ROW + 11, ["", *row[1:]])
        if row[0]:
            words += _line((r + 1) * ROW - 7, [row[0]])
    grid = token_grid(_model({1: 2, 3: 2, 5: 2}, 6), words, (500, 7 * ROW))
    spans = {(c.row, c.col): c.rowspan for c in grid.cells if c.col == 0 and c.row > 0}
    assert spans == {(1, 0): 2, (3, 0): 2, (5, 0): 2}
    assert not any("where their text starts" in r for r in grid.repairs)
