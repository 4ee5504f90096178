"""Placeholder dashes the OCR cannot see, read from a table crop's pixels.

Statistical tables mark a missing value with a lone dash ("-", "–"). At scan resolutions it
is a bar one or two pixels tall, thinner than the smallest text kernel PP-OCR's detector
keeps (DB post-processing drops kernels under 3 px on their short side, as PaddleOCR does),
so the cell came out empty: on four dev pages a quarter of the ground truth's values were such
dashes, every one lost. An empty value and a dash are not the same answer ("not applicable"
against "not read"), and the label-binding measure counts the difference.

A dash is a mark of the crop that no OCR word holds and that looks like nothing else: a
solid bar, much wider than tall, short against the text's glyphs, with no other mark on its
line within a glyph's height or so (text the OCR did not read, or the next piece of a broken
rule) and no glyph just above or below it (an underline), set at the height of some glyph of
the crop (a row's text line; a piece of a broken rule lies between the lines), clear of the
crop's border (a mark the crop cut may be any glyph's piece). Ruling lines are joined into one
frame far larger than any glyph, so a rule never passes; specks are let be. The dashes join
the words before the grid is built, so they also tell the column rules where a column of
dashes is. Every size is a share of the glyphs' height, none in pixels.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

import numpy as np
from PIL import Image

from models.page_normalise import is_binary
from models.ppocr.components import component_boxes
from worker.core.types import Word

DASH_TEXT = "-"
DASH_CONFIDENCE = 0.8  # a shape read, not a recognised glyph
MIN_WIDTH = 0.2  # of the glyphs' height: a hyphen-minus is about half of it
MAX_WIDTH = 1.6  # an em dash is about one and a half
MAX_HEIGHT = 0.3  # a bar, not a letter
MIN_ASPECT = 1.6  # width over height (a 5 px dash turned with the page by a few degrees is 3 px high)
MIN_FILL = 0.5  # ink share of the bar's box: solid, not a scatter of specks
GLYPH = 0.55  # a mark taller than this share of the glyphs' height (and up to twice it) is a glyph
BESIDE = 1.0  # a dash has no mark on its line nearer than this many glyph heights: text, or a broken rule
OVER = 0.5  # nor a glyph this near above or below it: an underline, a strike-through
CORE = 0.2  # and it lies on a text line: within a glyph's height, less this share at either end
LINE_GLYPHS = 3  # a line of this many glyphs is text; with fewer, ...
RULE_PIECES = 4  # ... this many other bars at the bar's height make it a piece of a broken rule
RULE_PIECE = 3.0  # a flat mark this many glyph heights long is a rule or a piece of one ...
ON_RULE = 1.5  # ... and a bar within this many pixels of its height is another piece of it
DOT = 0.3  # a mark no bigger than this share of the glyphs' height either way is a dot ...
SCREEN_DOTS = 6  # ... and this many around a bar, within a glyph's height, make it part of a screen


def in_words(parts: np.ndarray, words: Sequence[Word], pad_y: float = 0.0) -> np.ndarray:
    """Which of the (n, 4) boxes `parts` have their centre inside some word's box, each box
    reaching `pad_y` further up and down (the OCR boxes a lone dash one or two pixels high: on
    a blurred crop the bar's centre fell just outside the box of the `-` it had read)."""
    if not len(parts) or not words:
        return np.zeros(len(parts), dtype=bool)
    boxes = np.array([w.bbox for w in words], dtype=np.float64)
    cx, cy = (parts[:, 0] + parts[:, 2]) / 2, (parts[:, 1] + parts[:, 3]) / 2
    inside = (
        (boxes[None, :, 0] <= cx[:, None])
        & (cx[:, None] <= boxes[None, :, 2])
        & (boxes[None, :, 1] - pad_y <= cy[:, None])
        & (cy[:, None] <= boxes[None, :, 3] + pad_y)
    )
    return np.asarray(inside.any(axis=1))


def glyph_height(parts: np.ndarray, words: Sequence[Word]) -> float | None:
    """The median ink height of the marks (`parts`, the crop's ink components) inside the OCR's
    words: the unit every threshold is in (word boxes are padded by the detector, so their own
    height overstates the text's)."""
    heights = parts[:, 3] - parts[:, 1]
    read = heights[(heights >= 3) & in_words(parts, words)]
    return float(median(read.tolist())) if len(read) >= 3 else None


def ink_mask(grey: np.ndarray) -> np.ndarray:
    """Ink: darker than halfway between the crop's paper and its ink (cell fills stay paper)."""
    paper = float(np.percentile(grey, 90))
    ink = float(np.percentile(grey, 1))
    if paper - ink < 40:  # no contrast to speak of: nothing is surely ink
        return np.zeros(grey.shape, dtype=bool)
    return grey < (paper + ink) / 2


def _bars(mask: np.ndarray, parts: np.ndarray, unit: float) -> tuple[np.ndarray, np.ndarray]:
    """The crop's dash-shaped marks and its glyph-sized ones among its ink components `parts`,
    as (n, 4) boxes each."""
    widths, heights = parts[:, 2] - parts[:, 0], parts[:, 3] - parts[:, 1]
    glyphs = parts[(heights > GLYPH * unit) & (heights <= 2 * unit)]
    shaped = (
        (widths >= MIN_WIDTH * unit)
        & (widths <= MAX_WIDTH * unit)
        & (heights <= max(2.0, MAX_HEIGHT * unit))
        & (widths >= MIN_ASPECT * heights)
    )
    bars = [b for b in parts[shaped] if mask[b[1] : b[3], b[0] : b[2]].mean() >= MIN_FILL]
    return np.array(bars, dtype=np.int64).reshape(-1, 4), glyphs


def _rule_levels(parts: np.ndarray, unit: float) -> np.ndarray:
    """The heights (y of their middles) of the flat marks longer than any dash: ruling lines,
    and the long pieces of rules a photocopy broke."""
    widths, heights = parts[:, 2] - parts[:, 0], parts[:, 3] - parts[:, 1]
    long = (widths >= RULE_PIECE * unit) & (heights <= max(2.0, MAX_HEIGHT * unit))
    return (parts[long, 1] + parts[long, 3]) / 2


def _alone(bar: np.ndarray, others: np.ndarray, unit: float) -> bool:
    """No other mark on the bar's line within `BESIDE` glyph heights, none just above or below it."""
    if not len(others):
        return True
    x0, y0, x1, y1 = (float(v) for v in bar)
    cy = (y0 + y1) / 2
    ox0, oy0, ox1, oy1 = (others[:, i].astype(np.float64) for i in range(4))
    same = (ox0 == x0) & (oy0 == y0) & (ox1 == x1) & (oy1 == y1)
    on_line = (oy1 > cy - unit / 2) & (oy0 < cy + unit / 2)
    gap_x = np.maximum(ox0 - x1, x0 - ox1)
    beside = on_line & (gap_x < BESIDE * unit)
    gap_y = np.maximum(oy0 - y1, y0 - oy1)
    over = (ox1 > x0) & (ox0 < x1) & (gap_y < OVER * unit)  # an underline's text, a strike's
    return not bool(((beside | over) & ~same).any())


def _on_a_line(bar: np.ndarray, glyphs: np.ndarray, bars: np.ndarray) -> bool:
    """Some glyph of the crop (the row's label, its other values) stands on the bar's height,
    as a dash set on a row's text line does; a piece of a broken rule lies between the lines.
    Where fewer than LINE_GLYPHS glyphs stand there and RULE_PIECES other bars lie at the same
    height, the bar is a piece of a broken rule that a stray mark happens to share a height with:
    on a photocopy a speck or a piece of the frame can sit at any height, and the dotted rules
    between rows then gave every value a stray dash."""
    if not len(glyphs):
        return False
    cy = (float(bar[1]) + float(bar[3])) / 2
    lo = glyphs[:, 1] + CORE * (glyphs[:, 3] - glyphs[:, 1])
    hi = glyphs[:, 3] - CORE * (glyphs[:, 3] - glyphs[:, 1])
    on_line = int(((lo <= cy) & (cy <= hi)).sum())
    if on_line >= LINE_GLYPHS:
        return True
    level = np.abs((bars[:, 1] + bars[:, 3]) / 2 - cy) <= 1.0
    return on_line > 0 and int(level.sum()) - 1 < RULE_PIECES


def _in_screen(bar: np.ndarray, parts: np.ndarray, unit: float) -> bool:
    """Dots all around the bar: it is a clump of a halftone screen (a shaded header band a
    photocopy dotted), not a dash set on paper. eu-017 p2's photocopy gave its header band
    eleven such dashes, and the columns split at them (5 columns read as 11). Asked of black and
    white crops only: a grey scan's grain is no screen, and on the noise scan the same rule took
    dashes out of eu-018 p1's grainy header band unevenly and its header rows ran together."""
    x0, y0, x1, y1 = (float(v) for v in bar)
    cy = (y0 + y1) / 2
    small = ((parts[:, 2] - parts[:, 0]) <= DOT * unit) & ((parts[:, 3] - parts[:, 1]) <= DOT * unit)
    px, py = (parts[:, 0] + parts[:, 2]) / 2, (parts[:, 1] + parts[:, 3]) / 2
    near = (px >= x0 - unit) & (px <= x1 + unit) & (np.abs(py - cy) <= unit)
    return int((small & near).sum()) >= SCREEN_DOTS


def _at_edge(bar: np.ndarray, size: tuple[int, int]) -> bool:
    """Whether the bar touches the crop's border: the crop cut it off whatever it belongs to (eu-026
    p5: the tops of a note's letters under the crop's last row of paper), so nothing says it is
    a dash on its own."""
    return bool(bar[0] <= 0 or bar[1] <= 0 or bar[2] >= size[0] or bar[3] >= size[1])


def placeholder_dashes(crop: Image.Image, words: Sequence[Word]) -> list[Word]:
    """A `-` word for every lone dash of the crop that no OCR word holds, boxed like a line of
    text around the bar so the grid builder deals it to its cell as any word."""
    if not words:
        return []
    mask = ink_mask(np.asarray(crop.convert("L")))
    parts = component_boxes(mask)
    unit = glyph_height(parts, words)
    if unit is None:
        return []
    bars, glyphs = _bars(mask, parts, unit)
    if not len(bars):
        return []
    screened = is_binary(crop)  # only a black-and-white copy prints a shade as a screen of dots
    others = np.concatenate([bars, glyphs])
    rules = _rule_levels(parts, unit)
    out: list[Word] = []
    for bar in bars[~in_words(bars, words, unit / 2)]:  # a bar inside a word was read, as part of it
        if _at_edge(bar, crop.size) or not _alone(bar, others, unit) or not _on_a_line(bar, glyphs, bars):
            continue
        if screened and _in_screen(bar, parts, unit):
            continue
        if len(rules) and np.abs(rules - (bar[1] + bar[3]) / 2).min() <= ON_RULE:
            continue  # a piece of a rule whose longer pieces lie at the same height
        cy = (bar[1] + bar[3]) / 2
        box = (float(bar[0]), max(0.0, cy - unit * 0.75), float(bar[2]), min(float(crop.height), cy + unit * 0.75))
        out.append(Word(DASH_TEXT, tuple(round(v, 2) for v in box), DASH_CONFIDENCE))  # type: ignore[arg-type]
    return out
