"""What a question needs from a chunk, and how the retrieval eval's reader judges it.

- Stacked header cells over the same columns are one label in the serialisations
  (`headers.label_paths`); a spanning group stays a path level. On real dev pages (text
  layer, embedded engine) the chunks read the ground truth's labels.
- The reader compares text folded (case and whitespace aside) on both sides, for every
  representation; whole words still count.
- A read from another table on the question's page is `other`, not `wrong`.
- A header that swallowed the first body row marks the rows it shifted (`doubt.swallowed_row`).
- A caption detected as a table of its own captions the table under it (`caption_tables`).
"""

from __future__ import annotations

import pytest
from helpers import DEV_DATA

from worker.core.doubt import UNSURE_MARK, swallowed_row, unsure_slots
from worker.core.headers import label_paths
from worker.core.serialise import serialisations
from worker.core.types import Cell, TableGrid
from worker.evaluation.probes import Probe
from worker.evaluation.retrieval.corpus import Unit, same_table
from worker.evaluation.retrieval.questions import Question
from worker.evaluation.retrieval.reader import read, same_value
from worker.evaluation.retrieval.run import score_question
from worker.retrieval.caption_tables import with_caption_tables
from worker.retrieval.logical_tables import LogicalTable

PDFS = DEV_DATA / "icdar2013-eu" / "pdf"


def _probe(value: str, rows: tuple[str, ...], cols: tuple[str, ...]) -> Probe:
    return Probe("t", 1, 1, value, rows, cols)


def _grid(rows: list[list[str]], header_rows: int, spans: dict[tuple[int, int], tuple[int, int]]) -> TableGrid:
    """Cells from rows of texts; `spans`: (row, col) -> (rowspan, colspan); covered slots are ''."""
    covered = {
        (r + i, c + j) for (r, c), (rs, cs) in spans.items() for i in range(rs) for j in range(cs) if (i, j) != (0, 0)
    }
    cells = [
        Cell(r, c, *spans.get((r, c), (1, 1)), text=t, is_header=r < header_rows)
        for r, row in enumerate(rows)
        for c, t in enumerate(row)
        if (r, c) not in covered
    ]
    return TableGrid(len(rows), len(rows[0]), cells, header_rows=header_rows)


def test_stacked_cells_of_one_column_are_one_label_and_a_spanning_group_a_level() -> None:
    grid = _grid(
        [
            ["", "THRESHOLD FOR RELEASES", "", "Source"],
            ["", "to air", "to water", "Our estimates"],
            ["", "kg/year", "kg/year", "1996"],
            ["Methane (CH4)", "100 000", "-", "59"],
        ],
        3,
        {(0, 1): (1, 2)},
    )
    assert label_paths(grid, 3)[1:] == [
        ["THRESHOLD FOR RELEASES", "to air kg/year"],
        ["THRESHOLD FOR RELEASES", "to water kg/year"],
        ["Source Our estimates 1996"],
    ]
    ser = serialisations(grid)
    assert ser["row_lines"] == [
        "Methane (CH4); THRESHOLD FOR RELEASES / to air kg/year: 100 000; "
        "THRESHOLD FOR RELEASES / to water kg/year: -; Source Our estimates 1996: 59"
    ]
    assert ser["column_paths"][1] == ["THRESHOLD FOR RELEASES", "to air", "kg/year"]  # structure kept
    line = ser["row_lines"][0]
    assert read(line, _probe("100 000", ("Methane (CH4)",), ("THRESHOLD FOR RELEASES", "to air kg/year"))) == "100 000"
    assert read(line, _probe("59", ("Methane (CH4)",), ("Our estimates 1996",))) == "59"


def test_the_reader_folds_case_and_spaces_on_both_sides_but_keeps_whole_words() -> None:
    text = "Country: Czech Republic; Domestic (%): 81.0; % Pos: 1.1; PBUK: 7\nCountry: UK; PBUK: 9"
    assert read(text, _probe("81.0", ("CzechRepublic",), ("domestic(%)",))) == "81.0"
    assert read(text, _probe("1.1", ("czech republic",), ("%Pos",))) == "1.1"
    assert read(text, _probe("81.0", ("CzechRepublic",), ("domestic(%)",)), fold=False) is None
    assert read(text, _probe("9", ("UK",), ("PBUK",))) == "9"  # not from `PBUK` in the Czech row
    assert read(text, _probe("7", ("Czech",), ("UK",))) is None  # `UK` is no word of `PBUK`
    assert same_value("100 000", "100000") and same_value("N.A.", "n.a.") and not same_value("10.8", "-10.8")


def test_a_read_from_the_neighbour_table_on_the_page_is_other_not_wrong() -> None:
    probe = Probe("gt/a", 1, 1, "123", ("Germany",), ("2007", "N"))
    q = Question("labels", "Germany 2007 N", "eu-018", 1, "gt/a", probe)
    own = Unit("| Country | 2007 / N |\n|---|---|\n| Germany | 123 |", "eu-018", (1,), "table", ((1, (0, 0, 100, 50)),))
    other = Unit(
        "| Country | 2007 / N |\n|---|---|\n| Germany | 35 |", "eu-018", (1,), "table", ((1, (0, 60, 100, 110)),)
    )
    assert same_table((0, 0, 100, 50), (5, 2, 95, 48)) and not same_table((0, 60, 100, 110), (5, 2, 95, 48))
    box = (5.0, 2.0, 95.0, 48.0)
    assert score_question(q, [other, own], [0, 1], box=box)["outcome"] == "other"
    assert score_question(q, [own, other], [0, 1], box=box)["outcome"] == "answer"
    assert score_question(q, [other], [0], box=None)["outcome"] == "wrong"  # by page alone, as before


