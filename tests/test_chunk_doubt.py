"""Values the extraction doubts are said to be doubtful in every chunk layout, never hidden;
the strict reader of `eval retrieval` reads them as `unsure`, not as a confident answer."""

from __future__ import annotations

import pytest

from worker.core.chunks import LAYOUTS, chunk_table
from worker.core.doubt import UNSURE_MARK, several_numbers, unsure_slots
from worker.core.serialise import TableContext, serialisations
from worker.core.types import Cell, TableGrid
from worker.evaluation.probes import Probe
from worker.evaluation.retrieval.corpus import Unit
from worker.evaluation.retrieval.questions import Question
from worker.evaluation.retrieval.reader import read
from worker.evaluation.retrieval.run import score_question

CAPTION = "Table C1: Summary statistics of the survey"


def stats_table() -> TableGrid:
    """Variable | Mean | Std. Dev. | Max, where Std. Dev. and a lost Min column were read as one
    (`15.9 21`), and the last row's value was read with low confidence (a note line in it)."""
    rows = [
        ["Variable", "Mean", "Std. Dev.", "Max"],
        ["Age", "50.8", "15.9 21", "90"],
        ["Income", "2,127", "1 389", "22,500"],
        ["Children", "1.67", "1.38", "8"],
    ]
    cells = [Cell(r, c, text=t, is_header=r == 0) for r, row in enumerate(rows) for c, t in enumerate(row)]
    cells = [Cell(3, 3, text="8 see note", confidence=0.2) if (x.row, x.col) == (3, 3) else x for x in cells]
    return TableGrid(4, 4, cells, header_rows=1)


@pytest.mark.parametrize(
    ("text", "several"),
    [
        ("15.9 21", True),
        ("21 11", True),
        ("0.50 0", True),
        ("1 389", False),  # thousands in groups: one number
        ("12 345 678", False),
        ("45 (12%)", False),  # a count and its share: one cell's value
        ("1990-94", False),
        ("50.8", False),
        ("Single 25g", False),
    ],
)
def test_two_bare_numbers_side_by_side_are_two_columns_read_as_one(text: str, several: bool) -> None:
    assert several_numbers(text) is several


def test_doubted_slots_are_the_merged_cell_and_the_low_confidence_cell_only() -> None:
    assert unsure_slots(stats_table(), 1) == {(1, 2), (3, 3)}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_doubted_value_is_stated_with_its_mark_under_its_labels_and_the_rest_plainly(layout: str) -> None:
    grid = stats_table()
    ser = serialisations(grid, TableContext(CAPTION, [], [3]))
    chunks = chunk_table(grid, ser, 512, layout=layout)
    assert len(chunks) == 1, "a small table stays whole"
    text = chunks[0]["text"]
    assert CAPTION in text
    assert "unsure_values" in chunks[0]["flags"]
    assert f"15.9 21{UNSURE_MARK}" in text and f"8 see note{UNSURE_MARK}" in text, "marked, never hidden"

    def probe(row: str, col: str, value: str) -> Probe:
        return Probe("t", 0, 1, value, (row,), (col,))

    assert read(text, probe("Age", "Std. Dev.", "15.9")) == f"15.9 21{UNSURE_MARK}"
    assert read(text, probe("Age", "Mean", "50.8")) == "50.8", "a sure value in the same row is plain"
    assert read(text, probe("Income", "Std. Dev.", "1 389")) == "1 389"
    assert read(text, probe("Children", "Max", "8")) == f"8 see note{UNSURE_MARK}"


def test_a_table_with_nothing_doubted_carries_no_mark_and_no_flag() -> None:
    cells = [
        Cell(r, c, text=t, is_header=r == 0)
        for r, row in enumerate([["Country", "2007"], ["Austria", "109"], ["Germany", "1 234"]])
        for c, t in enumerate(row)
    ]
    grid = TableGrid(3, 2, cells, header_rows=1)
    ser = serialisations(grid, TableContext("Table 1. Samples", [], [1]))
    for layout in LAYOUTS:
        (chunk,) = chunk_table(grid, ser, 512, layout=layout)
        assert UNSURE_MARK not in chunk["text"] and "unsure_values" not in chunk["flags"]
        assert "Austria" in chunk["text"] and "109" in chunk["text"]


def test_the_retrieval_reader_scores_a_marked_value_unsure_not_wrong_nor_answered() -> None:
    grid = stats_table()
    ser = serialisations(grid, TableContext(CAPTION, [], [3]))
    (chunk,) = chunk_table(grid, ser, 512, layout="table")
    unit = Unit(chunk["text"], "doc", (3,), "table")

    def outcome(row: str, col: str, value: str) -> str:
        q = Question("labels", f"{row} {col}", "doc", 3, "t", Probe("t", 0, 1, value, (row,), (col,)))
        return str(score_question(q, [unit], [0])["outcome"])

    assert outcome("Age", "Std. Dev.", "15.9") == "unsure"
    assert outcome("Children", "Max", "8") == "unsure"
    assert outcome("Age", "Mean", "50.8") == "answer"
    assert outcome("Age", "Max", "91") == "wrong"


