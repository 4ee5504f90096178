"""HTML writer and parser: escaping, one <tr> per row, thead/tbody, round trips, repairs."""

from __future__ import annotations

import html5lib
import lxml.html
import pytest
from gridgen import grid_from_spec

from worker.core.html_out import grid_to_html
from worker.core.html_parse import html_to_grid


def grid_via_lxml(html: str) -> list[tuple[int, int, int, int]]:
    """Apply the HTML table model to lxml's tree: an independent check of our parser."""
    root = lxml.html.fromstring(html)
    return _place(root.iter("tr"), lambda el: el.tag, lambda el: el.get("rowspan"), lambda el: el.get("colspan"))


def grid_via_html5lib(html: str) -> list[tuple[int, int, int, int]]:
    doc = html5lib.parse(html, namespaceHTMLElements=False)
    return _place(doc.iter("tr"), lambda el: el.tag, lambda el: el.get("rowspan"), lambda el: el.get("colspan"))


def _place(rows, tag, rowspan, colspan):
    rows = list(rows)
    taken, sig = set(), []
    for r, tr in enumerate(rows):
        c = 0
        for el in tr:
            if tag(el) not in ("td", "th"):
                continue
            while (r, c) in taken:
                c += 1
            rs, cs = int(rowspan(el) or 1), int(colspan(el) or 1)
            sig.append((r, c, rs, cs))
            taken.update((r + i, c + j) for i in range(rs) for j in range(cs))
            c += cs
    return sorted(sig)


def test_hostile_text_is_escaped():
    grid = grid_from_spec(1, 2, [], texts={(0, 0): "<script>alert(1)</script>", (0, 1): 'A & "B"'})
    html = grid_to_html(grid)
    assert "<script>" not in html
    assert "&lt;script&gt;" in html and "A &amp; &quot;B&quot;" in html
    back = html_to_grid(html)
    assert [c.text for c in back.sorted_cells()] == ["<script>alert(1)</script>", 'A & "B"']


def test_row_covered_by_spans_still_gets_its_tr():
    grid = grid_from_spec(3, 2, [(0, 0, 2, 1), (0, 1, 2, 1)])
    html = grid_to_html(grid)
    assert html.count("<tr>") == 3
    assert "<tr></tr>" in html
    assert html_to_grid(html).shape_signature() == grid.shape_signature()


def test_header_rows_in_thead_with_th():
    grid = grid_from_spec(4, 3, [(0, 1, 1, 2), (0, 0, 2, 1)], header_rows=2)
    html = grid_to_html(grid)
    head, body = html.split("</thead>")
    assert head.count("<tr>") == 2 and "<td" not in head
    assert body.count("<tr>") == 2 and body.count('<th scope="row">') == 2  # the stub: row labels
    assert '<th scope="colgroup" colspan="2">' in head and '<th scope="col" rowspan="2">' in head
    back = html_to_grid(html)
    assert back.header_rows == 2 and back.shape_signature() == grid.shape_signature()
    assert not any(c.is_header for c in back.cells if c.row >= 2)  # row labels are not column headers


def test_inferred_header_goes_to_thead_and_stub_cells_are_row_headers():
    """A grid whose model marked no header: the header the serialisations infer is the
    HTML's `<thead>` too, and the row labels are `<th scope="row">`."""
    from worker.core.serialise import serialisations
    from worker.core.types import Cell, TableGrid

    texts = [["Country", "2007", "2009"], ["Belgium", "12.5", "13.1"], ["France", "8.0", "7.9"]]
    grid = TableGrid(3, 3, [Cell(r, c, text=t) for r, row in enumerate(texts) for c, t in enumerate(row)])
    html = grid_to_html(grid)
    assert html.startswith('<table><thead><tr><th scope="col">Country</th><th scope="col">2007</th>')
    assert '<tr><th scope="row">Belgium</th><td>12.5</td><td>13.1</td></tr>' in html
    ser = serialisations(grid)
    assert ser["header_rows"] == 1 and ser["header_source"] == "inferred"
    assert html_to_grid(html).header_rows == ser["header_rows"]
    assert ser["row_lines"][0] == "Country: Belgium; 2007: 12.5; 2009: 13.1"


@pytest.mark.parametrize(
    "spans,header", [([], 0), ([(0, 0, 1, 3)], 1), ([(1, 0, 3, 1), (1, 1, 1, 2)], 1), ([(0, 0, 2, 2), (2, 2, 2, 1)], 0)]
)
def test_lxml_html5lib_and_our_parser_agree(spans, header):
    grid = grid_from_spec(4, 3, spans, header_rows=header)
    html = grid_to_html(grid)
    expected = grid.shape_signature()
    assert grid_via_lxml(html) == expected
    assert grid_via_html5lib(html) == expected
    assert html_to_grid(html).shape_signature() == expected


