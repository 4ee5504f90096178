"""Header labels and columns repaired with the words, on the embedded engine's token grids.

Generated tables with the traits seen on real pages: two value columns set close together
read as one, a header label cut by a column boundary, a group label read into the row of
its sub-column labels, a label centred over two columns read into one, the last word of a
label read as a column of its own, and a table of text values. Each test asserts the labels
every value is read under (label binding against the true table), not only the shape.
"""

from __future__ import annotations

from dataclasses import replace

from worker.core.bands import Band
from worker.core.header_words import join_header_labels
from worker.core.headers import column_labels, infer_header_rows
from worker.core.html_out import grid_to_html
from worker.core.html_parse import html_to_grid
from worker.core.token_grid import StructureToken, token_grid
from worker.core.types import Word
from worker.evaluation.binding import bind

CH = 30  # row height, pixels
CHAR = 5  # width of one character (a space is under half a text height)


def _words(text: str, x: float, y: float, char: float = CHAR) -> list[Word]:
    """`text` starting at `x` on the line whose top is `y`, one Word per word."""
    out = []
    for part in text.split():
        out.append(Word(part, (x, y, x + len(part) * char, y + 12)))
        x += len(part) * char + CHAR
    return out


def _centred(text: str, centre: float, y: float, char: float = CHAR) -> list[Word]:
    return _words(text, centre - (len(text) * char) / 2, y, char)


def _tokens(rows: list[list[tuple[float, float, int]]], header: int = 0) -> list[StructureToken]:
    """The model's rows: cells as (x0, x1, colspan), one row height each; `header` rows in <thead>."""
    out: list[StructureToken] = []
    for r, cells in enumerate(rows):
        if r == 0 and header:
            out.append(StructureToken("<thead>", 0.99))
        if r == header and header:
            out += [StructureToken("</thead>", 0.99), StructureToken("<tbody>", 0.99)]
        out.append(StructureToken("<tr>", 0.99))
        for x0, x1, colspan in cells:
            box = (x0, r * CH + 1.0, x1, (r + 1) * CH - 1.0)
            if colspan == 1:
                out.append(StructureToken("<td></td>", 0.98, box))
            else:
                out += [
                    StructureToken("<td", 0.97, box),
                    StructureToken(f' colspan="{colspan}"', 0.96),
                    StructureToken(">", 0.99),
                    StructureToken("</td>", 0.99),
                ]
        out.append(StructureToken("</tr>", 0.99))
    return out


def _gt(header: list[str], body: list[list[str]]) -> str:
    head = "<thead><tr>" + "".join(f"<th>{t}</th>" for t in header) + "</tr></thead>"
    rows = "".join("<tr>" + "".join(f"<td>{t}</td>" for t in row) + "</tr>" for row in body)
    return f"<table>{head}<tbody>{rows}</tbody></table>"


def test_two_value_columns_read_as_one_are_split_at_their_gutter_and_keep_their_labels():
    # true columns: Variable | Mean | Std. Dev. | Min | Max; the model draws Std. Dev. and Min as one
    body = [["Age", "50.8", "15.9", "21", "90"], ["Men", "0.47", "0.50", "0", "1"], ["East", "0.28", "0.45", "0", "1"]]
    xs = {"Variable": 10, "Mean": 200, "Std. Dev.": 300, "Min": 400, "Max": 520}
    words = [w for label, x in xs.items() for w in _words(label, x, 9)]
    for r, row in enumerate(body, start=1):
        for text, x in zip(row, (10, 205, 310, 405, 525)):
            words += _words(text, x, r * CH + 9)
    model = [(0, 190, 1), (190, 290, 1), (290, 500, 1), (500, 600, 1)]
    grid = token_grid(_tokens([model] * 4), words, (600, 4 * CH))
    assert grid.n_cols == 5
    assert any("gutter" in r for r in grid.repairs)
    assert column_labels(grid, 1) == ["Variable", "Mean", "Std. Dev.", "Min", "Max"]
    got = bind(grid_to_html(grid), _gt(list(xs), body))
    assert got["bound"] == got["values"] == 12


