"""OCR words that are specks: a fleck of toner or noise read as one character.

On photocopies and noisy scans the OCR's text detector boxes specks beside and between labels,
and the recogniser reads each as a character ("0", "4", ":", a quote). Joined to a label
("0 to land") or standing alone over the header ("4"), one speck breaks a column's path or
makes a row of labels look like a row of values. A speck is told by three things together:
one character, read with low confidence, and lower than text (well under the height of the
crop's words of two characters or more). Only digits and marks are taken for specks: a lone
letter may be a table's own mark (a column of "x" for yes, office scan eu-013 p8, read as
unsurely and as low), and a stray letter costs a label one character where a stray digit
changes its number. A dash is never taken for one: a missing value's placeholder is as low and
as unsure. A piece of a vertical rule read as "1" (or "|", "!") is no text either: its box is a
pixel wide, where a figure one has a flag and a foot (photocopy, eu-012 p5: the broken rules
between the columns gave "Sweden 1" and "16 1"). And a word of one or two characters that
reads as a digit or a capital (with marks, no small letter) but whose box is under half the
height of the crop's text is no such glyph, whose height is the text's own: two specks beside a
label read as "I," (office scan, eu-017 p2: `Domestic (%) I,`, the column's label then lost to
every value under it) or one read as "P". Unsure readings only (below `LOW_GLYPH_CONFIDENCE`).
Pure.
"""

from __future__ import annotations

from statistics import median

from worker.core.types import Word

SPECK_CONFIDENCE = 0.6  # read this unsurely ...
SPECK_HEIGHT = 0.65  # ... and lower than this share of the crop's median word height
MIN_WORDS = 3  # words of two characters or more needed to know the text's height
DASHES = frozenset("-–—−")
# what the OCR makes of a piece of a vertical rule in the body; header_words.RULE_GLYPHS takes
# "l" and "I" too, for debris far taller than the text, but a thin lone letter may be a cell's ...
RULE_PIECE_GLYPHS = frozenset("1|!")
RULE_WIDTH = 1.5  # ... whose box is this many pixels wide at most (a figure one's is 2-3 at least)
LOW_GLYPH_HEIGHT = 0.5  # a digit or capital in a box under this share of the median word height ...
LOW_GLYPH_CONFIDENCE = 0.8  # ... read less surely than this, is specks


def drop_specks(words: list[Word]) -> tuple[list[Word], int]:
    """`words` without the specks among them (module docstring), and how many were dropped."""
    heights = [w.bbox[3] - w.bbox[1] for w in words if len(w.text.strip()) >= 2]
    if len(heights) < MIN_WORDS:
        return words, 0
    text_height = median(heights)
    low = SPECK_HEIGHT * text_height
    kept = [
        w
        for w in words
        if not _speck(w, low) and not _rule_piece(w) and not _low_glyphs(w, LOW_GLYPH_HEIGHT * text_height)
    ]
    return kept, len(words) - len(kept)


def _speck(w: Word, low: float) -> bool:
    t = w.text.strip()
    return (
        len(t) == 1
        and not t.isalpha()
        and t not in DASHES
        and w.confidence is not None
        and w.confidence < SPECK_CONFIDENCE
        and w.bbox[3] - w.bbox[1] < low
    )


def _rule_piece(w: Word) -> bool:
    return w.text.strip() in RULE_PIECE_GLYPHS and w.bbox[2] - w.bbox[0] <= RULE_WIDTH


def _low_glyphs(w: Word, low: float) -> bool:
    """One or two characters that read as full-height glyphs (a digit or a capital, marks beside
    them, no small letter) in a box lower than `low`, read unsurely."""
    t = w.text.strip()
    return (
        0 < len(t) <= 2
        and not any(ch.islower() for ch in t)
        and any(ch.isdigit() or ch.isupper() for ch in t)
        and w.confidence is not None
        and w.confidence < LOW_GLYPH_CONFIDENCE
        and w.bbox[3] - w.bbox[1] < low
    )
