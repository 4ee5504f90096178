"""Captions and notes read into a table's grid go back to its context; `|` debris trimmed on rules."""

from __future__ import annotations

from dataclasses import replace

from helpers import grid_texts as texts

from worker.core.box_text import lift_box_text, with_box_text
from worker.core.captions import Context
from worker.core.types import Cell, RulingLines, TableGrid, Word

COLS = [(0.0, 300.0), (300.0, 400.0), (400.0, 500.0), (500.0, 600.0)]
ROW_H = 30.0
CHAR_W = 8.0


def run_words(text: str, x: float, y: float) -> list[Word]:
    """Words of one text run starting at x on the line at y (12 px tall, one space apart)."""
    out = []
    for token in text.split():
        width = CHAR_W * len(token)
        out.append(Word(token, (x, y, x + width, y + 12.0)))
        x += width + 6.0
    return out


def make_grid(rows: list[list[str]], spans: dict[int, str] | None = None) -> tuple[TableGrid, list[Word]]:
    """A grid of len(rows) rows over COLS; row r of `spans` is one cell over all columns holding
    that text. Cell text is the words in it, as the engines read them."""
    spans = spans or {}
    cells: list[Cell] = []
    words: list[Word] = []
    for r in range(len(rows)):
        y0 = r * ROW_H
        if r in spans:
            ws = run_words(spans[r], 4.0, y0 + 8.0)
            words += ws
            cells.append(Cell(r, 0, 1, len(COLS), " ".join(w.text for w in ws), (0.0, y0, 600.0, y0 + ROW_H)))
            continue
        for c, (x0, x1) in enumerate(COLS):
            text = rows[r][c]
            ws = run_words(text, x0 + 4.0, y0 + 8.0) if text else []
            words += ws
            cells.append(Cell(r, c, 1, 1, " ".join(w.text for w in ws), (x0, y0, x1, y0 + ROW_H)))
    return TableGrid(len(rows), len(COLS), cells, header_rows=1), words


BODY = [
    ["Region", "2019", "2020", "2021"],
    ["North", "1,204", "1,310", "1,422"],
    ["South", "980", "1,015", "1,101"],
]


def test_caption_row_crossing_gutters_moves_to_the_caption():
    grid, words = make_grid([[""] * 4, *BODY], spans={0: "Table 4: Sales by region, EUR thousand"})
    moved = lift_box_text(grid, words)
    assert texts(grid) == BODY
    assert moved.caption == ["Table 4: Sales by region, EUR thousand"]
    assert grid.header_rows == 0  # the dropped row was the one counted as header
    assert any("moved to the caption" in r for r in grid.repairs)
    ctx = with_box_text(Context(notes=["Source: ONS"]), moved)
    assert ctx is not None and ctx.caption == "Table 4: Sales by region, EUR thousand"
    assert ctx.notes == ["Source: ONS"]


def test_note_line_merged_into_the_last_row_is_cut_out_of_its_cells():
    grid, words = make_grid(BODY)
    # The note's line sits under the last row's own line, inside its cells, across every gutter.
    note = run_words("Source: national statistics office, provisional figures for 2021", 4.0, 2 * ROW_H + 24.0)
    for w in note:  # the engine put each note word into the cell under it
        cell = next(
            c for c in grid.cells if c.row == 2 and c.bbox and c.bbox[0] <= (w.bbox[0] + w.bbox[2]) / 2 < c.bbox[2]
        )
        cell.text = f"{cell.text} {w.text}"
    words += note
    moved = lift_box_text(grid, words)
    assert texts(grid) == BODY
    assert moved.notes == ["Source: national statistics office, provisional figures for 2021"]
    assert grid.n_rows == 3
    ctx = with_box_text(None, moved)
    assert ctx is not None and ctx.notes == moved.notes and ctx.caption == ""
    # Already captured from the strip below the box: not repeated.
    again = with_box_text(Context(notes=["Source: national statistics office, provisional figures for 2021."]), moved)
    assert again is not None and len(again.notes) == 1


def test_a_short_spanning_title_row_is_a_header_and_stays():
    grid, words = make_grid([[""] * 4, *BODY], spans={0: "Sales by region"})
    moved = lift_box_text(grid, words)
    assert grid.n_rows == 4 and texts(grid)[0][0] == "Sales by region"
    assert moved.caption == [] and moved.repairs == []


def test_a_section_row_with_a_long_label_and_empty_values_stays():
    rows = [*BODY[:2], ["Other regions of the country, excluding the capital", "", "", ""], BODY[2]]
    grid, words = make_grid(rows)
    moved = lift_box_text(grid, words)
    assert texts(grid) == rows
    assert moved.notes == [] and moved.caption == []


def test_a_long_last_row_label_with_values_is_not_a_note():
    rows = [*BODY, ["Total of all the regions named in the table above", "2,184", "2,325", "2,523"]]
    grid, words = make_grid(rows)
    lift_box_text(grid, words)
    assert texts(grid) == rows