def test_a_header_that_swallowed_the_first_row_marks_the_rows_it_shifted() -> None:
    """Each illness label spans its Count and Percentage rows; the first row's counts (93, 77)
    were read into the header cells, so every label below starts one line late."""
    rows = [
        ["Treatment/Therapy", "", "Suffered from 93", "Followed treatment 77"],
        ["Allergy problems", "Count", "", ""],
        ["Anxiety disorder", "Percentage", "18.8%", "15.6%"],
        ["", "Count", "81", "29"],
        ["Asthma", "Percentage", "16.4%", "5.9%"],
        ["", "Count", "31", "22"],
        ["Diabetes", "Count", "1", "1"],
    ]
    grid = _grid(rows, 2, {(0, 0): (1, 2), (0, 2): (2, 1), (0, 3): (2, 1), (2, 0): (2, 1), (4, 0): (2, 1)})
    assert swallowed_row(grid, 2)
    unsure = unsure_slots(grid, 2)
    assert {(2, 2), (2, 3), (4, 2), (4, 3)} <= unsure  # the first rows of the spanning labels
    assert not unsure & {(3, 2), (3, 3), (5, 2), (5, 3), (6, 2), (6, 3)}  # their own rows, and a one-row label
    ser = serialisations(grid)
    assert f"18.8%{UNSURE_MARK}" in ser["markdown"] and "| 81 |" in ser["markdown"]
    # a year ending a label, or a header row with no label of its own in the first column, is no sign
    years = [["Region", "Sales 2007", "Sales 2008"], ["", "Units", "Units"], ["North", "4", "5"]]
    assert not swallowed_row(_grid(years, 2, {(0, 1): (2, 1), (0, 2): (2, 1)}), 2)
    groups = [["", "Group 1", "Group 2"], ["", "", ""], ["North", "4", "5"]]
    assert not swallowed_row(_grid(groups, 2, {(0, 1): (2, 1), (0, 2): (2, 1)}), 2)


def _logical(tid: str, page: int, grid: TableGrid, caption: str = "") -> LogicalTable:
    from worker.core.serialise import TableContext

    ser = serialisations(grid, TableContext(caption, [], [page]), tid)
    return LogicalTable(tid, [tid], [page], grid, ser, {r: page for r in range(grid.n_rows)})


def test_a_caption_boxed_as_a_table_captions_the_table_under_it() -> None:
    title = _grid([["Table BR3. Reported confirmed brucellosis cases in humans by country, 2007"]], 0, {})
    body = _grid([["Country", "Domestic (%)"], ["Austria", "0"], ["Spain", "100"]], 1, {})
    got = list(with_caption_tables([_logical("p3-t1", 3, title), _logical("p3-t2", 3, body, "(%)")]))
    assert [t.table_id for t in got] == ["p3-t2"]
    assert got[0].serialisations["caption"].startswith("Table BR3. Reported confirmed brucellosis") and got[
        0
    ].serialisations["caption"].endswith("2007 (%)")
    # on another page, or over a table with a caption of its own, it stays what it was
    other_page = list(with_caption_tables([_logical("p3-t1", 3, title), _logical("p4-t1", 4, body)]))
    assert [t.table_id for t in other_page] == ["p3-t1", "p4-t1"]
    captioned = _logical("p3-t2", 3, body, "Table 2: Origin of the cases by country")
    assert len(list(with_caption_tables([_logical("p3-t1", 3, title), captioned]))) == 2
    # a one-row table of values is no caption
    values = _grid([["Total", "46.3", "11.6"]], 0, {})
    assert len(list(with_caption_tables([_logical("p3-t1", 3, values), _logical("p3-t2", 3, body)]))) == 2


@pytest.fixture(scope="module")
def dev_chunks() -> dict[str, str]:
    """Every chunk text of three real dev pages, read from their text layer (about 15 s)."""
    if not PDFS.is_dir():
        pytest.skip("no dev data (TABLESIGHT_DEV_DATA)")
    import tablesight

    out = {}
    for name, page in (("eu-005", "2"), ("eu-001", "1"), ("eu-019", "3")):
        doc = tablesight.extract(PDFS / f"{name}.pdf", engine="embedded", pages=page)
        out[name] = "\n\n".join(c["text"] for t in doc.tables for c in t.chunks())
    return out


def test_real_chunks_read_the_ground_truths_labels(dev_chunks: dict[str, str]) -> None:
    """The labels as the ground truth states them (one header cell written on two lines) read
    the right values from our chunks of the real pages."""
    eu005 = dev_chunks["eu-005"]
    assert read(eu005, _probe("58.6", ("Austria",), ("Our estimates 1996",))) == "58.6"
    assert read(eu005, _probe("79", ("Austria",), ("LDA 1997",))) == "79"
    assert read(eu005, _probe("61.7", ("Average",), ("Average of other estimates",))) == "61.7"
    eu001 = dev_chunks["eu-001"]
    co2 = ("Carbon dioxide (CO2)",)
    assert read(eu001, _probe("100 million", co2, ("THRESHOLD FOR RELEASES", "to air kg/year"))) == "100 million"
    assert (
        read(eu001, _probe("100", ("Hydro-fluorocarbons (HFCs)",), ("THRESHOLD FOR RELEASES", "to air kg/year")))
        == "100"
    )


def test_real_caption_boxed_apart_heads_the_chunks_of_its_table(dev_chunks: dict[str, str]) -> None:
    chunks = dev_chunks["eu-019"].split("\n\nTable: ")
    assert len(chunks) == 1  # the caption is no table of its own
    assert chunks[0].startswith("Table: Table BR3.") and "brucellosis" in chunks[0].split("\n")[0]
    assert read(chunks[0], _probe("76.2", ("Germany",), ("Imported (%)",))) == "76.2"
