"""Column boundaries moved off the text they cut (worker.core.column_gaps): SLANet's cell boxes
on a degraded scan put a column edge through the next column's label and values."""

from __future__ import annotations

from worker.core.bands import Band
from worker.core.column_gaps import fit_columns_to_text
from worker.core.types import Word

ROWS = [Band(7, 76, 1.0), Band(76, 121, 1.0), Band(121, 160, 1.0)]


def _w(text: str, x0: float, x1: float, row: int) -> Word:
    top = ROWS[row].lo + 10
    return Word(text, (x0, top, x1, top + 18), 0.99)


def _cuts(cols: list[Band]) -> list[float]:
    return [round((a.hi + b.lo) / 2) for a, b in zip(cols, cols[1:])]


def test_a_boundary_through_a_column_of_text_moves_to_the_free_gap_beside_it() -> None:
    """Office scan, dev eu-019 p3: the stub's boxes reached past `Domestic (%)`, and the edge at
    347 px cut that label and the `0` under it in every row. The gap right of the label holds the
    next boundary already, so the edge goes to the one left of it."""
    cols = [Band(12, 347, 1.0), Band(347, 434, 1.0), Band(434, 584, 1.0)]
    words = [
        _w("Country", 103, 182, 0),
        _w("Domestic", 278, 369, 0),
        _w("(%)", 376, 406, 0),
        _w("Imported", 440, 532, 0),
        _w("Austria", 30, 100, 1),
        _w("0", 341, 353, 1),
        _w("100", 480, 510, 1),
        _w("Belgium", 30, 110, 2),
        _w("0", 341, 353, 2),
        _w("0", 490, 502, 2),
    ]
    repairs: list[str] = []
    assert _cuts(fit_columns_to_text(cols, ROWS, [], words, repairs)) == [230, 434]
    assert repairs == ["1 column boundary(ies) moved off the text they cut"]


def test_a_label_over_two_columns_on_one_line_and_a_spanning_cell_leave_the_edges_alone() -> None:
    cols = [Band(0, 200, 1.0), Band(200, 400, 1.0), Band(400, 600, 1.0)]
    body = [_w("a", 20, 60, 1), _w("12", 280, 300, 1), _w("13", 480, 500, 1)]
    body += [_w("b", 20, 60, 2), _w("14", 280, 300, 2), _w("15", 480, 500, 2)]
    group = [_w("Male", 330, 390, 0), _w("students", 396, 470, 0)]  # one line across the edge at 400
    repairs: list[str] = []
    assert fit_columns_to_text(cols, ROWS, [], group + body, repairs) == cols and repairs == []
    # the same label on two lines, inside a cell the model drew over both columns
    wrapped = group + [_w("Male", 330, 390, 1), _w("students", 396, 470, 1)]
    spanning = [(200.0, 7.0, 600.0, 121.0)]
    assert fit_columns_to_text(cols, ROWS, spanning, wrapped + body[3:], repairs) == cols


def test_an_edge_with_no_free_gap_beside_it_stays() -> None:
    cols = [Band(0, 100, 1.0), Band(100, 200, 1.0)]
    words = [_w("a long label", 50, 150, r) for r in range(3)]  # text across the whole table
    repairs: list[str] = []
    assert fit_columns_to_text(cols, ROWS, [], words, repairs) == cols and repairs == []


def test_an_edge_is_not_moved_past_a_columns_own_text() -> None:
    """Photocopy, dev eu-016 p3: an empty margin column left of the stub, whose edge cut the names
    that start a little to its left. The free gap is right of the names; moving there would pass
    over the names that start right of the edge and hand the whole stub to the margin column."""
    rows = [Band(0, 40, 1.0), Band(40, 80, 1.0), Band(80, 120, 1.0), Band(120, 160, 1.0)]
    cols = [Band(0, 40, 1.0), Band(40, 400, 1.0), Band(400, 600, 1.0)]
    words = []
    for r, start in enumerate((30, 32, 45, 50)):  # two names cut by the edge at 40, two wholly right of it
        top = rows[r].lo + 10
        words += [Word(f"name{r}", (start, top, 150, top + 18), 0.9), Word("12", (210, top, 240, top + 18), 0.9)]
        words.append(Word("7", (480, top, 490, top + 18), 0.9))
    repairs: list[str] = []
    assert fit_columns_to_text(cols, rows, [], words, repairs) == cols and repairs == []


def test_two_neighbouring_edges_with_one_gap_between_them_meet_in_it() -> None:
    """Two edges each through a column's text, one gap between those columns: both go into it,
    and the band between them is left with no width (the model drew one column too many there;
    the wordless-column rule joins it away). They meet; they never cross: each moves only within
    its neighbours' old places, towards the nearer gap. Moving them left to right instead, the
    second taking the gap after the next column, was measured: office eu-018 p1 t2 0.869 -> 0.810."""
    cols = [Band(0, 60, 1.0), Band(60, 190, 1.0), Band(190, 420, 1.0), Band(420, 560, 1.0)]
    words = [
        _w(text, x0, x1, r)
        for r in range(3)
        for text, x0, x1 in (("Austria", 10, 90), ("12.5", 160, 240), ("13.0", 310, 390), ("7", 460, 540))
    ]
    repairs: list[str] = []
    fitted = fit_columns_to_text(cols, ROWS, [], words, repairs)
    assert _cuts(fitted) == [125, 125, 420]
    assert all(b.hi > b.lo for b in fitted) and fitted[1].hi - fitted[1].lo < 0.01
    assert repairs == ["2 column boundary(ies) moved off the text they cut"]