def test_a_header_label_cut_by_a_column_boundary_goes_whole_to_the_column_it_is_centred_over():
    # the boundary at 290 cuts "Std. Dev." (283-346): word by word, "Std." would go left
    body = [["Age", "50.8", "15.9"], ["Men", "0.47", "0.50"]]
    words = _words("Variable", 10, 9) + _words("Mean", 200, 9) + _words("Std. Dev.", 283, 9)
    for r, row in enumerate(body, start=1):
        for text, x in zip(row, (10, 205, 310)):
            words += _words(text, x, r * CH + 9)
    grid = token_grid(_tokens([[(0, 190, 1), (190, 290, 1), (290, 400, 1)]] * 3), words, (400, 3 * CH))
    assert column_labels(grid, 1) == ["Variable", "Mean", "Std. Dev."]
    got = bind(grid_to_html(grid), _gt(["Variable", "Mean", "Std. Dev."], body))
    assert got["bound"] == got["values"] == 4


THRESHOLD_BODY = [["Carbon dioxide", "100 million", "-", "-"], ["Methane", "100 000", "-", "-"]]
THRESHOLD_GT = (
    '<table><thead><tr><th></th><th colspan="3">THRESHOLD FOR RELEASES</th></tr>'
    "<tr><th></th><th>to air</th><th>to water</th><th>to land</th></tr></thead><tbody>"
    + "".join("<tr>" + "".join(f"<td>{t}</td>" for t in row) + "</tr>" for row in THRESHOLD_BODY)
    + "</tbody></table>"
)


def _threshold_words() -> list[Word]:
    """A group label in capitals (wider than its column) on its own line over three sub-labels,
    both in the model's first row, and two body rows under them."""
    words = _centred("THRESHOLD FOR RELEASES", 380, 3, char=8)
    for text, centre in (("to air", 260), ("to water", 380), ("to land", 500)):
        words += _centred(text, centre, 17)
    for r, row in enumerate(THRESHOLD_BODY, start=1):
        for text, centre in zip(row, (60, 260, 380, 500)):
            words += _centred(text, centre, r * CH + 9)
    return words


def test_a_group_label_read_into_its_sub_labels_row_gets_its_own_row_and_spans_them():
    # "THRESHOLD FOR RELEASES" on its own line over "to air | to water | to land", one model row for both
    cols = [(0, 200, 1), (200, 320, 1), (320, 440, 1), (440, 560, 1)]
    words = _threshold_words()
    grid = token_grid(_tokens([cols] * 3, header=1), words, (560, 3 * CH))
    assert any("group label" in r for r in grid.repairs)
    labels = column_labels(grid, grid.header_rows)
    assert labels[1:] == [f"THRESHOLD FOR RELEASES / to {w}" for w in ("air", "water", "land")]
    got = bind(grid_to_html(grid), THRESHOLD_GT)
    assert got["bound"] == got["values"] == 6


def test_a_group_label_cell_drawn_across_its_columns_leaves_the_sub_labels_a_cell_each():
    # the model draws one cell across the three columns round both lines (skew-5 scan): the
    # spanning cell is the group label's, and "to air | to water | to land" get a cell a column
    row0 = [(0, 200, 1), (200, 560, 3)]
    cols = [(0, 200, 1), (200, 320, 1), (320, 440, 1), (440, 560, 1)]
    words = _threshold_words()
    grid = token_grid(_tokens([row0, cols, cols], header=1), words, (560, 3 * CH))
    assert column_labels(grid, grid.header_rows)[1:] == [
        f"THRESHOLD FOR RELEASES / to {w}" for w in ("air", "water", "land")
    ]


def test_a_label_centred_over_two_sub_columns_but_read_into_one_takes_the_empty_slot_beside_it():
    cols = [(0, 150, 1), (150, 270, 1), (270, 390, 1), (390, 510, 1), (510, 630, 1)]
    # the model: "hypermarkets" in column 1, an empty cell over columns 2-3, "supermarkets" in 4
    row0 = [(0, 150, 1), (150, 270, 1), (270, 510, 2), (510, 630, 1)]
    words = _centred("hypermarkets", 255, 9) + _centred("supermarkets", 515, 9)  # each reaching into the empty cell
    for text, centre in (("1996", 210), ("change", 330), ("1996", 450), ("change", 570)):
        words += _centred(text, centre, CH + 9)
    body = [["Austria", "12", "+3", "52", "+11"], ["Denmark", "17", "n.a.", "59", "+8"]]
    for r, row in enumerate(body, start=2):
        for text, centre in zip(row, (60, 210, 330, 450, 570)):
            words += _centred(text, centre, r * CH + 9)
    grid = token_grid(_tokens([row0, cols, cols, cols], header=2), words, (630, 4 * CH))
    assert column_labels(grid, 2)[1:] == [
        "hypermarkets / 1996",
        "hypermarkets / change",
        "supermarkets / 1996",
        "supermarkets / change",
    ]
    gt = (
        '<table><thead><tr><th></th><th colspan="2">hypermarkets</th><th colspan="2">supermarkets</th></tr>'
        "<tr><th></th><th>1996</th><th>change</th><th>1996</th><th>change</th></tr></thead><tbody>"
        + "".join("<tr>" + "".join(f"<td>{t}</td>" for t in row) + "</tr>" for row in body)
        + "</tbody></table>"
    )
    got = bind(grid_to_html(grid), gt)
    assert got["bound"] == got["values"] == 8