def test_bar_glyph_is_trimmed_only_over_a_ruling_line():
    rows = [*BODY[:2], ["South", "980 |", "1,015", "|1,101"]]
    grid, words = make_grid(rows)
    bar = next(w for w in words if w.text == "|")
    glued = next(w for w in words if w.text == "|1,101")
    rule_x = (bar.bbox[0] + bar.bbox[2]) / 2
    moved = lift_box_text(grid, words, RulingLines(v=(rule_x, glued.bbox[0] + 2.0)))
    assert texts(grid)[2] == BODY[2]
    assert {(t["row"], t["col"], t["from"], t["to"]) for t in moved.trimmed} == {
        (2, 1, "980 |", "980"),
        (2, 3, "|1,101", "1,101"),
    }
    # The same text without a rule under the glyph stays as read.
    grid, words = make_grid(rows)
    moved = lift_box_text(grid, words, RulingLines(v=(350.0,)))
    assert texts(grid) == rows and moved.trimmed == []
    grid, words = make_grid(rows)
    assert lift_box_text(grid, words).trimmed == []


def test_caption_line_merged_into_the_header_row_is_cut_out_of_its_cells():
    grid, words = make_grid(BODY)
    # The caption's line sits above the header's own line, inside the header row's cells.
    words = [Word(w.text, (w.bbox[0], w.bbox[1] + 10.0, w.bbox[2], w.bbox[3] + 10.0)) for w in words]
    caption = run_words("Table 2. Sales of the company by region, in thousands of euro", 4.0, 1.0)
    for cell in grid.cells:
        if cell.row == 0 and cell.bbox is not None:
            x0, x1 = cell.bbox[0], cell.bbox[2]
            mine = [w.text for w in caption if x0 <= (w.bbox[0] + w.bbox[2]) / 2 < x1]
            cell.text = " ".join([*mine, BODY[0][cell.col]])
    assert texts(grid)[0][1].startswith("in ")  # the caption's words did reach the header cells
    moved = lift_box_text(grid, [*caption, *words])
    assert moved.caption == ["Table 2. Sales of the company by region, in thousands of euro"]
    assert texts(grid) == BODY and grid.n_rows == 3


def test_a_long_title_sentence_is_a_caption_but_a_spanning_question_is_a_header():
    title = "Yield differences for the selected countries of the euro area in 2010"
    grid, words = make_grid([[""] * 4, *BODY], spans={0: title})
    assert lift_box_text(grid, words).caption == [title] and texts(grid) == BODY
    grid, words = make_grid([[""] * 4, *BODY], spans={0: "How often have you taken medicine or tablets?"})
    assert lift_box_text(grid, words).caption == [] and grid.n_rows == 4


def test_a_title_sentence_dealt_over_the_header_cells_is_cut_out_and_the_labels_keep_their_order():
    """No "Table N" before it, and the model dealt its words out over the header row's cells
    (office scan): ten words or more in one run over the cells is a title, not labels. On the
    skewed crop each line's words sit a pixel or two higher left to right; what is left of a
    cell keeps its words' order."""
    grid, words = make_grid(BODY)
    words = [Word(w.text, (w.bbox[0], w.bbox[1] + 10.0, w.bbox[2], w.bbox[3] + 10.0)) for w in words]
    words = [w for w in words if w.text != "Region"]
    label = [
        Word(t, (4.0 + 60 * i, 22.0 - 1.4 * i, 50.0 + 60 * i, 34.0 - 1.4 * i))
        for i, t in enumerate("Our own region".split())
    ]
    title = [
        Word(w.text, (w.bbox[0], w.bbox[1] - w.bbox[0] / 60, w.bbox[2], w.bbox[3] - w.bbox[0] / 60))
        for w in run_words("Correlation of the spread and yield gaps for selected countries", 4.0, 10.0)
    ]
    for cell in grid.cells:
        if cell.row == 0 and cell.bbox is not None:
            x0, x1 = cell.bbox[0], cell.bbox[2]
            mine = [w.text for w in title if x0 <= (w.bbox[0] + w.bbox[2]) / 2 < x1]
            cell.text = " ".join([*mine, "Our own region" if cell.col == 0 else BODY[0][cell.col]])
    moved = lift_box_text(grid, [*title, *words, *label])
    assert moved.caption == ["Correlation of the spread and yield gaps for selected countries"]
    assert texts(grid) == [["Our own region", *BODY[0][1:]], *BODY[1:]]