def test_a_percentage_read_without_its_sign_is_doubted_in_a_column_of_percentages() -> None:
    # eu-003 p1 t2 on a photocopy: the thin serif `%` read as digits (`18%` -> `1803`, `8%` -> `85`)
    rows = [
        ["Reclassifications", "Number", "Pct", "Count"],
        ["0", "24", "52%", "12"],
        ["1", "9", "1803", "4"],
        ["2", "5", "11%", "2"],
        ["3", "4", "85", "2"],
        ["Total", "46", "100%", "20"],
    ]
    cells = [Cell(r, c, text=t, is_header=r == 0) for r, row in enumerate(rows) for c, t in enumerate(row)]
    assert unsure_slots(TableGrid(6, 4, cells, header_rows=1), 1) == {(2, 2), (4, 2)}
    # a column with only two percentages, or a count column, is not one of percentages
    rows[3][2], rows[5][2] = "11", "100"
    cells = [Cell(r, c, text=t, is_header=r == 0) for r, row in enumerate(rows) for c, t in enumerate(row)]
    assert unsure_slots(TableGrid(6, 4, cells, header_rows=1), 1) == set()


def _column(values: list[str], confidence: dict[int, float] | None = None) -> TableGrid:
    """Item | Value, one row per value under a header row."""
    cells = [Cell(0, 0, text="Item", is_header=True), Cell(0, 1, text="Value", is_header=True)]
    for i, v in enumerate(values, start=1):
        cells += [Cell(i, 0, text=f"row {i}"), Cell(i, 1, text=v, confidence=(confidence or {}).get(i, 1.0))]
    return TableGrid(len(values) + 1, 2, cells, header_rows=1)


@pytest.mark.parametrize(
    ("values", "odd"),
    [
        (["82", "296", ".54", "53", "12"], {3}),  # a speck read as a point: 54 made 0.54
        (["+11", "+.11", "-4", "+7"], {2}),
        ([".82", ".45", ".33", ".54"], set()),  # correlations printed without the zero: the style
        (["154.", "12", "14", "16"], {1}),  # a speck read after the digits
        (["16100-", "1200", "830", "77"], {1}),
        (["19.4%", "13.3%.", "8.4%", "20.1%"], {2}),  # after the sign
        (["53.6 .", "3,973 =", "12.5", "14.1", "9.9", "10.0"], {1, 2}),  # marks standing alone
        (['"+10', "+4", "-2", "+7"], {1}),  # a quote
        (["111:8", "12.3", "14.5", "16.1"], {1}),  # a decimal point read as a colon
        (["J1", "45", "12", "30"], {1}),  # a letter touching a digit
        (["1a", "3b", "2a", "4"], set()),  # item codes: the column's style
        (["86.2", "13.8", "810", "0", "81.0", "98.6"], {3}),  # a lost point; the bare 0 is no sign
        (["67.9", "56.9", "48", "95.4", "60.1"], set()),  # a whole number of the column's size
        (["Asda 32.", "Aldi 90; Metro 33.", "Tesco 46", "Lidl 12"], set()),  # text, not numbers
        (["86", "13", "73", "0", "81", "98.6"], set()),  # a column of whole numbers
        (["1,136", "440", "3,375", "17,655"], set()),  # thousands are not decimals
        (["82", ".54", "53"], set()),  # too few to know the column's style
    ],
)
def test_a_number_out_of_step_with_its_column_is_doubted(values: list[str], odd: set[int]) -> None:
    assert unsure_slots(_column(values), 1) == {(r, 1) for r in odd}


def _columns(*columns: list[str]) -> TableGrid:
    """Item | A | B ..., the columns side by side under a header row; a short column's rows below it are empty."""
    rows = max(map(len, columns))
    cells = [Cell(0, 0, text="Item", is_header=True)]
    cells += [Cell(0, c, text=f"Col {c}", is_header=True) for c in range(1, len(columns) + 1)]
    for r in range(1, rows + 1):
        cells.append(Cell(r, 0, text=f"row {r}"))
        for c, values in enumerate(columns, start=1):
            cells.append(Cell(r, c, text=values[r - 1] if r <= len(values) else ""))
    return TableGrid(rows + 1, len(columns) + 1, cells, header_rows=1)


@pytest.mark.parametrize(
    ("columns", "odd"),
    [
        # too few numbers in a column to show its style: judged against the table's numbers
        ((["1,203", "880", "2,040", "5,011"], ["2,517.", "310"]), {(1, 2)}),
        ((["53.6 .", "56.3"], ["12.5", "14.1", "9.9"]), {(1, 1)}),
        ((["19.4%.", "13.3%."], ["8.4%", "20.1%", "12.0%"]), {(1, 1), (2, 1)}),
        # where the table prints the mark, the short column's number is in its style
        (([".82", ".45", ".33", ".54"], [".61", ".29"]), set()),
        # and a table of too few numbers still says nothing
        ((["2,517.", "310"], ["12"]), set()),
    ],
)
def test_a_short_columns_number_is_judged_against_the_table(columns: tuple[list[str], ...], odd: set) -> None:
    assert unsure_slots(_columns(*columns), 1) == odd
