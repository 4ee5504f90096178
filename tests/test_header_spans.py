"""Spanning header cells checked against their words, for both structure engines' grids.

Generated tables with the traits seen in real outputs: a header row of dates, each centred
over two columns, read by the model as one cell over all of them; a group label stretched
over the stub head. The tests assert the labels each value is read under.
"""

from __future__ import annotations

from worker.core.bands import Band
from worker.core.header_spans import header_rows_by_words, word_groups
from worker.core.headers import column_labels
from worker.core.html_out import grid_to_html
from worker.core.serialise import serialisations
from worker.core.token_grid import StructureToken, token_grid
from worker.core.types import Word
from worker.evaluation.binding import bind

CW, CH = 110, 30  # cell width and height of the generated page, pixels
CHAR = 7  # width of one character


def _words(text: str, x_centre: float, row: int) -> list[Word]:
    """A label centred at `x_centre` on `row`, one Word per word, spaces of one character."""
    width = len(text) * CHAR
    x = x_centre - width / 2
    out = []
    for part in text.split():
        out.append(Word(part, (x, row * CH + 9, x + len(part) * CHAR, row * CH + 21)))
        x += (len(part) + 1) * CHAR
    return out


def _cell_tokens(row: int, col: int, colspan: int = 1, rowspan: int = 1) -> list[StructureToken]:
    box = (col * CW + 2.0, row * CH + 2.0, (col + colspan) * CW - 2.0, (row + rowspan) * CH - 2.0)
    if colspan == rowspan == 1:
        return [StructureToken("<td></td>", 0.98, box)]
    out = [StructureToken("<td", 0.97, box)]
    if rowspan > 1:
        out.append(StructureToken(f' rowspan="{rowspan}"', 0.96))
    if colspan > 1:
        out.append(StructureToken(f' colspan="{colspan}"', 0.96))
    return out + [StructureToken(">", 0.99), StructureToken("</td>", 0.99)]


BODY = [["Northeast", "1,204", "3.1", "1,250", "2.9"], ["Maine", "88", "0.7", "91", "0.8"]]
GT = (
    "<table><thead>"
    '<tr><th rowspan="2">Region and state</th><th colspan="2">2007</th><th colspan="2">2009</th></tr>'
    "<tr><th>Actual</th><th>Margin of error</th><th>Actual</th><th>Margin of error</th></tr></thead><tbody>"
    + "".join("<tr>" + "".join(f"<td>{t}</td>" for t in row) + "</tr>" for row in BODY)
    + "</tbody></table>"
)


def _page(row0: list[tuple[int, int, int]]) -> tuple[list[StructureToken], list[Word]]:
    """Tokens with the model's row 0 (col, colspan, rowspan per cell) over the true words."""
    tokens = [StructureToken("<thead>", 0.99), StructureToken("<tr>", 0.99)]
    for col, colspan, rowspan in row0:
        tokens += _cell_tokens(0, col, colspan, rowspan)
    tokens.append(StructureToken("</tr>", 0.99))
    row1_cols = [c for c in range(5) if not any(col <= c < col + cs and rs > 1 for col, cs, rs in row0)]
    tokens.append(StructureToken("<tr>", 0.99))
    for c in row1_cols:
        tokens += _cell_tokens(1, c)
    tokens += [StructureToken("</tr>", 0.99), StructureToken("</thead>", 0.99), StructureToken("<tbody>", 0.99)]
    for r in range(len(BODY)):
        tokens.append(StructureToken("<tr>", 0.99))
        for c in range(5):
            tokens += _cell_tokens(r + 2, c)
        tokens.append(StructureToken("</tr>", 0.99))
    tokens.append(StructureToken("</tbody>", 0.99))
    words = _words("Region and state", 0.5 * CW, 0) + _words("2007", 2 * CW, 0) + _words("2009", 4 * CW, 0)
    for c, label in enumerate(["Actual", "Margin of error", "Actual", "Margin of error"], start=1):
        words += _words(label, (c + 0.5) * CW, 1)
    for r, row in enumerate(BODY):
        for c, text in enumerate(row):
            words += _words(text, (c + 0.5) * CW, r + 2)
    return tokens, words