def test_the_end_of_a_caption_cut_by_the_crop_and_ruled_off_from_the_table_moves_to_the_caption():
    """The detector's box reached into the caption: the crop's top edge cut "Table 3 - ..." to
    "le 3 - ...", so no caption start is left to know it by, and the model read it as a title
    row over all the columns. The edge cuts its words and a rule lies under it: not the table's."""
    grid, words = make_grid([[""] * 4, *BODY], spans={0: "le 3 - European asset-backed paper issuance"})
    words = [Word(w.text, (w.bbox[0], 0.0, w.bbox[2], w.bbox[3])) if w.bbox[1] < ROW_H else w for w in words]
    moved = lift_box_text(grid, words, RulingLines(h=(ROW_H - 2.0, 2 * ROW_H), v=()))
    assert moved.caption == ["le 3 - European asset-backed paper issuance"] and texts(grid) == BODY
    # a title row inside the table's frame (no rule between it and the header) stays
    grid, words = make_grid([[""] * 4, *BODY], spans={0: "le 3 - European asset-backed paper issuance"})
    words = [Word(w.text, (w.bbox[0], 0.0, w.bbox[2], w.bbox[3])) if w.bbox[1] < ROW_H else w for w in words]
    assert lift_box_text(grid, words, RulingLines(h=(2 * ROW_H,), v=())).caption == [] and grid.n_rows == 4
    # nor does a header line the crop's edge did not cut
    grid, words = make_grid([[""] * 4, *BODY], spans={0: "le 3 - European asset-backed paper issuance"})
    assert lift_box_text(grid, words, RulingLines(h=(ROW_H - 2.0,), v=())).caption == [] and grid.n_rows == 4
    # a group label over the value columns, ruled off from the labels under it and cut by the
    # crop's edge, is the table's own: it does not reach over the stub
    grid, words = make_grid([["", "", "", ""], *BODY])
    label = [
        Word(w.text, (w.bbox[0], 0.0, w.bbox[2], w.bbox[3]))
        for w in run_words("THRESHOLD FOR ALL RELEASES", 304.0, 8.0)
    ]
    for cell in grid.cells:
        if cell.row == 0 and cell.bbox is not None:
            cell.text = " ".join(w.text for w in label if cell.bbox[0] <= (w.bbox[0] + w.bbox[2]) / 2 < cell.bbox[2])
    assert lift_box_text(grid, [*label, *words], RulingLines(h=(ROW_H - 2.0,), v=())).caption == [] and grid.n_rows == 4


def _note_row(text: str, gap_after: int | None = None, mark: str | None = None) -> tuple[TableGrid, list[Word]]:
    """BODY with a last row over every column holding `text` (its words `gap_after` stretched by a
    justified line's wide space) and `mark`, a footnote mark on a line of its own over it."""
    grid, words = make_grid([*BODY, [""] * 4], spans={3: ""})
    note = run_words(text, 4.0, 3 * ROW_H + 14.0)
    if gap_after is not None:
        shifted = [replace(w, bbox=(w.bbox[0] + 40, w.bbox[1], w.bbox[2] + 40, w.bbox[3])) for w in note[gap_after:]]
        note[gap_after:] = shifted
    if mark is not None:
        note.insert(0, Word(mark, (4.0, 3 * ROW_H + 1.0, 9.0, 3 * ROW_H + 9.0)))
    cell = next(c for c in grid.cells if c.row == 3)
    cell.text = " ".join(w.text for w in note)
    return grid, words + note


def test_a_note_whose_start_ocr_gave_an_accent_moves_to_the_notes():
    grid, words = _note_row("Sourcé: SAVE 2009, data is weighted.")
    moved = lift_box_text(grid, words)
    assert texts(grid) == BODY
    assert moved.notes == ["Sourcé: SAVE 2009, data is weighted."]


def test_a_justified_note_line_with_a_wide_space_moves_to_the_notes_under_its_footnote_mark():
    text = "Source: Bloomberg; data from the start to the end of quarters"
    grid, words = _note_row(text, gap_after=8, mark="1")
    moved = lift_box_text(grid, words)
    assert texts(grid) == BODY
    assert moved.notes == [f"1 {text}"]


def test_a_note_after_its_label_and_a_tab_read_as_one_cell_moves_to_the_notes():
    # eu-013 p8 t4 on a photocopy: "Source:" then a tab, the model's one cell over the columns
    text = "Source: Finnish National Board of Education, 2006."
    grid, words = _note_row(text, gap_after=1)
    moved = lift_box_text(grid, words)
    assert texts(grid) == BODY
    assert moved.notes == [text]


def test_a_last_row_labelled_notes_with_its_text_in_the_value_columns_stays():
    # the gap right after the label is the row's column gap, not a justified space
    grid, words = _note_row("Notes Headcount at the end of each quarter and year", gap_after=1)
    assert lift_box_text(grid, words).notes == []
    assert grid.n_rows == 4


def test_a_last_row_with_a_wide_gap_that_is_no_note_stays():
    text = "Remaining regions with the islands and the overseas areas"
    grid, words = _note_row(text, gap_after=6, mark="1")
    assert lift_box_text(grid, words).notes == []
    assert grid.n_rows == 4


def test_a_blank_last_row_over_every_column_is_dropped_and_blank_rows_of_cells_stay():
    grid, words = make_grid([[""] * 4, *BODY, [""] * 4], spans={4: ""})  # one blank cell over the row
    moved = lift_box_text(grid, words)
    assert texts(grid) == [[""] * 4, *BODY]
    assert moved.repairs == ["box_text: a blank last row dropped"] and grid.n_rows == 4
    # a row of blank cells, one a column: a row whose words went elsewhere, or were lost
    grid, words = make_grid([*BODY, [""] * 4])
    assert lift_box_text(grid, words).repairs == [] and grid.n_rows == 4
