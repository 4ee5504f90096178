"""A caption or a note beyond a table's outermost full-width rule, cut off the table's box.

Tables set with a rule over their header and one under their last row (the booktabs style of
most papers) often have their caption just above the top rule and a source note just below the
bottom one. When the detector's box takes either in, the structure model reads the prose as
rows and deals its words into columns that do not exist (eu-026 p5 on the office scan: two
caption lines and a source line made four empty columns; eu-011 p3 on the photocopy: a caption
cut in half by the crop). Prose is told from a table row by its shape alone, before any word is
read: every line beyond the rule is one run of ink with no column gutter in it, and one line at
least runs across half the box. A header row above the rule has its gutters, and stays.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from models.page_normalise import wipe_specks
from models.ruled_tables import close_gaps, crop_window, rule_rows
from models.rules import DARK, RULE_MAX_THICKNESS_PX, rule_length, runs

FULL_RULE_FILL = 0.8  # a row dark along this share of the box's width is a rule across the table
GUTTER_LINES = 1.0  # a gap this many of its line's heights wide parts a line into columns
MIN_GUTTER_IN = 0.1  # ... and this many inches at least (a word space of 10-point text is half that)
WIDE_LINE = 0.5  # a line of prose runs across this share of the box at least
MAX_CUT_SHARE = 0.4  # what lies beyond the rule is at most this share of the box's height ...
PARAGRAPH_LINES = 2  # ... unless this many lines of the prose run across WIDE_LINE of the box
MIN_LINE_PX = 3  # bands of ink lower than this are specks, not lines
MAX_LINE_IN = 0.3  # ... and higher than this (inches) rows run together, not a line of prose
LINE_GAP_PX = 2  # bands of ink this close one over the other are one line
LIGHT_ROW = 0.1  # in a band too tall for a line, rows this light against its fullest part lines set solid
PROSE_INK = 0.4  # a line of prose is ink over at most this share of its box (a fill's is most of it)


def cut_prose_at_rules(
    image: Image.Image, box: tuple[float, float, float, float], dpi: int, margins: tuple[float, float]
) -> tuple[float, float, float, float]:
    """`box` cut at its crop's topmost (bottom-most) full-width rule where everything above
    (below) it in the crop, which reaches `margins` (top, bottom) past the box, is prose. The
    crop then starts (ends) on the blank paper between the prose and the rule: SLANet-plus
    reads a crop whose first row is the rule itself worse (eu-027 p3 on the office scan: 0.85
    with the crop starting on the rule, 0.99 three to six pixels above it, 0.60 ten above,
    into the caption's descenders)."""
    grey = np.asarray(image.convert("L"))
    x0, y0, x1, y1 = box
    top, bottom = margins
    crop_top, crop_bottom, _, _ = crop_window(grey.shape, box, margins)
    bx0, bx1 = max(0, int(x0)), min(grey.shape[1], int(np.ceil(x1)))
    window = grey[crop_top:crop_bottom, bx0:bx1]
    if bx1 - bx0 < 2 or not window.size:
        return box
    band = close_gaps(window < DARK)
    band = band | np.vstack([band[1:], band[-1:]])  # a rule across two rows (a slight tilt) counts
    rules = rule_rows(band.mean(axis=1) >= FULL_RULE_FILL)
    if not rules:
        return box
    height, length = y1 - y0, rule_length(dpi)
    first, last = rules[0], rules[-1]
    fringe = RULE_MAX_THICKNESS_PX  # a rule's ragged edges (a residual tilt) are not text
    strip = _ink(window[: max(0, first[0] - fringe)], length)
    above = _prose(*strip, dpi, outer="top")
    if above and _may_cut(crop_top + first[0] - y0, height, strip[0], above):
        start = min(above[-1][1] + 1, first[0] - 1)  # the first blank row under the prose
        y0 = max(y0, min(y1, crop_top + start + top))
    strip = _ink(window[last[1] + 1 + fringe :], length)
    below = _prose(*strip, dpi, outer="bottom")
    if below and _may_cut(y1 - (crop_top + last[1]), height, strip[0], below):
        end = max(last[1] + fringe + below[0][0], last[1] + 1)  # the last blank row over it
        y1 = min(y1, max(y0, crop_top + end + 1 - bottom))
    return (x0, y0, x1, y1)


def _may_cut(cut: float, height: float, text: np.ndarray, lines: list[tuple[int, int]]) -> bool:
    """Whether `cut` pixels of a box `height` high may go as prose: up to MAX_CUT_SHARE of it
    always; more only where the prose is a paragraph, PARAGRAPH_LINES lines or more each across
    WIDE_LINE of the box (a detector's box over a table and the notes, heading and paragraphs
    under it, eu-018 p1 on a photocopy: half the box prose). A table's body under a rule has its
    column gutters, but one set without them must not go on one line's evidence."""
    if cut <= MAX_CUT_SHARE * height:
        return True
    wide = 0
    for a, b in lines:
        xs = np.flatnonzero(text[a:b].any(axis=0))
        wide += int(xs.size > 0 and xs[-1] - xs[0] + 1 >= WIDE_LINE * text.shape[1])
    return wide >= PARAGRAPH_LINES


def _ink(strip: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """(text, ink) of a strip of the page: its ink with specks wiped, and that ink without the
    rules (runs `length` long). Only the strips past the outer rules are cleaned (a whole 300-dpi
    crop's cost)."""
    dark = wipe_specks(strip.astype(np.float32)) < DARK if strip.size else strip < DARK
    return dark & ~runs(close_gaps(dark), length), dark


def _prose(text: np.ndarray, dark: np.ndarray, dpi: int, outer: str) -> list[tuple[int, int]]:
    """The lines (first row, past-last row) of `text` (ink, rules left out) when they are lines
    of prose: one line at least, each one run of ink with no gutter in it (specks beside it,
    narrower than half its height, aside; a lone speck narrower than twice its height is no
    line) and mostly paper in `dark` (all ink, rules too: a
    header band's fill, its white letters breaking its rows into pieces, is no prose), one of
    them across WIDE_LINE of the width, and none taller than MAX_LINE_IN (a scan's grain left no
    blank row between a header band and the rows under it: one band of ink, no line); else none.
    A band the strip's `outer` edge ("top" or "bottom") cuts through, lower than the lines
    under (over) it, is the end of a line the crop cut (eu-026 p4 on the photocopy: a caption's
    descenders over its last line): it neither makes nor breaks the prose, but it is a line as
    wide as its ink. A gutter is at least MIN_GUTTER_IN wide: the line the strip's inner edge
    cuts short (the rule's fringe left out) still has its word spaces."""
    tallest, least_gutter = MAX_LINE_IN * dpi, MIN_GUTTER_IN * dpi
    bands = [piece for band in ink_bands(text) for piece in _split_set_solid(text, band, tallest)]
    lines = [(a, b) for a, b in bands if b - a >= MIN_LINE_PX]
    wide = False
    if len(lines) > 1:
        edge, inner = (lines[0], lines[1]) if outer == "top" else (lines[-1], lines[-2])
        cut = edge[0] == 0 if outer == "top" else edge[1] == text.shape[0]
        if cut and edge[1] - edge[0] < inner[1] - inner[0]:
            lines.remove(edge)  # its extent still tells a caption's full line
            xs = np.flatnonzero(text[edge[0] : edge[1]].any(axis=0))
            wide = xs[-1] - xs[0] + 1 >= WIDE_LINE * text.shape[1]
    if any(b - a > tallest for a, b in lines):
        return []
    for a, b in lines:
        xs = np.flatnonzero(text[a:b].any(axis=0))
        cuts = np.flatnonzero(np.diff(xs) > max(GUTTER_LINES * (b - a), least_gutter))
        parts = [(xs[i], xs[j]) for i, j in zip([0, *(cuts + 1)], [*cuts, len(xs) - 1])]
        parts = [(u, v) for u, v in parts if v - u + 1 >= 0.5 * (b - a)]
        if len(parts) == 1 and parts[0][1] - parts[0][0] + 1 < 2 * (b - a):
            continue  # a speck or a mark, no line: it neither makes nor breaks the prose
        if len(parts) != 1 or dark[a:b, parts[0][0] : parts[0][1] + 1].mean() > PROSE_INK:
            return []
        wide = wide or (parts[0][1] - parts[0][0] + 1) >= WIDE_LINE * text.shape[1]
    return lines if wide else []


def ink_bands(text: np.ndarray) -> list[tuple[int, int]]:
    """Bands of rows (first, past-last) of `text` holding ink, bands LINE_GAP_PX apart or closer
    joined (descenders a row or two under their line)."""
    inked = text.sum(axis=1) >= 2
    edges = np.flatnonzero(np.diff(np.concatenate([[0], inked.astype(np.int8), [0]])))
    bands: list[tuple[int, int]] = []
    for a, b in zip(edges[::2].tolist(), edges[1::2].tolist()):
        if bands and a - bands[-1][1] <= LINE_GAP_PX:
            bands[-1] = (bands[-1][0], b)
        else:
            bands.append((a, b))
    return bands


def _split_set_solid(text: np.ndarray, band: tuple[int, int], tallest: float) -> list[tuple[int, int]]:
    """A band of ink taller than `tallest` parted at its light rows (ink on at most LIGHT_ROW of
    its fullest row's): lines set solid, one line's descenders touching the next one's ascenders,
    leave no blank row between them (eu-018 p1's paragraphs on a photocopy read as one band 71 px
    high). A band with no light rows stays whole, and too tall."""
    a, b = band
    if b - a <= tallest:
        return [band]
    ink = text[a:b].sum(axis=1)
    light = ink <= LIGHT_ROW * ink.max()
    edges = np.flatnonzero(np.diff(np.concatenate([[0], (~light).astype(np.int8), [0]])))
    return [(a + u, a + v) for u, v in zip(edges[::2].tolist(), edges[1::2].tolist())]