def test_the_last_word_of_a_label_read_as_a_column_of_its_own_goes_back_to_its_label():
    # "inhabitants per | outlet": the model adds a column right of the last one holding only "outlet"
    cols = [(0, 150, 1), (150, 300, 1), (300, 385, 1), (385, 450, 1)]
    words = _words("population", 160, 9) + _words("inhabitants per", 300, 9) + _words("outlet", 300 + 16 * CHAR, 9)
    body = [["Germany", "81.9", "1883"], ["France", "58.1", "670"]]
    for r, row in enumerate(body, start=1):
        for text, x in zip(row, (10, 170, 320)):
            words += _words(text, x, r * CH + 9)
    grid = token_grid(_tokens([cols] * 3), words, (450, 3 * CH))
    assert grid.n_cols == 3
    assert column_labels(grid, 1)[1:] == ["population", "inhabitants per outlet"]
    got = bind(grid_to_html(grid), _gt(["", "population", "inhabitants per outlet"], body))
    assert got["bound"] == got["values"] == 4


def test_a_table_of_text_values_has_its_header_row_found():
    brands = (
        "<table><tr><td></td><td>Up-market</td><td>Medium</td><td>Down-market</td></tr>"
        "<tr><td>Procter &amp; Gamble</td><td>Ariel</td><td>Vizir</td><td>Bonux</td></tr>"
        "<tr><td>Lever</td><td>Skip</td><td>Omo</td><td>Persil</td></tr>"
        "<tr><td>Henkel</td><td>Le Chat</td><td>Super Croix</td><td></td></tr></table>"
    )
    assert infer_header_rows(html_to_grid(brands)) == 1
    assert bind(brands, brands)["bound"] == 8
    shares = (
        "<table><tr><td>Groups</td><td>Butter</td><td>Margarine</td></tr>"
        "<tr><td>Astra</td><td>Total: 0%</td><td>Total: 47%</td></tr>"
        "<tr><td>Besnier</td><td>Total: 18.1%</td><td>Total: 0%</td></tr></table>"
    )
    assert infer_header_rows(html_to_grid(shares)) == 1
    # a table of text without a header shape stays without one
    plain = (
        "<table><tr><td>Apple</td><td>a fruit</td></tr><tr><td>Oak</td><td>a tree</td></tr>"
        "<tr><td>Rose</td><td>a flower</td></tr></table>"
    )
    assert infer_header_rows(html_to_grid(plain)) == 0


def test_vertical_rules_read_as_ones_in_the_header_do_not_hide_the_year_labels():
    # "1 1996 1 1993": PP-OCR reads the short rules between header cells as "1" (tall, thin boxes)
    cols = [(0, 220, 1), (220, 455, 1), (455, 740, 1)]
    words = _centred("1996", 340, 9) + _centred("1993", 600, 9)
    words += [Word("1", (454, 2, 456, 28), 0.89), Word("1", (220, 2, 222, 28), 0.87)]
    body = [["Austria", "59", "54"], ["Denmark", "59", "1"]]  # a real "1" in the body stays
    for r, row in enumerate(body, start=1):
        for text, centre in zip(row, (60, 340, 600)):
            words += _centred(text, centre, r * CH + 9)
    grid = token_grid(_tokens([cols] * 3), words, (740, 3 * CH))
    html = grid_to_html(grid)
    assert column_labels(html_to_grid(html), infer_header_rows(html_to_grid(html)))[1:] == ["1996", "1993"]
    got = bind(html, _gt(["", "1996", "1993"], body))
    assert got["bound"] == got["values"] == 4


