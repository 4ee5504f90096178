"""Specks read as characters left out of an OCR'd table's words (worker.core.speck_words)."""

from __future__ import annotations

from worker.core.speck_words import drop_specks
from worker.core.types import Word


def _label(text: str, x: float, y: float = 50.0, h: float = 12.0, confidence: float = 0.99) -> Word:
    return Word(text, (x, y, x + 9 * len(text), y + h), confidence)


def test_an_unsure_low_single_character_is_a_speck_and_text_is_kept() -> None:
    """A skewed scan's header line "to air | to water | to land" with a speck read as "0"
    (5 x 7 px, confidence 0.53) between the labels; a real "1", a dash and an unsure but
    full-height "4" stay."""
    line = [_label("to", 469), _label("air", 501), _label("to", 596), _label("water", 620), _label("land", 771)]
    speck = Word("0", (703.0, 59.0, 708.0, 66.0), 0.53)
    real = [
        _label("1", 300, y=90, h=12, confidence=0.99),  # a figure, surely read
        Word("-", (400.0, 95.0, 408.0, 97.0), 0.41),  # a placeholder dash: low and unsure, but kept
        _label("4", 500, y=90, h=12, confidence=0.55),  # unsure, but as high as text
    ]
    kept, dropped = drop_specks([*line, speck, *real])
    assert dropped == 1 and speck not in kept and kept == [*line, *real]
    # a lone letter as low and unsure is a table's own mark (a column of "x" for yes): kept
    mark = Word("x", (300.0, 93.0, 308.0, 100.0), 0.55)
    assert drop_specks([*line, mark]) == ([*line, mark], 0)


def test_without_enough_text_to_measure_nothing_is_dropped() -> None:
    words = [_label("12", 10), Word("0", (40.0, 55.0, 44.0, 60.0), 0.3)]
    assert drop_specks(words) == (words, 0)
    assert drop_specks([]) == ([], 0)


def test_a_piece_of_a_vertical_rule_read_as_one_goes_and_a_figure_one_stays() -> None:
    """Photocopy, dev eu-012 p5: the broken rules between the columns were read as "1" in boxes a
    pixel wide ("Sweden 1", "16 1"). A figure "1" is boxed with its flag and foot."""
    line = [_label("Sweden", 10), _label("16", 100), _label("54", 200)]
    rule = Word("1", (150.0, 47.0, 151.0, 67.0), 0.93)  # a pixel wide, as high as a row
    one = Word("1", (300.0, 50.0, 303.0, 62.0), 0.99)
    kept, dropped = drop_specks([*line, rule, one])
    assert dropped == 1 and kept == [*line, one]


def test_digits_or_capitals_in_a_box_under_half_the_texts_height_are_specks() -> None:
    """Office scan, dev eu-017 p2: two specks beside "Domestic (%)" read as "I," in a 10 x 7 px
    box (confidence 0.61) against words 16-19 px high, and the column's label then read
    "Domestic (%) I,". A digit or a capital is as high as the text; half of it is no such glyph.
    A small letter as low is a table's own mark, a surely read one stays, and a single digit at
    two thirds of the text's height (a figure) stays."""
    line = [_label("Domestic", 313, y=41, h=16), _label("(%)", 410, y=41, h=18), _label("Imported", 549, y=41, h=20)]
    specks = [Word("I,", (293.0, 56.0, 303.0, 63.0), 0.61), Word("P", (480.0, 50.0, 486.0, 57.0), 0.55)]
    kept = [
        Word("x", (700.0, 48.0, 707.0, 55.0), 0.55),  # a small letter: a mark of the table's own
        Word("I", (720.0, 48.0, 723.0, 55.0), 0.95),  # read surely
        Word("7", (740.0, 45.0, 747.0, 57.0), 0.7),  # 12 px: a figure's height
    ]
    out, dropped = drop_specks([*line, *specks, *kept])
    assert dropped == 2 and out == [*line, *kept]