def test_dates_read_as_one_cell_over_all_columns_are_split_over_their_own_columns():
    tokens, words = _page([(0, 1, 2), (1, 4, 1)])  # the model: one cell "2007 2009" over four columns
    grid = token_grid(tokens, words, (5 * CW, 4 * CH))
    assert any("split" in r for r in grid.repairs)
    labels = column_labels(grid, 2)
    assert labels == [
        "Region and state",
        "2007 / Actual",
        "2007 / Margin of error",
        "2009 / Actual",
        "2009 / Margin of error",
    ]
    html = grid_to_html(grid)
    assert {k: v for k, v in bind(html, GT).items() if k in ("values", "bound", "col_bound", "row_bound")} == {
        "values": 8,
        "bound": 8,
        "col_bound": 8,
        "row_bound": 8,
    }
    line = serialisations(grid)["row_lines"][0]
    assert line == (
        "Region and state: Northeast; 2007 / Actual: 1,204; 2007 / Margin of error: 3.1; "
        "2009 / Actual: 1,250; 2009 / Margin of error: 2.9"
    )


def test_group_label_stretched_over_the_stub_head_leaves_the_stub_column():
    tokens, words = _page([(0, 3, 1), (3, 2, 1)])  # "Region and state 2007" read as one cell over cols 0-2
    grid = token_grid(tokens, words, (5 * CW, 4 * CH))
    labels = column_labels(grid, 2)
    assert labels[0] == "Region and state" and labels[1] == "2007 / Actual" and labels[2] == "2007 / Margin of error"
    assert labels[3] == "2009 / Actual"
    assert bind(grid_to_html(grid), GT)["col_bound"] == 8


def test_a_label_wrapped_over_two_lines_stays_one_group():
    words = _words("Margin of", 100, 0) + [Word("error", (85, 22, 120, 33))]
    assert len(word_groups(words, 15.0)) == 1
    assert len(word_groups(_words("2007", 100, 0) + _words("2009", 320, 0), 15.0)) == 2


def test_a_lone_dash_over_the_labels_does_not_end_the_header_rows_by_words():
    """A speck read as "-" above a photocopied table's labels is no figure: the rows down to the
    first row of figures can still be the header."""
    rows = [Band(0, 20, 1.0), Band(20, 40, 1.0), Band(40, 60, 1.0)]
    cols = [Band(0, 100, 1.0), Band(100, 200, 1.0)]
    words = [Word("-", (150, 5, 158, 15)), Word("air", (120, 25, 160, 35)), Word("20", (130, 45, 150, 55))]
    assert header_rows_by_words(rows, cols, words) == {0, 1}


def test_a_row_of_years_read_as_one_cell_over_the_table_is_undone_without_a_marked_header():
    """A photocopy: no header marked, and the empty stub head and four years read as one cell
    over all five columns; every value then had no year over it."""
    years = ["1991", "1994", "1995", "1996"]
    rows = [["National Brands", "80.6", "75.0", "75.3", "76.0"], ["Own Brands", "14.7", "17.1", "17.4", "17.1"]]
    tokens = [StructureToken("<tr>", 0.99), *_cell_tokens(0, 0, colspan=5), StructureToken("</tr>", 0.99)]
    for r in range(len(rows)):
        tokens.append(StructureToken("<tr>", 0.99))
        for c in range(5):
            tokens += _cell_tokens(r + 1, c)
        tokens.append(StructureToken("</tr>", 0.99))
    words = [w for c, year in enumerate(years, start=1) for w in _words(year, (c + 0.5) * CW, 0)]
    for r, row in enumerate(rows, start=1):
        for c, text in enumerate(row):
            words += _words(text, (c + 0.5) * CW, r)
    grid = token_grid(tokens, words, (5 * CW, 3 * CH))
    assert any("undone" in r for r in grid.repairs)
    assert [c.text for c in sorted(grid.cells, key=lambda c: c.col) if c.row == 0] == ["", *years]
    gt = (
        "<table><tr><td></td>" + "".join(f"<td>{y}</td>" for y in years) + "</tr>"
        + "".join("<tr>" + "".join(f"<td>{t}</td>" for t in row) + "</tr>" for row in rows)
        + "</table>"
    )  # fmt: skip
    got = bind(grid_to_html(grid), gt)
    assert got["bound"] == got["values"] == 8


