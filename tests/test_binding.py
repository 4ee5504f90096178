"""Label binding: each ground-truth value must be found under its own row label and column path.

Tables are made up here with the traits the measure must catch: a header row of dates each
spanning two columns, a lost header level, a lost stub column, OCR slips in labels.
"""

from __future__ import annotations

from worker.core.html_parse import html_to_grid
from worker.evaluation.binding import bind, gt_header_rows, label_norm, read_cells, similar
from worker.evaluation.teds import teds

# Two dates, each over an "Actual" and a "Margin of error (±)" column; a stub head two rows tall.
GT = (
    "<table>"
    '<tr><td rowspan="2">Region and state</td><td colspan="2">2007</td><td colspan="2">2009</td></tr>'
    "<tr><td>Actual</td><td>Margin of error (±)</td><td>Actual</td><td>Margin of error (±)</td></tr>"
    "<tr><td>Northeast</td><td>1,204</td><td>3.1</td><td>1,250</td><td>2.9</td></tr>"
    "<tr><td>Maine</td><td>88</td><td>0.7</td><td>91</td><td>0.8</td></tr>"
    "<tr><td>Midwest</td><td>2,085</td><td>53.3</td><td>2,101</td><td>-</td></tr>"
    "</table>"
)


def _rows(*rows: str) -> str:
    return "<table>" + "".join(rows) + "</table>"


def test_ground_truth_binds_itself_with_its_header_found():
    g = html_to_grid(GT)
    assert gt_header_rows(g) == 2
    cells = {(c.row, c.col): c for c in read_cells(GT, ground_truth=True)}
    assert cells[(2, 3)].value == "1,250"
    assert cells[(2, 3)].row_label == "northeast" and cells[(2, 3)].col_path == "2009 actual"
    assert cells[(4, 2)].col_path == "2007 margin of error"
    assert (2, 0) not in cells  # stub cells are labels, not values
    got = bind(GT, GT)
    assert (got["values"], got["bound"], got["col_bound"], got["row_bound"]) == (12, 12, 12, 12)
    assert not any(got["lost"].values())


def test_dates_merged_into_one_header_cell_lose_every_column_label():
    merged = GT.replace('<td colspan="2">2007</td><td colspan="2">2009</td>', '<td colspan="4">2007 2009</td>')
    assert teds(merged, GT) > 0.9  # TEDS barely notices
    got = bind(merged, GT)
    assert got["values"] == 12 and got["row_bound"] == 12
    assert got["bound"] == 0 and got["col_bound"] == 0
    assert got["lost"]["wrong_column"] == 12  # each value is there, under its row label only


def test_a_lost_year_level_labels_both_groups_alike_and_binds_nothing_under_a_year():
    lost = GT.replace(
        '<td colspan="2">2007</td><td colspan="2">2009</td>', '<td colspan="2"></td><td colspan="2"></td>'
    )
    assert bind(lost, GT)["col_bound"] == 0


def test_header_cell_one_column_too_wide_mislabels_the_shifted_columns():
    shifted = GT.replace('<td colspan="2">2007</td><td colspan="2">2009</td>', '<td colspan="3">2007</td><td>2009</td>')
    got = bind(shifted, GT)
    # the 2009 "Actual" column (3 values) now reads as 2007; its margin column still reads right
    assert got["col_bound"] == 9 and got["bound"] == 9


def test_lost_stub_column_keeps_numbers_but_loses_their_row_labels():
    no_stub = GT.replace("<td>Northeast</td>", "<td></td>").replace("<td>Maine</td>", "<td></td>")
    no_stub = no_stub.replace("<td>Midwest</td>", "<td></td>")
    got = bind(no_stub, GT)
    assert got["row_bound"] == 0 and got["col_bound"] == 12 and got["bound"] == 0
    assert got["lost"]["wrong_row"] == 12


def test_merged_values_and_a_missed_table_bind_nothing():
    merged = GT.replace("<td>2,085</td><td>53.3</td>", '<td colspan="2">2,085 53.3</td>')
    got = bind(merged, GT)
    assert got["bound"] == 10  # the two merged values are lost, the others stay
    assert got["lost"]["missing"] == 2
    missed = bind("", GT)
    assert (missed["bound"], missed["col_bound"], missed["row_bound"]) == (0, 0, 0)
    assert missed["lost"]["no_table"] == 12


def test_a_misread_value_under_its_own_labels_is_told_from_a_missing_one():
    got = bind(GT.replace("<td>1,250</td>", "<td>1,2S0</td>"), GT)
    assert got["bound"] == 11 and got["lost"]["misread"] == 1


def test_ocr_slips_are_tolerated_but_a_different_label_is_not():
    assert similar(label_norm("Hydro-fluorocarbons (HFCs)"), label_norm("Hydro-fIuorocarbons (HFCs)"))
    assert similar(label_norm("Margin of error (±)"), label_norm("Margin of error (+)"))
    assert not similar(label_norm("2007"), label_norm("2009"))
    assert not similar(label_norm("Total"), label_norm("Totai"))  # five letters: no slip allowed
    assert not similar(label_norm("Maine"), label_norm("Midwest"))
    assert label_norm("All ages . . . . .") == "all ages"
    slipped = GT.replace("Margin of", "Margln of").replace("1,204", "1 204")
    assert bind(slipped, GT)["bound"] == 12


