"""Header flattening, row labels and groups, units, Markdown and the description."""

from __future__ import annotations

from worker.core.headers import infer_header_rows, is_value_like
from worker.core.serialise import TableContext, grid_from_dict, rows_text, serialisations
from worker.core.types import Cell, TableGrid
from worker.core.units import column_units, is_unit, units_in_label, units_in_text
from worker.devtools.samples import CellSpec, TableSpec, financial_table, key_figures_table, staffing_table


def grid_of(spec: TableSpec, header_rows: int | None = None) -> TableGrid:
    n_rows, n_cols = spec.shape
    hr = spec.header_rows if header_rows is None else header_rows
    cells = [
        Cell(c["row"], c["col"], c["rowspan"], c["colspan"], c["text"], is_header=c["row"] < hr) for c in spec.layout()
    ]
    return TableGrid(n_rows, n_cols, cells, header_rows=hr)


def spec(rows: list[list[str | tuple[str, int, int]]], header_rows: int) -> TableSpec:
    return TableSpec(
        tuple(tuple(CellSpec(c) if isinstance(c, str) else CellSpec(*c) for c in row) for row in rows), header_rows
    )


def test_two_level_header_spans_repeated_and_row_spans_carried():
    ser = serialisations(grid_of(financial_table()))
    assert ser["column_labels"] == [
        "Region",
        "Product",
        "2023 / Revenue",
        "2023 / Cost",
        "2024 / Revenue",
        "2024 / Cost",
    ]
    assert ser["header_source"] == "model"
    lines = ser["row_lines"]
    assert lines[0] == (
        "Region: North; Product: Widgets; 2023 / Revenue: 1,200; 2023 / Cost: 800; "
        "2024 / Revenue: 1,350; 2024 / Cost: 870"
    )
    assert lines[1].startswith("Region: North; Product: Gadgets; ")  # the row-spanning label in every row
    assert lines[3].startswith("Region: South; Product: Gadgets; ")
    assert lines[4].startswith("Region + Product: Total; 2023 / Revenue: 3,340")  # said once, both labels
    assert [r["block"] for r in ser["rows"]] == [0, 0, 1, 1, 2]  # rows tied by a span travel together


def test_three_level_header_with_empty_corner_and_units():
    g = grid_of(
        spec(
            [
                [("", 3, 1), ("Europe", 1, 4)],
                [("2023", 1, 2), ("2024", 1, 2)],
                ["Revenue (£m)", "Cost (£m)", "Revenue (£m)", "Headcount"],
                ["North", "10.5", "7", "11", "120"],
                ["South", "9", "6.5", "8", "98"],
            ],
            header_rows=3,
        )
    )
    ser = serialisations(g)
    assert ser["column_labels"] == [
        "",
        "Europe / 2023 / Revenue (£m)",
        "Europe / 2023 / Cost (£m)",
        "Europe / 2024 / Revenue (£m)",
        "Europe / 2024 / Headcount",
    ]
    # empty corner: the row label stands alone, first
    assert ser["row_lines"][0] == (
        "North; Europe / 2023 / Revenue (£m): 10.5; Europe / 2023 / Cost (£m): 7; "
        "Europe / 2024 / Revenue (£m): 11; Europe / 2024 / Headcount: 120"
    )
    assert [(u["col"], u["unit"], u["source"]) for u in ser["units"]] == [
        (1, "£m", "header"),
        (2, "£m", "header"),
        (3, "£m", "header"),
    ]
    assert "Columns: (row label) | Europe / 2023 / Revenue (£m)" in ser["description"]
    assert "Units: Europe / 2023 / Revenue (£m): £m;" in ser["description"]
    assert ser["markdown_lossy"] and "3 header rows flattened into one" in ser["markdown_lossy_reasons"]


def test_projected_row_headers_become_group_labels_carried_into_their_rows():
    cells = [
        Cell(0, 0, text="Item", is_header=True),
        Cell(0, 1, text="2024", is_header=True),
        Cell(1, 0, 1, 2, "Assets", is_projected_row_header=True),
        Cell(2, 0, 1, 2, "Current assets", is_projected_row_header=True),
        Cell(3, 0, text="Cash"),
        Cell(3, 1, text="10"),
        Cell(4, 0, text="Stock"),
        Cell(4, 1, text="4"),
        Cell(5, 0, 1, 2, "Liabilities"),  # a full-width row without the model's flag is a group too
        Cell(6, 0, text="Loans"),
        Cell(6, 1, text="7"),
    ]
    ser = serialisations(TableGrid(7, 2, cells, header_rows=1))
    assert ser["row_lines"] == [
        "Item: Assets / Current assets / Cash; 2024: 10",
        "Item: Assets / Current assets / Stock; 2024: 4",
        "Item: Liabilities / Loans; 2024: 7",
    ]
    kinds = [r["kind"] for r in ser["rows"]]
    assert kinds == ["group", "group", "data", "data", "group", "data"]
    sections = [r["section"] for r in ser["rows"]]
    assert sections[:4] == [1, 1, 1, 1] and sections[4:] == [2, 2]
    assert "section rows written in the first column" in ser["markdown_lossy_reasons"]