def test_under_a_title_row_the_labels_read_as_one_cell_over_the_table_are_undone_too():
    """The caption read into the crop as a row across the table (lifted later as the caption), and
    under it the column labels read as one cell over all the columns (noise scan, dev eu-027 p3:
    0 -> 104 of 108 values bound). Here the header split by words also parts the labels; on that
    page it found no header under the title, and only the undo parted them."""
    labels = ["Variable", "Mean", "Dev.", "Min", "Max"]
    rows = [["Age", "50.8", "15.9", "21", "90"], ["Men", "0.47", "0.50", "0", "1"]]
    tokens = [StructureToken("<tr>", 0.99), *_cell_tokens(0, 0, colspan=5), StructureToken("</tr>", 0.99)]
    tokens += [StructureToken("<tr>", 0.99), *_cell_tokens(1, 0, colspan=5), StructureToken("</tr>", 0.99)]
    for r in range(len(rows)):
        tokens.append(StructureToken("<tr>", 0.99))
        tokens += [t for c in range(5) for t in _cell_tokens(r + 2, c)]
        tokens.append(StructureToken("</tr>", 0.99))
    words = _words("Table 2 Descriptive statistics of the sample", 2.5 * CW, 0)
    words += [w for c, label in enumerate(labels) for w in _words(label, (c + 0.5) * CW, 1)]
    for r, row in enumerate(rows, start=2):
        for c, text in enumerate(row):
            words += _words(text, (c + 0.5) * CW, r)
    grid = token_grid(tokens, words, (5 * CW, 4 * CH))
    assert [c.text for c in sorted(grid.cells, key=lambda c: c.col) if c.row == 1] == labels
    assert any(c.row == 0 and c.colspan == 5 for c in grid.cells)  # the title row is one run: kept


def _stats_table(full_rows: set[int], n_body: int = 8, label: str | None = None) -> tuple[list, list[Word]]:
    """A labelled table of `n_body` data rows; the rows in `full_rows` read as one cell across it
    (row `label`'s text, when given, is that one label instead of the row's figures)."""
    heads = ["Variable", "Mean", "Dev.", "Min", "Max"]
    tokens = [
        StructureToken("<tr>", 0.99),
        *[t for c in range(5) for t in _cell_tokens(0, c)],
        StructureToken("</tr>", 0.99),
    ]
    words = [w for c, text in enumerate(heads) for w in _words(text, (c + 0.5) * CW, 0)]
    for r in range(1, n_body + 1):
        tokens.append(StructureToken("<tr>", 0.99))
        if r in full_rows:
            tokens += _cell_tokens(r, 0, colspan=5)
        else:
            tokens += [t for c in range(5) for t in _cell_tokens(r, c)]
        tokens.append(StructureToken("</tr>", 0.99))
        if r in full_rows and label is not None:
            words += _words(label, 1.0 * CW, r)
            continue
        for c, text in enumerate([f"Item{r}", f"0.{r}7", f"0.{r}0", "0", "1"]):
            words += _words(text, (c + 0.5) * CW, r)
    return tokens, words


def test_a_lone_data_row_read_as_one_cell_across_the_table_is_parted_into_its_columns():
    """Among rows read cell by cell, one data row read as one cell across the table ("Married 0.57
    0.50 0 1": photocopy, dev eu-027 p3) puts every figure of it under no column; its texts
    stand apart as the other rows' do, so the cell is undone."""
    tokens, words = _stats_table({5})
    grid = token_grid(tokens, words, (5 * CW, 10 * CH))
    assert [c.text for c in sorted(grid.cells, key=lambda c: c.col) if c.row == 5] == [
        "Item5",
        "0.57",
        "0.50",
        "0",
        "1",
    ]


def test_a_section_label_across_the_table_and_a_body_read_as_one_cell_per_row_stay():
    """A section label is one text: its cell stays. A body read as one cell per row is a collapse
    left for the second look (noise, dev eu-018 p1 t2), not parted here."""
    tokens, words = _stats_table({5}, label="Marital status")
    grid = token_grid(tokens, words, (5 * CW, 10 * CH))
    assert any(c.row == 5 and c.colspan == 5 and c.text == "Marital status" for c in grid.cells)
    tokens, words = _stats_table({2, 3, 4, 5, 6, 7, 8})
    grid = token_grid(tokens, words, (5 * CW, 10 * CH))
    assert sum(c.colspan == 5 for c in grid.cells) == 7