def test_parser_repairs_ragged_and_overlapping_html():
    grid = html_to_grid(
        "<table><tr><td rowspan=3>a</td><td>b</td></tr><tr><td colspan=2>c</td></tr>"
        "<tr><td>d</td><td>e</td><td>f</td></tr></table>"
    )
    grid.owner_map()
    assert (grid.n_rows, grid.n_cols) == (3, 4)
    assert grid.repairs  # ragged rows padded, each repair listed


def test_parser_clips_spans_running_past_the_table_and_absurd_values():
    grid = html_to_grid('<table><tr><td rowspan="9" colspan="abc">a</td><td colspan="999999">b</td></tr></table>')
    grid.owner_map()
    assert grid.n_rows == 1 and grid.n_cols == 1001


def test_parser_reads_first_table_and_flattens_nested_text():
    grid = html_to_grid(
        "<p>x</p><table><tr><td>out<table><tr><td>in</td></tr></table></td></tr></table>"
        "<table><tr><td>second</td></tr></table>"
    )
    assert [c.text for c in grid.cells] == ["out in"]


def test_parser_rejects_text_without_table():
    with pytest.raises(ValueError, match="table"):
        html_to_grid("no table here")


def test_empty_grid_html():
    assert grid_to_html(grid_from_spec(0, 0, [])) == "<table><tbody></tbody></table>"


def test_title_caught_in_the_table_box_is_the_caption_not_a_column_label():
    """A table's note sentence read as its first row, over every column: written as
    `<caption>`, left out of every column path, the labels below it kept."""
    from worker.core.headers import column_labels
    from worker.core.types import Cell, TableGrid
    from worker.evaluation.binding import bind

    title = "Table C1: Summary statistics for 2,012 respondents in SAVE 2009."
    texts = [["Variable", "Mean", "Std. Dev."], ["Age", "50.8", "15.9"], ["Men", "0.47", "0.50"]]
    cells = [Cell(0, 0, 1, 3, title)] + [
        Cell(r + 1, c, text=t) for r, row in enumerate(texts) for c, t in enumerate(row)
    ]
    grid = TableGrid(4, 3, cells)
    assert column_labels(grid) == ["Variable", "Mean", "Std. Dev."]
    html = grid_to_html(grid)
    assert html.startswith("<table><caption>Table C1: Summary statistics for 2,012 respondents in SAVE 2009.</caption>")
    assert '<thead><tr><th scope="col">Variable</th><th scope="col">Mean</th>' in html
    gt = "<table>" + "".join("<tr>" + "".join(f"<td>{t}</td>" for t in row) + "</tr>" for row in texts) + "</table>"
    assert bind(html, gt)["bound"] == 4


def test_empty_rows_above_the_labels_join_the_header():
    from worker.core.headers import column_labels, header_rows_of
    from worker.core.types import Cell, TableGrid

    texts = [["", "", ""], ["", "population 1995 (mn)", "outlets 1996/7 (000)"], ["Germany", "81.9", "73.6"]]
    texts += [["France", "58.1", "34.8"]]
    grid = TableGrid(4, 3, [Cell(r, c, text=t) for r, row in enumerate(texts) for c, t in enumerate(row)])
    assert header_rows_of(grid) == (2, "inferred")
    assert column_labels(grid)[1:] == ["population 1995 (mn)", "outlets 1996/7 (000)"]


def test_a_row_of_years_under_a_models_header_of_group_labels_joins_it():
    """Skew-1 scan, dev eu-004 p9 t8: the model closed its header over "number of franchisors"
    and "number of franchisees" (two columns each), and the row of years under them, its stub
    empty, was read as the first body row: no value kept its year. The model's header is
    lengthened by the rows the inference takes, never shortened."""
    from worker.core.headers import header_rows_of, sub_header_rows
    from worker.core.types import Cell, TableGrid
    from worker.evaluation.binding import bind

    cells = [Cell(0, 0, text=""), Cell(0, 1, 1, 2, "number of franchisors"), Cell(0, 3, 1, 2, "number of franchisees")]
    body = [["", "1993", "1994", "1993", "1994"], ["Austria", "80", "170", "2500", "2700"]]
    body += [["Denmark", "42", "42", "500", "500"], ["Finland", "90", "135", "3200", "2495"]]
    cells += [Cell(r + 1, c, text=t) for r, row in enumerate(body) for c, t in enumerate(row)]
    grid = TableGrid(5, 5, cells, header_rows=1)
    assert header_rows_of(grid) == (1, "model")  # the decision itself is the grid's (a reviewer's too)
    grid.header_rows = sub_header_rows(grid)  # as the grid builder does with the model's
    assert header_rows_of(grid) == (2, "model")
    gt = (
        '<table><tr><td></td><td colspan="2">number of franchisors</td><td colspan="2">number of franchisees</td></tr>'
        + "".join("<tr>" + "".join(f"<td>{t}</td>" for t in row) + "</tr>" for row in body)
        + "</table>"
    )
    got = bind(grid_to_html(grid), gt)
    assert got["bound"] == got["values"] == 12
    assert sub_header_rows(TableGrid(5, 5, cells, header_rows=3)) == 3  # a longer header stays as it is