def test_a_group_label_in_small_capitals_stays_one_label_over_its_sub_columns():
    """ "THRESHOLD FOR RELEASES" set in small capitals: "FOR" and "RELEASES" are shorter than
    "THRESHOLD", and a word space is more than half their height. Measured by its tallest word
    the label stays one, spans its three sub-columns, and every value keeps its whole path
    (read as "THRESHOLD FOR" | "RELEASES" on a tinted scan, no value was bound)."""
    cols = [(0, 150, 1), (150, 250, 1), (250, 330, 1), (330, 450, 1)]
    words = [
        Word("THRESHOLD", (234, 9, 288, 21)),
        Word("FOR", (294, 12, 312, 21)),
        Word("RELEASES", (318, 12, 366, 21)),
    ]
    words += _centred("air", 200, CH + 9) + _centred("water", 290, CH + 9) + _centred("land", 390, CH + 9)
    body = [["Arsenic", "20", "5", "5"], ["Lead", "200", "20", "20"]]
    for r, row in enumerate(body, start=2):
        for text, x in zip(row, (10, 190, 280, 380)):
            words += _words(text, x, r * CH + 9)
    grid = token_grid(_tokens([cols] * 4), words, (450, 4 * CH))
    html = grid_to_html(grid)
    assert "THRESHOLD FOR RELEASES" in html
    gt = (
        "<table><thead><tr><th rowspan=2></th><th colspan=3>THRESHOLD FOR RELEASES</th></tr>"
        "<tr><th>air</th><th>water</th><th>land</th></tr></thead><tbody>"
        + "".join("<tr>" + "".join(f"<td>{t}</td>" for t in row) + "</tr>" for row in body)
        + "</tbody></table>"
    )
    got = bind(html, gt)
    assert got["bound"] == got["values"] == 6


def test_labels_wrapped_over_two_lines_read_as_two_rows_are_one_header_row():
    """The model read the top line of two-line labels as a title row spanning the table
    ("population" over "1995 (mn)"): the upper lines sit one per column right over the lower
    ones, so the two rows are one, and every value reads under its whole label."""
    cols = [(0, 150, 1), (150, 250, 1), (250, 350, 1), (350, 450, 1)]
    words = _centred("population", 200, 16) + _centred("number of", 300, 16) + _centred("outlets per", 400, 16)
    words += _centred("1995 (mn)", 200, 31) + _centred("1996/7 (000)", 300, 31) + _centred("1996/7", 400, 31)
    body = [["Germany", "81.9", "73.6", "1111"], ["France", "58.1", "34.8", "1667"]]
    for r, row in enumerate(body, start=2):
        for text, x in zip(row, (10, 190, 290, 390)):
            words += _words(text, x, r * CH + 9)
    title = [(0, 450, 4)]
    grid = token_grid(_tokens([title, cols, cols, cols]), words, (450, 4 * CH))
    assert grid.n_rows == 3
    assert column_labels(grid, 1)[1:] == ["population 1995 (mn)", "number of 1996/7 (000)", "outlets per 1996/7"]
    got = bind(
        grid_to_html(grid), _gt(["", "population 1995 (mn)", "number of 1996/7 (000)", "outlets per 1996/7"], body)
    )
    assert got["bound"] == got["values"] == 6


def test_a_margin_row_and_column_read_round_the_table_go_and_a_speck_tall_label_stays_whole():
    """Photocopy, seed 2, dev eu-001 p3 t7: SLANet-plus read an empty row over the table and an
    empty column down its right side, no header, and "THRESHOLD" with a speck fused to its box
    (twice the text's height) was dealt apart from "FOR RELEASES". The margins go, the label is
    one over its three columns, and every value binds."""
    cols = [(0, 200, 1), (200, 320, 1), (320, 440, 1), (440, 560, 1), (560, 640, 1)]
    split = [(0, 200, 1), (200, 440, 2), (440, 560, 1), (560, 640, 1)]
    words = [
        Word("THRESHOLD", (300.0, CH - 6.0, 400.0, CH + 21.0)),  # a speck above it, in its box
        Word("FOR", (405.0, CH + 9.0, 429.0, CH + 21.0)),
        Word("RELEASES", (434.0, CH + 9.0, 498.0, CH + 21.0)),
    ]
    for text, centre in (("to air", 260), ("to water", 380), ("to land", 500)):
        words += _centred(text, centre, 2 * CH + 9)
    for r, row in enumerate(THRESHOLD_BODY, start=3):
        for text, centre in zip(row, (60, 260, 380, 500)):
            words += _centred(text, centre, r * CH + 9)
    grid = token_grid(_tokens([[(0, 640, 5)], split, cols, cols, cols]), words, (640, 5 * CH))
    assert (grid.n_rows, grid.n_cols) == (4, 4)
    got = bind(grid_to_html(grid), THRESHOLD_GT)
    assert got["bound"] == got["values"] == 6


