"""Labels of government statistical tables: units rows, dot leaders, section rows, spanning stubs."""

from __future__ import annotations

from gridgen import grid_from_spec

from worker.core.headers import body_rows, infer_header_rows, label_text
from worker.core.serialise import serialisations


def test_dot_leaders_leave_labels_but_stay_in_cell_text():
    assert label_text("All ages . . . . . .") == "All ages"
    assert label_text("Total.........") == "Total"
    assert label_text("U.S. total") == "U.S. total"
    texts = {(0, 0): "", (0, 1): "Persons", (1, 0): "All ages . . . . .", (1, 1): "1,204"}
    grid = grid_from_spec(2, 2, [], header_rows=1, texts=texts)
    ser = serialisations(grid)
    assert ser["row_lines"] == ["All ages; Persons: 1,204"]
    assert next(c.text for c in grid.cells if c.row == 1 and c.col == 0) == "All ages . . . . ."


def test_units_row_under_a_two_row_header_joins_the_header():
    texts = {
        (0, 0): "Characteristic",
        (0, 1): "Births",
        (0, 2): "Births",
        (1, 0): "",
        (1, 1): "1990",
        (1, 2): "2000",
        (2, 0): "Item",
        (2, 1): "no.",
        (2, 2): "Rate",
        (3, 0): "All ages",
        (3, 1): "4,158",
        (3, 2): "16.7",
        (4, 0): "Under 15",
        (4, 1): "11",
        (4, 2): "1.4",
    }
    grid = grid_from_spec(5, 3, [(0, 1, 1, 2)], texts=texts)
    assert infer_header_rows(grid) == 3
    ser = serialisations(grid)
    assert (
        ser["row_lines"][0] == "Characteristic Item: All ages; Births / 1990 no.: 4,158; Births / 2000 Rate: 16.7"
    )  # the units row sits under cells of its own width: one label with them (`label_paths`)
    assert ser["column_paths"][1] == ["Births", "1990", "no."]  # the structure keeps every level


def test_section_label_row_without_a_span_labels_its_members_but_a_wrapped_label_does_not():
    texts = {
        (0, 0): "",
        (0, 1): "2019",
        (0, 2): "2020",
        (1, 0): "Males",
        (1, 1): "",
        (1, 2): "",
        (2, 0): "Employed",
        (2, 1): "10",
        (2, 2): "11",
        (3, 0): "Total expenditure",
        (3, 1): "",
        (3, 2): "",
        (4, 0): "on health",
        (4, 1): "5",
        (4, 2): "6",
    }
    grid = grid_from_spec(5, 3, [], header_rows=1, texts=texts)
    rows = {r.row: r for r in body_rows(grid, 1)}
    assert rows[1].kind == "group" and rows[2].label == "Males / Employed"
    assert rows[3].kind == "data"


def test_row_label_spanning_two_columns_is_said_once():
    texts = {(0, 0): "", (0, 1): "", (0, 2): "Value", (1, 0): "All persons", (1, 2): "7", (2, 0): "Men", (2, 1): "16+"}
    texts[(2, 2)] = "3"
    grid = grid_from_spec(3, 3, [(1, 0, 1, 2)], header_rows=1, texts=texts)
    ser = serialisations(grid)
    assert ser["row_lines"][0] == "Column 2: All persons; Value: 7"  # the stub columns' labels, said once


def test_a_row_of_years_with_footnote_marks_is_the_header():
    """Years marked for their footnotes ("1995*", "1990**") are column labels, not values:
    without them in the header every value below lost its year."""
    texts = {
        (0, 0): "",
        (0, 1): "1997",
        (0, 2): "1995*",
        (0, 3): "1990**",
        (1, 0): "UK",
        (1, 1): "42.3",
        (1, 2): "29",
        (1, 3): "31",
        (2, 0): "France",
        (2, 1): "18.2",
        (2, 2): "16",
        (2, 3): "20",
    }
    grid = grid_from_spec(3, 4, [], texts=texts)
    assert infer_header_rows(grid) == 1
    ser = serialisations(grid)
    assert ser["row_lines"][0] == "UK; 1997: 42.3; 1995*: 29; 1990**: 31"


def test_a_speck_read_as_a_dash_over_the_header_does_not_hide_it():
    """A photocopy's speck over the table read as "-" in a row of its own: that row is no body
    row, so the labels under it are still found as the header."""
    texts = {
        (0, 0): "-",
        (1, 0): "",
        (1, 1): "to air",
        (1, 2): "to water",
        (2, 0): "Arsenic",
        (2, 1): "20",
        (2, 2): "5",
        (3, 0): "Lead",
        (3, 1): "200",
        (3, 2): "20",
    }
    grid = grid_from_spec(4, 3, [(0, 0, 1, 3)], texts=texts)
    assert infer_header_rows(grid) == 2


def test_age_bands_beside_worded_labels_head_their_columns_but_ranges_alone_do_not():
    """ "15-24" reads like a value, but beside "Female" and "Total" it is a label: the age band of
    its column. A row of ranges with no worded label beside it is left to the body."""
    texts = {
        (0, 0): "",
        (0, 1): "Female",
        (0, 2): "Total",
        (0, 3): "15-24",
        (1, 0): "1995",
        (1, 1): "15.1",
        (1, 2): "15.4",
        (1, 3): "29.7",
        (2, 0): "2000",
        (2, 1): "10.6",
        (2, 2): "9.8",
        (2, 3): "21.4",
    }
    assert infer_header_rows(grid_from_spec(3, 4, [], texts=texts)) == 1
    ranges = dict(texts) | {(0, 1): "5-9", (0, 2): "10-14"}
    assert infer_header_rows(grid_from_spec(3, 4, [], texts=ranges)) == 0


def test_a_header_label_whose_o_was_read_as_zero_is_still_a_label():
    """On a grainy scan "Often" came back as "0ften": read as a value, it hid the whole header
    and every value below lost its column."""
    texts = {
        (0, 0): "",
        (0, 1): "Never",
        (0, 2): "Sometimes",
        (0, 3): "0ften",
        (1, 0): "Left out of things",
        (1, 1): "12",
        (1, 2): "30",
        (1, 3): "8",
        (2, 0): "Lonely",
        (2, 1): "20",
        (2, 2): "25",
        (2, 3): "5",
    }
    assert infer_header_rows(grid_from_spec(3, 4, [], texts=texts)) == 1