def test_predicted_header_comes_from_markup_and_th_rows():
    marked = _rows(
        "<thead><tr><th>Gas</th><th>to air</th></tr></thead>",
        "<tbody><tr><td>Methane</td><td>100 000</td></tr><tr><td>Ethane</td><td>x</td></tr></tbody>",
    )
    cells = read_cells(marked, ground_truth=False)
    assert [(c.row_label, c.col_path, c.value) for c in cells if c.col == 1] == [
        ("methane", "to air", "100 000"),
        ("ethane", "to air", "x"),
    ]
    th_only = marked.replace("<thead>", "").replace("</thead>", "")
    assert [c.col_path for c in read_cells(th_only, ground_truth=False) if c.col == 1] == ["to air", "to air"]


def test_multi_column_stub_joins_its_labels():
    gt = _rows(
        "<tr><td>Region</td><td>State</td><td>Units</td></tr>",
        '<tr><td rowspan="2">West</td><td>Utah</td><td>12</td></tr>',
        "<tr><td>Idaho</td><td>7</td></tr>",
    )
    cells = {c.value: c for c in read_cells(gt, ground_truth=True)}
    assert set(cells) == {"12", "7"}
    assert cells["7"].row_label == "west idaho" and cells["7"].col_path == "units"


def test_age_bands_in_a_ground_truth_header_row_are_labels():
    """An age band ("15-24") beside "Female" and "Total" heads its column: the header is two rows deep, and
    a value under it binds to "Finland / 15-24"."""
    gt = (
        "<table>"
        '<tr><td></td><td colspan="3">Finland</td></tr>'
        "<tr><td></td><td>Female</td><td>Total</td><td>15-24</td></tr>"
        "<tr><td>1995</td><td>15.1</td><td>15.4</td><td>29.7</td></tr>"
        "<tr><td>2000</td><td>10.6</td><td>9.8</td><td>21.4</td></tr>"
        "</table>"
    )
    assert gt_header_rows(html_to_grid(gt)) == 2
    cells = {(c.row, c.col): c for c in read_cells(gt, ground_truth=True)}
    assert cells[(2, 3)].col_path == "finland 15 24"  # label_norm: punctuation to spaces


def test_a_wrong_value_under_its_own_labels_is_counted_stated_unless_its_cell_is_marked():
    """The confident wrong answer: "2,585" read for "2,085" under Midwest / 2007 Actual. It is
    stated as certain unless the prediction marks its slot (row 4, col 1) as doubtful; a right
    value in a marked slot is the mark's cost."""
    misread = GT.replace("<td>2,085</td>", "<td>2,585</td>")
    got = bind(misread, GT)
    assert got["bound"] == 11 and got["lost"]["misread"] == 1
    assert (got["stated_wrong"], got["marked_wrong"], got["marked_right"]) == (1, 0, 0)
    got = bind(misread, GT, frozenset({(4, 1), (3, 2)}))
    assert (got["stated_wrong"], got["marked_wrong"], got["marked_right"]) == (0, 1, 1)
    # a value that is gone with no cell under its labels is missing, not stated wrong
    gone = GT.replace("<tr><td>Midwest</td><td>2,085</td><td>53.3</td><td>2,101</td><td>-</td></tr>", "")
    got = bind(gone, GT)
    assert got["lost"]["missing"] == 4 and got["stated_wrong"] == 0


def test_rates_add_up_the_stated_wrong_values_over_tables():
    from worker.evaluation.binding import rates

    misread = GT.replace("<td>2,085</td>", "<td>2,585</td>")
    r = rates([bind(misread, GT), bind(misread, GT, frozenset({(4, 1)})), bind(GT, GT)])
    assert (r["values"], r["stated_wrong"], r["marked_wrong"], r["marked_right"]) == (36, 1, 1, 0)


def test_our_records_marks_land_on_the_cells_the_measure_reads():
    """The eval reads our HTML for the values and our table JSON for the marks: a spanned
    header and a low-confidence cell must meet at the same (row, col) on both sides."""
    from worker.core.html_out import grid_to_html
    from worker.core.types import Cell, TableGrid
    from worker.evaluation.pages_eval import _unsure

    cells = [
        Cell(0, 0, 2, 1, "Region"),
        Cell(0, 1, 1, 2, "2007"),
        Cell(1, 1, 1, 1, "Actual"),
        Cell(1, 2, 1, 1, "Margin"),
        Cell(2, 0, 1, 1, "Maine"),
        Cell(2, 1, 1, 1, "88", confidence=0.3),
        Cell(2, 2, 1, 1, "0.7"),
    ]
    grid = TableGrid(3, 3, cells, header_rows=2)
    unsure = _unsure({"grid": grid.to_dict()})
    assert unsure == {(2, 1)}
    gt = grid_to_html(TableGrid(3, 3, [*cells[:5], Cell(2, 1, 1, 1, "86"), cells[6]], header_rows=2))
    got = bind(grid_to_html(grid), gt, unsure)
    assert (got["bound"], got["stated_wrong"], got["marked_wrong"]) == (1, 0, 1)
