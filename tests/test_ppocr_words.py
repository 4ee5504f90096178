"""Word boxes out of a recognised line (models.ppocr.words): cut at the gaps, tightened to the
glyphs' own ink. Pure numpy, no weights."""

from __future__ import annotations

import numpy as np

from models.ppocr.recognise import Glyph, LineRead
from models.ppocr.words import line_words

FRAME_PX = 4.0


def _line(noise_at: int | None = None) -> tuple[LineRead, np.ndarray]:
    """A 200 x 20 line crop holding two words (ink at columns 12-51 and 120-159) and their
    glyphs as the recogniser reads them (frames of 4 px), with one dark noise pixel."""
    grey = np.full((20, 200), 250, dtype=np.uint8)
    grey[5:15, 12:52] = 20
    grey[5:15, 120:160] = 20
    if noise_at is not None:
        grey[2, noise_at] = 20
    frames = (0, 1, 3, 4, 6, 7, 9)  # seven glyphs over ten frames: 40 px of ink
    glyphs = tuple(Glyph(c, 0.99, 3 + f, 3 + f) for c, f in zip("kg/year", frames)) + tuple(
        Glyph(c, 0.99, 30 + f, 30 + f) for c, f in zip("kg/year", frames)
    )
    return LineRead(glyphs, FRAME_PX), grey


def test_each_word_of_a_line_gets_the_box_of_its_own_glyphs() -> None:
    read, grey = _line()
    words = line_words(read, (100.0, 50.0, 300.0, 70.0), grey)
    assert [w[0] for w in words] == ["kg/year", "kg/year"]
    (_, a, _), (_, b, _) = words
    assert (a[0], a[2]) == (112.0, 152.0) and (b[0], b[2]) == (220.0, 260.0)
    assert (a[1], a[3]) == (55.0, 65.0)


def test_a_noise_pixel_in_the_gap_does_not_stretch_a_word_over_it() -> None:
    """On a noisy scan one dark pixel between two header labels stretched the second over the
    gap into the column of the first, and the grid gave both labels to one cell."""
    read, grey = _line(noise_at=90)
    (_, a, _), (_, b, _) = line_words(read, (0.0, 0.0, 200.0, 20.0), grey)
    assert a[2] <= 53 and b[0] >= 118


def test_a_word_box_holds_its_own_glyph_rows_not_a_rule_or_the_next_line() -> None:
    """A 32-px line crop over a 12-px "kg/year": the tail of the line above at its top edge, a
    table rule under it and the next row's digits at its bottom edge. The box hugs the glyphs
    and the dot over an "i" stays in; with the word 32 px tall its row boundary moved past the
    next row's values (eu-001 on an unevenly lit scan)."""
    grey = np.full((32, 200), 250, dtype=np.uint8)
    grey[0:2, 12:52] = 20  # the line above's descenders
    grey[11:23, 12:52] = 20  # the glyphs
    grey[8:10, 30:33] = 20  # a dot, two rows above them
    grey[25, :] = 20  # a rule across the crop
    grey[29:32, 20:40] = 20  # the next line's ascenders
    frames = (0, 1, 3, 4, 6, 7, 9)
    glyphs = tuple(Glyph(c, 0.99, 3 + f, 3 + f) for c, f in zip("kg/year", frames))
    ((_, box, _),) = line_words(LineRead(glyphs, FRAME_PX), (0.0, 100.0, 200.0, 132.0), grey)
    assert (box[1], box[3]) == (108.0, 123.0)


def _signed(*marks: tuple[slice, slice]) -> tuple[LineRead, np.ndarray]:
    """A 20-px line: marks at `marks` (rows, columns), then "1385" as four 6 x 12 digits."""
    grey = np.full((20, 120), 250, dtype=np.uint8)
    for mark in marks:
        grey[mark] = 20
    for k in range(4):
        grey[4:16, 30 + 9 * k : 36 + 9 * k] = 20
    glyphs = (Glyph("-", 0.9, 5, 5), *(Glyph(c, 0.99, 8 + 2 * k, 8 + 2 * k) for k, c in enumerate("1385")))
    return LineRead(glyphs, FRAME_PX), grey


