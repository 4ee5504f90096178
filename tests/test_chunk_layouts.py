"""Chunk layouts (`table` rows, `lean` preamble): the chunker's guarantees hold in each, and the
strict reader of `eval retrieval` reads every value back bound to its labels."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_chunks import body_range, grid_of_kinds, long_table

from worker.core.chunks import LAYOUTS, PREAMBLES, approx_tokens, chunk_preamble, chunk_table
from worker.core.serialise import TableContext, serialisations
from worker.core.types import TableGrid
from worker.evaluation.probes import Probe
from worker.evaluation.retrieval.reader import read

CAPTION = "Table 4. Household characteristics by region and year of survey: 2003 and 2004"


def probe(value: str, rows: tuple[str, ...], cols: tuple[str, ...]) -> Probe:
    return Probe("t", 0, 1, value, rows, cols)


def check(grid: TableGrid, ser: dict, chunks: list[dict], budget: int, preamble: str) -> None:
    covered = [r for c in chunks for r in range(c["row_range"][0], c["row_range"][1] + 1)]
    assert covered == body_range(ser), "row ranges cover every body row exactly once, in order"
    head = chunk_preamble(ser, preamble)
    for c in chunks:
        assert c["text"].startswith(head + "\n\n"), "every chunk carries its preamble"
        assert c["tokens"] == approx_tokens(c["text"])
        if not c["flags"]:
            assert c["tokens"] <= budget


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("preamble", PREAMBLES)
def test_every_value_reads_back_under_its_labels_in_every_chunk_layout(layout: str, preamble: str) -> None:
    grid = long_table()
    ser = serialisations(grid, TableContext(CAPTION, ["All figures in £m."], [3]))
    budget = approx_tokens(chunk_preamble(ser, preamble)) + 120
    chunks = chunk_table(grid, ser, budget, layout=layout, preamble=preamble)
    assert len(chunks) > 3
    check(grid, ser, chunks, budget, preamble)
    for c in chunks:
        assert CAPTION in c["text"], "the caption, whole, in every chunk"
    # every value, in the one chunk holding its row, read by its section, row and column labels
    for s in range(6):
        for k in range(7):
            site = f"Site {s}-{k if k != 1 else 0}"
            labels = (f"Section {s}", site)
            col = ("2024", "Revenue (£m)")
            if k == 1:  # the second row of the two-row label: same labels as the first, ambiguous
                continue
            got = [read(c["text"], probe(f"{100 * s + k},5", labels, col)) for c in chunks]
            assert [g for g in got if g is not None] == [f"{100 * s + k},5"], (labels, got)


def test_lean_preamble_says_caption_pages_and_notes_not_the_column_list() -> None:
    grid = long_table(n_sections=1, rows_per_section=3)
    ser = serialisations(grid, TableContext(CAPTION, ["All figures in £m."], [3]))
    lean = chunk_preamble(ser, "lean")
    assert lean == f"Table: {CAPTION}\nPage: 3\nNotes: All figures in £m."
    assert "Columns: " in chunk_preamble(ser, "full")
    [whole] = chunk_table(grid, ser, 10_000, layout="table", preamble="lean")
    assert "| Region | 2024 / Revenue (£m) | 2024 / Cost (£m) |" in whole["text"]
    with pytest.raises(ValueError):
        chunk_preamble(ser, "short")
    with pytest.raises(ValueError):
        chunk_table(grid, ser, 100, layout="columns")


def test_a_table_chunk_opening_inside_a_section_repeats_the_section_row() -> None:
    grid = long_table(n_sections=1, rows_per_section=7)
    ser = serialisations(grid, TableContext("Sites", [], [1]))
    chunks = chunk_table(grid, ser, approx_tokens(chunk_preamble(ser, "lean")) + 60, layout="table", preamble="lean")
    assert len(chunks) > 1
    for c in chunks:
        assert "| Section 0 |" in c["text"]


@settings(max_examples=60, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(["data", "data", "data", "group", "tied", "empty"]), min_size=1, max_size=30),
    budget=st.integers(min_value=1, max_value=200),
    layout=st.sampled_from(LAYOUTS),
    preamble=st.sampled_from(PREAMBLES),
)
def test_ranges_cover_the_body_exactly_once_in_every_layout(kinds: list[str], budget: int, layout: str, preamble: str):
    grid = grid_of_kinds(kinds)
    ser = serialisations(grid)
    chunks = chunk_table(grid, ser, budget, layout=layout, preamble=preamble)
    check(grid, ser, chunks, budget, preamble)
    for i, kind in enumerate(kinds):  # every data value sits in exactly one chunk, read under its row
        if kind == "data":
            got = [read(c["text"], probe(f"{i} units", (f"Row {i}",), ("Value",))) for c in chunks]
            assert [g for g in got if g is not None] == [f"{i} units"]