def test_value_spanning_columns_said_once_under_joined_labels():
    ser = serialisations(grid_of(staffing_table()))
    assert "Q3 + Q4: Closed for repairs" in ser["row_lines"][1]
    assert ser["row_lines"][1].count("Closed for repairs") == 1
    assert ser["row_lines"][3] == "Site + Staff: Notes; Q1 + Q2 + Q3 + Q4: Headcount at the end of each quarter"


def test_plain_grid_markdown_is_exact_and_escaped():
    ser = serialisations(grid_of(key_figures_table()))
    assert not ser["markdown_lossy"] and ser["markdown_lossy_reasons"] == []
    assert ser["markdown"].splitlines()[:3] == [
        "| Metric | 2023 | 2024 |",
        "|---|---|---|",
        "| Margin | 35.5% | 35.8% |",
    ]
    hostile = grid_of(spec([["A|B", "C"], ["x\ny", "<b>1</b>"]], header_rows=1))
    ser = serialisations(hostile)
    assert ser["markdown"].splitlines()[0] == "| A\\|B | C |"
    assert ser["row_lines"] == ["A|B: x y; C: <b>1</b>"]  # one line per row, text kept as read


def test_unlabelled_columns_and_repeated_header_rows():
    g = grid_of(spec([["Name", "", "Score"], ["Ann", "x", "1"], ["Name", "", "Score"], ["Bob", "y", "2"]], 1))
    ser = serialisations(g)
    assert ser["row_lines"] == ["Name: Ann; Column 2: x; Score: 1", "Name: Bob; Column 2: y; Score: 2"]
    assert [r["kind"] for r in ser["rows"]] == ["data", "header", "data"]


def test_header_inferred_only_when_the_first_rows_look_like_one():
    g = grid_of(
        spec(
            [
                ["", ("Threshold", 1, 2)],
                ["", "to air kg/year", "to water kg/year"],
                ["Methane", "100 000", "-"],
                ["CO2", "100 million", "-"],
            ],
            0,
        ),
        header_rows=0,
    )
    assert infer_header_rows(g) == 2
    ser = serialisations(g)
    assert ser["header_source"] == "inferred" and ser["header_rows"] == 2
    assert ser["row_lines"][0] == "Methane; Threshold / to air kg/year: 100 000; Threshold / to water kg/year: -"
    assert [u["unit"] for u in ser["units"]] == ["kg/year", "kg/year"]
    numbers = grid_of(spec([["1", "2"], ["3", "4"]], 0), header_rows=0)
    assert infer_header_rows(numbers) == 0 and serialisations(numbers)["header_source"] == "none"
    words_only = grid_of(spec([["a", "b"], ["c", "d"]], 0), header_rows=0)
    assert infer_header_rows(words_only) == 0  # no column of values below: nothing says "header"
    years = grid_of(spec([["Metric", "2023", "2024"], ["Sales", "5", "6"]], 0), header_rows=0)
    assert infer_header_rows(years) == 1


def test_units_from_caption_and_notes():
    g = grid_of(key_figures_table())
    ser = serialisations(g, TableContext("Key figures (in EUR thousand)", [], [4]))
    assert {u["unit"] for u in ser["units"]} == {"EUR thousand"}
    assert all(u["source"] == "caption" for u in ser["units"])
    assert ser["row_lines"][1] == "Metric: Employees; 2023 (EUR thousand): 1,204; 2024 (EUR thousand): 1,262"
    assert ser["description"].splitlines()[:2] == ["Table: Key figures (in EUR thousand)", "Page: 4"]
    ser = serialisations(g, TableContext("", ["Note: all figures in thousands."], [4]))
    assert {u["source"] for u in ser["units"]} == {"notes"} and ser["units"][0]["unit"] == "thousands"
    assert "Notes: Note: all figures in thousands." in ser["description"]
    # two different table-wide units: ambiguous, applied nowhere
    assert column_units([["A"], ["B"]], [False, True], "Sales in EUR million", ["Staff in thousands"])[1] is None


def test_unit_vocabulary():
    for text in ("£m", "%", "kg/year", "EUR million", "in thousands", "€ bn", "tonnes", "% of GDP", "'000"):
        assert is_unit(text), text
    for text in ("CO2", "median", "as HF", "HFCs", "2024", "Germany", "n"):
        assert not is_unit(text), text
    assert units_in_label("Revenue (£m)") == "£m"
    assert units_in_label("to air kg/year") == "kg/year"
    assert units_in_label("Carbon dioxide (CO2)") is None
    assert units_in_label("Length m") is None  # a bare letter is not trusted outside brackets
    assert units_in_text("All figures are in EUR thousand unless stated") == ["EUR thousand"]
    assert units_in_text("Table 6.10 Private Label Penetration (Value Shares) by Member State (%)") == ["%"]
    assert is_value_like("1,200") and is_value_like("-") and is_value_like("(3.5)") and is_value_like("12%")
    assert not is_value_like("2024") and not is_value_like("North")