def test_two_columns_labels_a_word_space_apart_over_a_body_gutter_stay_two_labels():
    """Photocopy, dev eu-005 p2 t2 (its boxes): "Our estimates" over "1996" and "LDA" over "1997",
    two columns' cells of two lines, stood a word space apart once the toner spread and were
    joined as one label dealt to the first column. Parted at the body's gutter, each column
    keeps its label. A group label heading a row of its own ("number of franchisors" over
    "1993 | 1994" in the row below, eu-004 p9) is not parted."""
    cols = [Band(0, 145, 0.9), Band(145, 286, 0.9), Band(286, 373, 0.9)]
    rows = [Band(5, 63, 0.9), Band(63, 90, 0.9), Band(90, 117, 0.9)]
    head = [Word("Our", (148.0, 16.0, 186.0, 32.0)), Word("estimates", (193.0, 10.0, 287.0, 32.0))]
    head += [Word("LDA", (296.0, 16.0, 346.0, 32.0))]
    head += [Word("1996", (193.0, 42.0, 235.0, 58.0)), Word("1997", (306.0, 42.0, 347.0, 58.0))]
    body = [Word("58.6", (240.0, 70.0, 270.0, 86.0)), Word("79", (325.0, 70.0, 345.0, 86.0))]
    body += [Word("61.6", (240.0, 97.0, 270.0, 113.0)), Word("57", (325.0, 97.0, 345.0, 113.0))]
    labels = {w.text for w in join_header_labels([*head, *body], rows, {0}, cols)} - {w.text for w in body}
    assert labels == {"Our estimates", "LDA", "1996", "1997"}
    assert "Our estimates LDA" in {w.text for w in join_header_labels([*head, *body], rows, {0})}  # no columns: joined
    rows = [Band(15, 45, 0.9), Band(45, 75, 0.9), Band(75, 100, 0.9)]  # the label's own row, the years' row
    cols = [Band(0, 270, 0.9), Band(270, 400, 0.9), Band(400, 500, 0.9)]
    group = [Word("number", (285.0, 22.0, 359.0, 40.0)), Word("of", (365.0, 22.0, 384.0, 40.0))]
    group += [Word("franchisors", (389.0, 22.0, 495.0, 40.0))]
    years = [Word("1993", (301.0, 50.0, 346.0, 68.0)), Word("1994", (435.0, 50.0, 486.0, 67.0))]
    figures = [Word("80", (320.0, 80.0, 340.0, 96.0)), Word("170", (450.0, 80.0, 480.0, 96.0))]
    joined = {w.text for w in join_header_labels([*group, *years, *figures], rows, {0, 1}, cols)}
    assert "number of franchisors" in joined


def test_a_wrapped_header_whose_top_line_stands_over_the_models_first_row_stays_one_row():
    """eu-004 p3 on a photocopy (seed 2): the model's first row started under the centres of its
    header's top line of words, and one word of that line (`per`, centred lower) was taken for a
    group label over the row's five labels, splitting every label in two. The table's first
    row holds the line just above its boxes, as the rebuild assigns it."""
    cols = [(0, 100, 1), (100, 220, 1), (220, 340, 1), (340, 460, 1)]
    header: list[Word] = []
    for top, texts in ((3, ("population", "number of", "turnover per")), (19, ("(mn)", "enterprises", "enterprise"))):
        for text, centre in zip(texts, (160, 280, 400)):
            header += _centred(text, centre, top + (4 if text.endswith("per") else 0))
    body = [["EU15", "372.3", "2553", "494"], ["USA", "263.1", "1530", "883"]]
    words = header + [
        w for r, row in enumerate(body, 1) for t, c in zip(row, (50, 160, 280, 400)) for w in _centred(t, c, r * CH + 9)
    ]
    tokens = [  # the model's first row starts 10 px down, under the top line's centres
        replace(t, bbox=(t.bbox[0], 10.0, t.bbox[2], t.bbox[3])) if t.bbox is not None and t.bbox[1] < CH else t
        for t in _tokens([cols] * 3, header=1)
    ]
    grid = token_grid(tokens, words, (460, 3 * CH))
    assert not any("group label" in r for r in grid.repairs), grid.repairs
    assert column_labels(grid, grid.header_rows)[1:] == [
        "population (mn)",
        "number of enterprises",
        "turnover per enterprise",
    ]
    gt = _gt(["", "population (mn)", "number of enterprises", "turnover per enterprise"], body)
    got = bind(grid_to_html(grid), gt)
    assert got["bound"] == got["values"] == 6