def test_a_speck_read_as_a_minus_before_a_number_is_left_out_and_a_real_minus_stays() -> None:
    """Photocopy, dev eu-007 p5 t5: a 3 x 3 speck left of "1385" was read as "-1385", a
    confident wrong number. A blot is no minus; a bar twice as wide as it is high is one."""
    read, grey = _signed((slice(9, 12), slice(20, 23)))
    ((text, box, _),) = line_words(read, (0.0, 0.0, 120.0, 20.0), grey)
    assert text == "1385" and box[0] == 30.0
    read, grey = _signed((slice(9, 11), slice(18, 26)))
    ((text, box, _),) = line_words(read, (0.0, 0.0, 120.0, 20.0), grey)
    assert text == "-1385" and box[0] == 18.0
    # a speck beside a real minus (office scan, dev eu-004 p4 t4: "-10.8" read as "10.8" when
    # only the first mark was looked at): the bar is the minus, and it stays
    read, grey = _signed((slice(4, 7), slice(12, 15)), (slice(9, 11), slice(18, 26)))
    ((text, box, _),) = line_words(read, (0.0, 0.0, 120.0, 20.0), grey)
    assert text == "-1385"


def test_a_numbers_confidence_is_that_of_its_least_sure_digit_and_a_words_is_the_mean() -> None:
    """A misread digit among sure ones ("9157" for "9187", the `5` at 0.6) is scored 0.9 by the
    mean; the value is wrong if one digit is, so the number carries the `5`'s 0.6. A
    label keeps the mean (one unsure letter leaves a label readable)."""
    grey = np.full((20, 200), 250, dtype=np.uint8)
    grey[5:15, 12:52] = 20
    grey[5:15, 120:160] = 20
    number = tuple(Glyph(c, p, 3 + 2 * k, 3 + 2 * k) for k, (c, p) in enumerate(zip("9157", (1.0, 1.0, 0.6, 1.0))))
    label = tuple(Glyph(c, p, 30 + 2 * k, 30 + 2 * k) for k, (c, p) in enumerate(zip("Tota", (1.0, 1.0, 0.6, 1.0))))
    (n_text, _, n_conf), (l_text, _, l_conf) = line_words(LineRead(number + label, FRAME_PX), (0, 0, 200, 20), grey)
    assert (n_text, l_text) == ("9157", "Tota")
    assert n_conf == 0.6 and abs(l_conf - 0.9) < 1e-9


def test_a_superscript_digit_is_no_number_and_costs_no_crash() -> None:
    """`m²`: `²` is a digit to Python but no glyph of a value; the whole page once failed on it."""
    grey = np.full((20, 200), 250, dtype=np.uint8)
    grey[5:15, 12:52] = 20
    unit = tuple(Glyph(c, p, 3 + 2 * k, 3 + 2 * k) for k, (c, p) in enumerate(zip("m²", (0.9, 0.7))))
    ((text, _, conf),) = line_words(LineRead(unit, FRAME_PX), (0, 0, 200, 20), grey)
    assert text == "m²" and abs(conf - 0.8) < 1e-9


def test_a_blurred_minus_that_thresholds_to_a_blot_keeps_its_sign_and_a_crisp_blot_still_goes() -> None:
    """Blur scan, dev eu-011 p3 and eu-004 p4: "-0.01" and "-10.8" stored as "0.01" and "10.8".
    A short minus blurred by a scan thresholds to a 3 x 3 blot, as a photocopy's speck does,
    but its grey spreads sideways (about 1.45 times its height) and the speck's does not."""
    from PIL import Image, ImageFilter

    def line(mark: tuple[int, int, int, int], blur: float) -> tuple[LineRead, np.ndarray]:
        image = Image.new("L", (120, 20), 250)
        image.paste(20, mark)  # (x0, y0, x1, y1)
        for k in range(4):
            image.paste(20, (30 + 9 * k, 4, 36 + 9 * k, 16))
        if blur:
            image = image.filter(ImageFilter.GaussianBlur(blur))
        glyphs = (Glyph("-", 0.99, 5, 5), *(Glyph(c, 0.99, 8 + 2 * k, 8 + 2 * k) for k, c in enumerate("1385")))
        return LineRead(glyphs, FRAME_PX), np.asarray(image)

    read, grey = line((21, 10, 27, 12), 1.3)  # a 6 x 2 minus, blurred: a 2 x 2 blot when thresholded
    ((text, _, _),) = line_words(read, (0.0, 0.0, 120.0, 20.0), grey)
    assert text == "-1385"
    read, grey = line((21, 9, 24, 12), 0.0)  # a crisp 3 x 3 speck
    ((text, _, _),) = line_words(read, (0.0, 0.0, 120.0, 20.0), grey)
    assert text == "1385"
    read, grey = line((21, 9, 24, 12), 1.1)  # the same speck blurred: a blot, no bar
    ((text, _, _),) = line_words(read, (0.0, 0.0, 120.0, 20.0), grey)
    assert text == "1385"
