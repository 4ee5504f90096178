"""The chunker: whole tables up to the budget, above it rows only, the header in every chunk."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.core.chunks import approx_tokens, chunk_table, grid_slice
from worker.core.html_parse import html_to_grid
from worker.core.serialise import TableContext, serialisations
from worker.core.types import Cell, TableGrid


def long_table(n_sections: int = 6, rows_per_section: int = 7) -> TableGrid:
    """Two-level header; sections under full-width group rows; a label spanning two rows in each."""
    cells = [
        Cell(0, 0, 2, 1, "Region", is_header=True),
        Cell(0, 1, 1, 2, "2024", is_header=True),
        Cell(1, 1, text="Revenue (£m)", is_header=True),
        Cell(1, 2, text="Cost (£m)", is_header=True),
    ]
    r = 2
    for s in range(n_sections):
        cells.append(Cell(r, 0, 1, 3, f"Section {s}", is_projected_row_header=True))
        r += 1
        cells.append(Cell(r, 0, 2, 1, f"Site {s}-0"))  # two rows tied together by this label
        for k in range(rows_per_section):
            if k > 0 and not (k == 1):
                cells.append(Cell(r, 0, text=f"Site {s}-{k}"))
            cells += [Cell(r, 1, text=f"{100 * s + k},5"), Cell(r, 2, text=f"{10 * s + k}")]
            r += 1
    return TableGrid(r, 3, cells, header_rows=2)


def body_range(ser: dict) -> list[int]:
    return [row["row"] for row in ser["rows"]]


def check_chunks(grid: TableGrid, ser: dict, chunks: list[dict], max_tokens: int) -> None:
    covered = [r for c in chunks for r in range(c["row_range"][0], c["row_range"][1] + 1)]
    assert covered == body_range(ser), "row ranges cover every body row exactly once, in order"
    for c in chunks:
        assert c["text"].startswith(ser["description"] + "\n\n"), "every chunk carries the header"
        assert c["tokens"] == approx_tokens(c["text"])
        if not c["flags"]:
            assert c["tokens"] <= max_tokens
    for line in ser["row_lines"]:  # no row is split: each line sits whole in exactly one chunk
        assert sum(line in c["text"].split("\n") for c in chunks) == 1


def test_long_table_split_by_rows_with_header_blocks_and_sections_kept():
    grid = long_table()
    ser = serialisations(grid, TableContext("Sites by region", ["All figures in £m."], [3]))
    whole = chunk_table(grid, ser, 100_000, table_id="p0003-t01")
    assert len(whole) == 1 and whole[0]["row_range"] == [2, grid.n_rows - 1] and whole[0]["pages"] == [3]
    budget = approx_tokens(ser["description"]) + 300  # one section fits, two do not
    chunks = chunk_table(grid, ser, budget, table_id="p0003-t01")
    assert len(chunks) > 2 and all(c["n_chunks"] == len(chunks) for c in chunks)
    check_chunks(grid, ser, chunks, budget)
    assert all(not c["flags"] for c in chunks)
    where = {r: i for i, c in enumerate(chunks) for r in range(c["row_range"][0], c["row_range"][1] + 1)}
    blocks: dict[int, set[int]] = {}
    sections: dict[int, set[int]] = {}
    for row in ser["rows"]:
        blocks.setdefault(row["block"], set()).add(where[row["row"]])
        sections.setdefault(row["section"], set()).add(where[row["row"]])
    assert all(len(v) == 1 for v in blocks.values()), "rows tied by a span stay in one chunk"
    assert all(len(v) == 1 for v in sections.values()), "a section that fits a chunk is not cut"
    for c in chunks:  # the HTML to show: header + the chunk's rows, a valid table of its own
        shown = html_to_grid(c["html"])
        assert shown.repairs == [] and shown.header_rows == 2
        assert shown.n_rows == 2 + c["n_rows"]
        assert "Columns: Region | 2024 / Revenue (£m) | 2024 / Cost (£m)" in c["text"]
        assert "Notes: All figures in £m." in c["text"]


def test_sections_larger_than_a_chunk_split_at_blocks_with_the_label_opening_a_chunk():
    grid = long_table()
    ser = serialisations(grid)
    budget = approx_tokens(ser["description"]) + 160  # a section needs two chunks
    chunks = chunk_table(grid, ser, budget)
    check_chunks(grid, ser, chunks, budget)
    starts = {c["row_range"][0] for c in chunks}
    ends = {c["row_range"][1] for c in chunks}
    groups = {r["row"] for r in ser["rows"] if r["kind"] == "group"}
    assert groups <= starts and not groups & ends
    for c in chunks:  # the group label is in every row line, so split sections keep it
        assert all(" / Site " in line for line in c["text"].split("\n\n")[1].splitlines())


def test_oversize_rows_and_blocks_are_flagged_never_cut():
    grid = long_table(n_sections=1, rows_per_section=4)
    ser = serialisations(grid)
    head = approx_tokens(ser["description"])
    chunks = chunk_table(grid, ser, head + 12)  # room for less than one row
    check_chunks(grid, ser, chunks, head + 12)
    assert any("row_over_budget" in c["flags"] for c in chunks)
    assert any("split_row_block" in c["flags"] for c in chunks)
    tiny = chunk_table(grid, ser, 5)
    assert all("header_over_budget" in c["flags"] for c in tiny)
    check_chunks(grid, ser, tiny, 5)
    with pytest.raises(ValueError):
        chunk_table(grid, ser, 0)


def test_table_without_body_rows_is_one_chunk():
    grid = TableGrid(1, 2, [Cell(0, 0, text="A", is_header=True), Cell(0, 1, text="B", is_header=True)], header_rows=1)
    chunks = chunk_table(grid, serialisations(grid), 50)
    assert len(chunks) == 1 and chunks[0]["row_range"] == [-1, -1] and chunks[0]["n_rows"] == 0


def test_grid_slice_clips_spans_crossing_the_cut():
    grid = long_table(n_sections=1, rows_per_section=3)
    part = grid_slice(grid, 2, 4, 5)  # starts inside the two-row label of rows 3-4
    part.owner_map()
    assert part.n_rows == 4 and part.header_rows == 2
    label = next(c for c in part.cells if c.text == "Site 0-0")
    assert (label.row, label.rowspan) == (2, 1)


def test_approx_tokens():
    assert approx_tokens("") == 0
    assert approx_tokens("Revenue: 1,200") == 2 + 1 + 1 + 1 + 1  # Revenue(7 letters)=2, :, 1, ",", 200
    assert approx_tokens("a b c") == 3
    assert approx_tokens("12345678") == 3


@settings(max_examples=60, deadline=None)
def grid_of_kinds(kinds: list[str]) -> TableGrid:
    """A two-column table with one header row and a body of the given row kinds: data rows,
    group rows spanning both columns, pairs of rows tied by a row-spanning label, empty rows."""
    cells = [Cell(0, 0, text="Name", is_header=True), Cell(0, 1, text="Value", is_header=True)]
    r = 1
    for i, kind in enumerate(kinds):
        if kind == "group":
            cells.append(Cell(r, 0, 1, 2, f"Group {i}"))
            r += 1
        elif kind == "tied":
            cells += [Cell(r, 0, 2, 1, f"Pair {i}"), Cell(r, 1, text=str(i)), Cell(r + 1, 1, text=str(i + 1))]
            r += 2
        elif kind == "empty":
            cells += [Cell(r, 0), Cell(r, 1)]
            r += 1
        else:
            cells += [Cell(r, 0, text=f"Row {i}"), Cell(r, 1, text=f"{i} units")]
            r += 1
    grid = TableGrid(r, 2, cells, header_rows=1)
    grid.owner_map()
    return grid


@given(
    kinds=st.lists(st.sampled_from(["data", "data", "data", "group", "tied", "empty"]), min_size=1, max_size=30),
    budget=st.integers(min_value=1, max_value=200),
)
def test_ranges_cover_the_body_exactly_once(kinds: list[str], budget: int):
    grid = grid_of_kinds(kinds)
    ser = serialisations(grid)
    check_chunks(grid, ser, chunk_table(grid, ser, budget), budget)


def test_document_chunks_from_a_store_including_records_written_before_rows_were_stored(tmp_path):
    from worker.retrieval.chunks import document_chunks
    from worker.storage import LocalStorage

    store = LocalStorage(tmp_path)
    grid = long_table(n_sections=2, rows_per_section=3)
    old = {"column_labels": [], "markdown": "", "markdown_lossy": False, "row_lines": []}  # version 1
    new = serialisations(grid, TableContext("Sites", [], [2]), table_id="p0002-t01")
    for tid, page, ser in (("p0001-t01", 1, old), ("p0002-t01", 2, new)):
        store.put_json(
            f"doc/tables/{tid}.json",
            {
                "table_id": tid,
                "page": page,
                "grid": grid.to_dict(),
                "serialisations": ser,
                "context": {"caption": "Sites"},
            },
        )
    store.put_json(
        "doc/manifest.json",
        {"doc_id": "doc", "tables": [{"table_id": "p0001-t01", "page": 1}, {"table_id": "p0002-t01", "page": 2}]},
    )
    chunks = document_chunks(store, "doc", 10_000, approx_tokens)
    assert [(c["table_id"], c["pages"]) for c in chunks] == [("p0001-t01", [1]), ("p0002-t01", [2])]
    assert chunks[0]["text"] == chunks[1]["text"].replace("Page: 2", "Page: 1")  # old record re-serialised
    assert chunks[0]["text"].startswith("Table: Sites\nPage: 1\n")