def test_a_piece_of_a_caption_the_crops_top_edge_cuts_is_no_group_label():
    """eu-012 p3 on a photocopy (seed 1): the crop's top edge cut through the caption over a
    ruled table, and the piece of it read (`P`, the top of "(percentage", 7 px high from the
    crop's first row) lay within a text height over the first row: taken for a group label
    over "Finland | EU-15 | EU-25", it split the header row in two."""
    cols = [(0, 100, 1), (100, 220, 1), (220, 340, 1), (340, 460, 1)]
    piece = [Word("P", (150.0, 0.0, 157.0, 7.0), 0.57)]
    labels = [w for text, c in zip(("Finland", "EU-15", "EU-25"), (160, 280, 400)) for w in _centred(text, c, 16)]
    body = [["1996", "3.7", "1.6", "1.7"], ["2000", "5.0", "3.9", "3.9"]]
    cells = [(t, c, r * CH + 9) for r, row in enumerate(body, 1) for t, c in zip(row, (50, 160, 280, 400))]
    words = piece + labels + [w for t, c, y in cells for w in _centred(t, c, y)]
    tokens = [  # the model's first row starts 8 px down, under the caption's piece
        replace(t, bbox=(t.bbox[0], 8.0, t.bbox[2], t.bbox[3])) if t.bbox is not None and t.bbox[1] < CH else t
        for t in _tokens([cols] * 3, header=1)
    ]
    grid = token_grid(tokens, words, (460, 3 * CH))
    assert not any("group label" in r for r in grid.repairs), grid.repairs
    assert grid.n_rows == 3


def test_two_labels_over_their_own_columns_stay_two_when_a_speck_makes_one_look_taller():
    """Photocopy, seed 1, dev eu-007 p5 t5 (its boxes): "Butter" and "Margarine", each centred
    over its own column, 17 px apart; the dashed rules over and under "Margarine" were fused to
    its box (28 px for 16-px text), so its word space looked 20 px wide and the two were read as
    one label spanning both columns. Measured by the lower word, they are two labels, and each
    value binds under its own."""
    words = [
        Word("Products", (53.0, 13.0, 142.0, 29.0)),
        Word("Butter", (194.0, 13.0, 262.0, 29.0)),
        Word("Margarine", (279.0, 8.0, 382.0, 36.0)),
        Word("Low", (402.0, 13.0, 451.0, 29.0)),
        Word("fat", (450.0, 13.0, 485.0, 33.0)),
        Word("products", (484.0, 8.0, 564.0, 36.0)),
        Word("Turnover", (17.0, 40.0, 111.0, 56.0)),
        Word("Ffr.", (110.0, 40.0, 150.0, 56.0)),
        Word("m.", (149.0, 44.0, 175.0, 56.0)),
        Word("6028", (200.0, 40.0, 256.0, 56.0)),
        Word("1385", (297.0, 40.0, 359.0, 56.0)),
        Word("836", (460.0, 40.0, 507.0, 63.0)),
    ]
    row = [(5, 185, 1), (188, 264, 1), (276, 385, 1), (390, 578, 1)]
    grid = token_grid(_tokens([row, row]), words, (585, 71))
    assert column_labels(grid, 1) == ["Products", "Butter", "Margarine", "Low fat products"]
    gt = _gt(["Products", "Butter", "Margarine", "Low fat products"], [["Turnover Ffr. m.", "6028", "1385", "836"]])
    got = bind(grid_to_html(grid), gt)
    assert got["bound"] == got["values"] == 3