def test_stored_grid_round_trip_and_rows_file():
    g = grid_of(financial_table())
    again = grid_from_dict(g.to_dict())
    assert again.shape_signature() == g.shape_signature()
    assert serialisations(again) == serialisations(g)
    text = rows_text(serialisations(g, TableContext("Sales", [], [2])))
    head, body = text.split("\n\n")
    assert head.startswith("Table: Sales\nPage: 2\nColumns: Region | Product")
    assert len(body.strip().splitlines()) == 5


def test_empty_and_broken_grids_do_not_crash():
    assert serialisations(TableGrid(0, 0, []))["row_lines"] == []
    holey = TableGrid(2, 2, [Cell(0, 0, text="a"), Cell(1, 1, text="b")], header_rows=1)  # two slots unowned
    ser = serialisations(holey)
    assert ser["row_lines"] == ["Column 2: b"]


def test_caption_count_unit_never_reaches_percent_rate_or_their_margin_columns():
    """'(Numbers in thousands)' over a table with Number, Percent, Margin of error and Rate
    columns: only the count columns read in thousands; the header unit of a spanning label
    governs the columns under it; each unit says where it was stated."""
    texts = [
        ["Characteristic", "2005", "", "", "Poverty rate", "Value (EUR million)"],
        ["", "Number", "Percent", "Margin of error (±)", "", ""],
        ["All people", "36,950", "12.6", "0.3", "11.1", "1,204"],
        ["Under 18 years", "12,896", "17.6", "0.5", "16.3", "2,085"],
    ]
    cells = [
        Cell(r, c, text=t)
        for r, row in enumerate(texts)
        for c, t in enumerate(row)
        if not ((r == 0 and c in (2, 3)) or (r == 1 and c in (4, 5)))
    ]
    cells = [
        Cell(0, 1, 1, 3, "2005")
        if (x.row, x.col) == (0, 1)
        else Cell(0, 4, 2, 1, "Poverty rate")
        if (x.row, x.col) == (0, 4)
        else Cell(0, 5, 2, 1, "Value (EUR million)")
        if (x.row, x.col) == (0, 5)
        else x
        for x in cells
    ]
    grid = TableGrid(4, 6, cells, header_rows=2)
    grid.owner_map()
    ser = serialisations(grid, TableContext("Table 1. People in poverty (Numbers in thousands)", [], [1]))
    units = {u["col"]: (u["unit"], u["source"]) for u in ser["units"]}
    assert units == {1: ("thousands", "caption"), 5: ("EUR million", "header")}
    line = ser["row_lines"][0]
    assert "2005 / Number (thousands): 36,950" in line
    assert "2005 / Percent: 12.6" in line and "2005 / Margin of error (±): 0.3" in line
    assert "Poverty rate: 11.1" in line and "Value (EUR million): 1,204" in line
    grouped = column_units([["Sales (EUR million)", "Total"], ["Sales (EUR million)", "Share %"]], [True, True])
    assert grouped == [{"unit": "EUR million", "source": "spanning header"}, {"unit": "%", "source": "header"}]


def test_leader_debris_leaves_row_labels_but_cell_text_keeps_what_was_read():
    """OCR of a dotted leader on a scan: `All ages ee ee ee ee)`, `With a disability cece`."""
    from worker.core.headers import label_text
    from worker.core.html_out import grid_to_html

    texts = [
        ["Characteristic", "Number", "Percent"],
        ["All ages ee ee ee ee)", "36,950", "12.6"],
        ["With a disability cece", "4,704", "21.0"],
        ["Under 18 years . . . . .", "12,896", "17.6"],
        ["Type of it", "5", "1.0"],
    ]
    grid = TableGrid(5, 3, [Cell(r, c, text=t) for r, row in enumerate(texts) for c, t in enumerate(row)])
    lines = serialisations(grid)["row_lines"]
    assert lines[0] == "Characteristic: All ages; Number: 36,950; Percent: 12.6"
    assert lines[1].startswith("Characteristic: With a disability; ")
    assert lines[2].startswith("Characteristic: Under 18 years; ")
    assert lines[3].startswith("Characteristic: Type of it; ")  # short real words are no debris
    assert "All ages ee ee ee ee)" in grid_to_html(grid)  # the cell keeps what was read
    assert label_text("Sweden ce ce ce ce") == "Sweden" and label_text("Vitamin E") == "Vitamin E"
