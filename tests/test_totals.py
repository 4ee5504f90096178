"""Numbers that add up: the totals check, the choice among OCR readings, glyph repairs (pure core)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from worker.core.flags import complexity_flags
from worker.core.glyphs import repair_glyphs
from worker.core.replay import apply_corrections, parse_payload, payload, replay_grid
from worker.core.totals import (
    Reading,
    cells_to_reread,
    check_totals,
    choose_readings,
    decimals,
    is_rate_label,
    is_total_label,
    one_digit_apart,
)
from worker.core.types import Cell, StructureObject, TableGrid, Word
from worker.devtools.samples import financial_table, staffing_table


def grid_of(rows: Sequence[Sequence[str]], header_rows: int = 1) -> TableGrid:
    """A plain grid (no spans) from rows of texts."""
    cells = [Cell(r, c, text=t, is_header=r < header_rows) for r, row in enumerate(rows) for c, t in enumerate(row)]
    return TableGrid(len(rows), len(rows[0]), cells, header_rows=header_rows)


def spec_grid(spec, edits: dict[tuple[int, int], str] | None = None) -> TableGrid:
    edits = edits or {}
    cells = [
        Cell(
            c["row"],
            c["col"],
            c["rowspan"],
            c["colspan"],
            edits.get((c["row"], c["col"]), c["text"]),
            is_header=c["is_header"],
        )
        for c in spec.layout()
    ]
    n_rows, n_cols = spec.shape
    return TableGrid(n_rows, n_cols, cells, header_rows=spec.header_rows)


@pytest.mark.parametrize(
    "label",
    ["Total", "TOTAL", "Totals", "Total:", "Grand total", "Sub-total", "Subtotal", "EU15 Total", "Total (n)",
     "Total(4MSs)", "Total EURbn", "All", "All ages", "All persons", "Overall", "Insgesamt", "Total¹", "Total*"],
)  # fmt: skip
def test_total_labels(label: str) -> None:
    assert is_total_label(label)


@pytest.mark.parametrize(
    "label",
    ["Total nitrogen", "Total diagnostic delay", "Not at all", "Pct of all companies analysed", "", "Region",
     "Overwhelmed by all you had to do", "Totally new", "All companies in the sample that were analysed"],
)  # fmt: skip
def test_not_total_labels(label: str) -> None:
    assert not is_total_label(label)


def test_rate_labels() -> None:
    for label in ("Rate per 1,000", "%", "Share (%)", "Mean age", "Median income", "Growth", "Per cent"):
        assert is_rate_label(label), label
    for label in ("Revenue", "Cost", "Persons", "2024", "Number of outlets (000)"):
        assert not is_rate_label(label), label


def test_decimals_and_one_digit_differences() -> None:
    assert decimals("1,234") == 0 and decimals("12.50") == 2 and decimals("(3.5)") == 1 and decimals("12,5") == 1
    assert decimals("45.2%") == 1 and decimals("n/a") == 0
    assert one_digit_apart(200, 0) and one_digit_apart(-3, 0) and one_digit_apart(0.3, 1)
    assert not one_digit_apart(210, 0) and not one_digit_apart(0, 0) and not one_digit_apart(8.7, 1)


def test_sample_financial_table_adds_up() -> None:
    report = check_totals(spec_grid(financial_table()))
    assert report.status == "agree"
    assert [(c.label, c.printed, c.status) for c in report.checks] == [
        ("Total / 2023 / Revenue", 3340, "agree"),
        ("Total / 2023 / Cost", 2155, "agree"),
        ("Total / 2024 / Revenue", 3635, "agree"),
        ("Total / 2024 / Cost", 2335, "agree"),
    ]
    assert report.checks[0].members == ((2, 2), (3, 2), (4, 2), (5, 2))
    assert report.to_dict()["agreed"] == 4


def test_a_wrong_total_is_a_mismatch_by_how_much() -> None:
    report = check_totals(spec_grid(financial_table(), {(6, 5): "2,535"}))
    assert report.status == "mismatch"
    (bad,) = report.mismatches
    assert bad.total == (6, 5) and bad.label == "Total / 2024 / Cost"
    assert (bad.printed, bad.computed, bad.difference) == (2535, 2335, 200)
    assert report.count("agree") == 3
    # a misread member is caught the same way: its column's total no longer agrees
    member = check_totals(spec_grid(financial_table(), {(3, 2): "840"}))
    assert [(c.total, c.difference) for c in member.mismatches] == [((6, 2), -200)]
    assert set(cells_to_reread(member)) == {(6, 2), (2, 2), (3, 2), (4, 2), (5, 2)}


def test_no_total_no_check() -> None:
    assert check_totals(spec_grid(staffing_table())).status == "none"
    # the values of a last row equal to the sums do not make it a total when its label is empty
    g = grid_of([["Item", "A", "B"], ["x", "1", "2"], ["y", "3", "4"], ["", "4", "6"]])
    assert check_totals(g).checks == []


def test_rounding_is_tolerated_by_the_printed_decimals() -> None:
    g = grid_of([["Item", "Share"], ["a", "33.3"], ["b", "33.3"], ["c", "33.3"], ["Total", "100.0"]])
    # a share column is a rate: never summed
    assert check_totals(g).checks == []
    g = grid_of([["Item", "Tonnes"], ["a", "33.3"], ["b", "33.3"], ["c", "33.3"], ["Total", "100.0"]])
    (check,) = check_totals(g).checks
    assert check.status == "agree" and round(check.difference, 6) == 0.1 and check.tolerance >= 0.2
    g = grid_of([["Item", "Tonnes"], ["a", "33.3"], ["b", "33.3"], ["c", "33.3"], ["Total", "100.9"]])
    assert check_totals(g).checks[0].status != "agree"


def test_rates_percent_and_averages_are_not_summed() -> None:
    rows = [
        ["Age", "Persons", "Rate per 1,000", "Share", "Mean income"],
        ["0-14", "120", "4.5", "30%", "0"],
        ["15-64", "200", "6.1", "50%", "21,000"],
        ["65+", "80", "9.0", "20%", "18,000"],
        ["All ages", "400", "6.2", "100%", "19,500"],
    ]
    report = check_totals(grid_of(rows))
    assert [(c.label, c.status) for c in report.checks] == [("All ages / Persons", "agree")]
    # a caption stating the table's unit as a percentage leaves every column unsummed
    g = grid_of([["Sector", "Men", "Women"], ["a", "60.1", "30.2"], ["b", "39.9", "69.8"], ["Total", "50.0", "50.0"]])
    assert check_totals(g, caption="Employment by sector (in %)").checks == []


def test_sub_totals_and_sections() -> None:
    rows = [
        ["Item", "2023", "2024"],
        ["a", "10", "11"],
        ["b", "20", "21"],
        ["Subtotal", "30", "32"],
        ["c", "5", "6"],
        ["d", "7", "8"],
        ["Subtotal", "12", "14"],
        ["Grand total", "42", "46"],
    ]
    report = check_totals(grid_of(rows))
    assert report.status == "agree" and report.count("agree") == 6
    grand = [c for c in report.checks if c.total[0] == 7]
    assert all(c.members_rule == "sub-totals above" for c in grand)
    # a total opening its section sums the rows below it
    rows = [["Group", "N"], ["All persons", "30"], ["Men", "14"], ["Women", "16"]]
    (check,) = check_totals(grid_of(rows)).checks
    assert check.status == "agree" and check.members_rule == "rows below"


def test_sections_under_outer_row_groups() -> None:
    # col 0 groups rows (a cell spanning three rows); "Total" in col 1 sums its group only
    cells = [Cell(0, 0, text="Year", is_header=True), Cell(0, 1, text="Sex", is_header=True)]
    cells += [Cell(0, 2, text="Count", is_header=True)]
    values = {
        1: ("Men", "10"),
        2: ("Women", "12"),
        3: ("Total", "22"),
        4: ("Men", "9"),
        5: ("Women", "8"),
        6: ("Total", "17"),
    }
    cells += [Cell(1, 0, rowspan=3, text="1991"), Cell(4, 0, rowspan=3, text="1996")]
    cells += [Cell(r, 1, text=s) for r, (s, _) in values.items()] + [Cell(r, 2, text=v) for r, (_, v) in values.items()]
    report = check_totals(TableGrid(7, 3, cells, header_rows=1))
    assert [(c.total, c.members, c.status) for c in report.checks] == [
        ((3, 2), ((1, 2), (2, 2)), "agree"),
        ((6, 2), ((4, 2), (5, 2)), "agree"),
    ]


def test_total_columns() -> None:
    rows = [["Country", "Men", "Women", "Total"], ["A", "10", "12", "22"], ["B", "5", "6", "11"], ["C", "1", "1", "5"]]
    report = check_totals(grid_of(rows))
    assert [(c.axis, c.total, c.status) for c in report.checks] == [
        ("column", (1, 3), "agree"),
        ("column", (2, 3), "agree"),
        ("column", (3, 3), "mismatch"),
    ]
    # an average labelled Total (the total column of rates) never agrees, and is not called wrong
    rows = [["Country", "Men", "Women", "Total"], ["A", "61.2", "58.8", "60.1"], ["B", "70.4", "66.0", "68.3"]]
    assert {c.status for c in check_totals(grid_of(rows)).checks} == {"unverified"}


def test_unknown_members_leave_the_check_out() -> None:
    rows = [["Item", "N"], ["a", "10"], ["b", ""], ["c", "5"], ["Total", "20"]]
    assert check_totals(grid_of(rows)).checks == []
    rows = [["Item", "N"], ["a", "10"], ["b", "-"], ["c", "5"], ["Total", "15"]]
    assert check_totals(grid_of(rows)).status == "agree"  # a dash is nil
    rows = [["Item", "N"], ["a", "10"], ["b", "12 (40%)"], ["Total", "22"]]
    assert check_totals(grid_of(rows)).checks == []


def test_the_reading_that_makes_the_sum_agree_wins() -> None:
    grid = spec_grid(financial_table(), {(6, 5): "2,535"})
    readings = {
        (6, 5): [Reading("2,535", "ocr", 0.56), Reading("2,335", "tesseract-digits", 0.9)],
        (2, 5): [Reading("870", "ocr", 0.96), Reading("670", "tesseract-digits", 0.97)],  # would break it
        (3, 2): [Reading("640", "ocr", 0.96), Reading("840", "tesseract-digits", 0.99)],  # an agreeing column
    }
    decision = choose_readings(grid, readings)
    assert decision.report.status == "agree" and decision.report.count("agree") == 4
    (decided,) = decision.decided
    assert decided["row"] == 6 and decided["col"] == 5
    assert (decided["text"], decided["previous"], decided["source"], decided["decided_by"]) == (
        "2,335",
        "2,535",
        "tesseract-digits",
        "totals",
    )
    texts = {(c.row, c.col): c.text for c in decision.grid.cells}
    assert texts[(6, 5)] == "2,335" and texts[(2, 5)] == "870" and texts[(3, 2)] == "640"
    assert {(c.row, c.col): c.text for c in grid.cells}[(6, 5)] == "2,535"  # the input grid is left alone


def test_a_misread_member_is_chosen_too_and_nothing_when_no_reading_helps() -> None:
    grid = spec_grid(financial_table(), {(4, 4): "1,070"})
    decision = choose_readings(grid, {(4, 4): [Reading("1,070", "ocr", 0.7), Reading("1,010", "second", 0.8)]})
    assert [d["text"] for d in decision.decided] == ["1,010"] and decision.report.status == "agree"
    unhelpful = choose_readings(grid, {(4, 4): [Reading("1,070", "ocr", 0.7), Reading("1,700", "second", 0.8)]})
    assert unhelpful.decided == [] and unhelpful.report.status == "mismatch" and unhelpful.tried == 1
    clean = choose_readings(spec_grid(financial_table()), {(6, 5): [Reading("2,535", "second", 0.9)]})
    assert clean.decided == [] and clean.tried == 0  # nothing to decide where the sums agree


def test_the_search_is_bounded() -> None:
    grid = spec_grid(financial_table(), {(6, 5): "2,535"})
    many = {(r, 5): [Reading(str(v), "second", 0.5) for v in range(100, 140)] for r in range(2, 7)}
    decision = choose_readings(grid, many, max_combinations=50)
    assert decision.tried == 50


def test_totals_mismatch_is_a_flag_reason_that_needs_vision() -> None:
    grid = spec_grid(financial_table(), {(6, 5): "2,535"})
    flags = complexity_flags(grid, totals_mismatches=["Total / 2024 / Cost reads 2535, its members sum to 2335"])
    fired = [f for f in flags["rules"] if f["rule"] == "totals_mismatch"]
    assert fired and "2535" in fired[0]["reason"] and flags["needs_vision"]
    assert not any(f["rule"] == "totals_mismatch" for f in complexity_flags(grid)["rules"])


def test_glyph_repairs_only_where_unambiguous() -> None:
    grid = spec_grid(staffing_table(), {(0, 2): "Ql"})
    assert repair_glyphs(grid) == [{"row": 0, "col": 2, "from": "Ql", "to": "Q1", "rule": "enumeration"}]
    assert {(c.row, c.col): c.text for c in grid.cells}[(0, 2)] == "Q1"
    # two cells that could both be "Q1": no repair
    assert repair_glyphs(spec_grid(staffing_table(), {(0, 2): "Ql", (0, 3): "Q1"})) == []
    grid = spec_grid(financial_table(), {(2, 2): "l,200", (3, 4): "7O0"})
    assert [(r["from"], r["to"], r["rule"]) for r in repair_glyphs(grid)] == [
        ("l,200", "1,200", "numeric_column"),
        ("7O0", "700", "numeric_column"),
    ]
    # words stay words: no digit in it, or not a numeric column
    grid = grid_of([["Item", "Note"], ["Oil", "lO"], ["Iron", "ok"], ["Ol", "I"]])
    assert repair_glyphs(grid) == []


def test_stray_marks_at_a_figures_ends_are_dropped_and_recorded() -> None:
    # a photocopy's specks read as points, quotes and colons beside figures: the digits stay
    grid = grid_of(
        [
            ["Country", "Share", "Count", "Time"],
            ["Austria", "12.7", "69.", "10:30"],
            ["Belgium", '"14.8', "1,440", "11:15"],
            ["Denmark", "38:2", "163 :", "9:45"],
            ["Finland", ".49.7", "'22", "8:00"],
            ["France", "7.3", "- 1642", "7:5."],
        ]
    )
    fixes = {(r["row"], r["col"]): (r["from"], r["to"], r["rule"]) for r in repair_glyphs(grid)}
    assert fixes == {
        (2, 1): ('"14.8', "14.8", "stray_marks"),
        (3, 1): ("38:2", "38.2", "stray_marks"),  # the column prints one decimal after a point
        (4, 1): (".49.7", "49.7", "stray_marks"),
        (1, 2): ("69.", "69", "stray_marks"),
        (3, 2): ("163 :", "163", "stray_marks"),
        (4, 2): ("'22", "22", "stray_marks"),
    }
    # a dash before a figure may be its sign; a column of times keeps its colons; labels stay
    texts = {(c.row, c.col): c.text for c in grid.cells}
    assert texts[(5, 2)] == "- 1642" and texts[(5, 3)] == "7:5." and texts[(1, 0)] == "Austria"
    # a colon in a column of whole numbers is not a decimal point
    grid = grid_of([["Item", "N"], ["A", "12"], ["B", "10:3"], ["C", "41"]])
    assert repair_glyphs(grid) == []
    # a point before a figure among whole numbers is a speck; among decimals it is a decimal point
    grid = grid_of(
        [["Item", "N", "Rate"], ["A", "228", "0.5"], ["B", ".99", ".75"], ["C", "16", "1.25"], ["D", "7", "2"]]
    )
    assert [(r["from"], r["to"]) for r in repair_glyphs(grid)] == [(".99", "99")]


def test_corrections_replay_with_the_payload() -> None:
    words = [Word("Ql", (5, 5, 25, 15)), Word("Q2", (35, 5, 55, 15))]
    objects = [
        StructureObject("table", 0.99, (0, 0, 60, 20)),
        StructureObject("table row", 0.99, (0, 0, 60, 20)),
        StructureObject("table column", 0.99, (0, 0, 30, 20)),
        StructureObject("table column", 0.99, (30, 0, 60, 20)),
    ]
    fixes = [{"row": 0, "col": 0, "from": "Ql", "to": "Q1", "rule": "enumeration"}]
    item = parse_payload(payload((60, 20), objects, words, corrections=fixes))
    assert item.corrections == fixes
    grid = replay_grid(item)
    assert [c.text for c in grid.sorted_cells()] == ["Q1", "Q2"]
    assert apply_corrections(grid, fixes) == 0  # applied only where the cell still reads `from`


def test_a_dropped_number_is_filled_only_where_the_sum_confirms_it() -> None:
    grid = spec_grid(financial_table(), {(3, 5): ""})  # OCR dropped "455"
    report = check_totals(grid)
    assert report.unread == [(3, 5)] and report.count("agree") == 3
    assert (3, 5) in cells_to_reread(report)
    decision = choose_readings(grid, {(3, 5): [Reading("", "ocr"), Reading("455", "tesseract-digits", 0.7)]})
    assert [(d["text"], d["previous"]) for d in decision.decided] == [("455", "")]
    assert decision.report.count("agree") == 4 and not decision.report.unread
    for wrong in ("545", "0", "-"):  # not confirmed by the sum, or a nil mark no sum can confirm
        kept = choose_readings(grid, {(3, 5): [Reading(wrong, "tesseract-digits", 0.9)]})
        assert kept.decided == [] and {(c.row, c.col): c.text for c in kept.grid.cells}[(3, 5)] == ""


def test_a_comma_read_as_a_point_in_a_column_grouped_with_commas_is_a_comma_again() -> None:
    # a photocopy's comma read as a point: "3.058" among "5,821" and "24,137" is three thousand
    grid = grid_of(
        [
            ["Country", "Share", "Total (n)", "Rate"],
            ["Austria", "92.9", "5,821", "1.250"],
            ["Belgium", "0", "3.058", "2,100"],
            ["Czech Republic", "99.2", "24,137", "0.125"],
            ["EU total", "61.6", "200.507", "3,200"],
        ]
    )
    fixes = {(r["row"], r["col"]): (r["from"], r["to"], r["rule"]) for r in repair_glyphs(grid)}
    # the rate column prints decimals after a point (0.125 is no thousands): its points stay
    assert fixes == {(2, 2): ("3.058", "3,058", "grouping_point"), (4, 2): ("200.507", "200,507", "grouping_point")}
    # a table that groups thousands with points keeps them, a comma misread among them too
    grid = grid_of([["Item", "N"], ["A", "5.821"], ["B", "24.137"], ["C", "3,058"], ["D", "1,200"], ["E", "7.500"]])
    assert repair_glyphs(grid) == []


def test_points_as_many_as_commas_are_commas_where_the_table_prints_decimals_after_points() -> None:
    # a photocopy read half a column's commas as points; the shares beside it print their
    # decimals after a point, so no point in this table groups thousands
    rows = [["Country", "Share", "Total (n)"]]
    rows += [["A", "86.2", "3,973"], ["B", "13.8", "1.662"], ["C", "0", "4,499"], ["D", "3.4", "2.757"]]
    fixes = [(r["from"], r["to"], r["rule"]) for r in repair_glyphs(grid_of(rows))]
    assert fixes == [("1.662", "1,662", "grouping_point"), ("2.757", "2,757", "grouping_point")]
    # the same counts in a table that prints decimals after a comma: its points group thousands
    european = [[r[0], r[1].replace(".", ","), r[2]] for r in rows]
    assert repair_glyphs(grid_of(european)) == []


def test_a_decimal_point_a_photocopy_erased_is_put_back_where_the_column_prints_one() -> None:
    # eu-016 p3's photocopy: the dot of "100.0" and "13.8" gone, read as a space
    rows = [["Country", "Domestic (%)", "Imported (%)", "Total (n)"]]
    rows += [["A", "86.2", "13 8", "3 375"], ["B", "100 0", "0", "3,973"], ["C", "81.0", "3.8", "158"]]
    rows += [["D", "98.6", "1.4", "10 000"]]
    fixes = [(r["from"], r["to"], r["rule"]) for r in repair_glyphs(grid_of(rows))]
    # thousands grouped with a space ("3 375", "10 000") are numbers already: never touched
    assert fixes == [("13 8", "13.8", "lost_point"), ("100 0", "100.0", "lost_point")]
    # a column printing no decimals, or the table printing them after a comma: nothing said
    whole = [["Item", "N"], ["A", "12"], ["B", "100 0"], ["C", "7"]]
    assert repair_glyphs(grid_of(whole)) == []
    european = [[r[0], r[1].replace(".", ","), r[2].replace(".", ","), r[3]] for r in rows]
    assert repair_glyphs(grid_of(european)) == []
