"""Text under a ruled frame that runs across the frame's column rules, cut off the table's box.

A table boxed on all four sides ends at its bottom rule: a row of the table under it would sit in
the frame's columns, between its vertical rules. A line that runs across one of those rules (a
source note starting left of the frame, a paragraph under it) is the page's, not the table's.
When the detector's box reaches down over such a line, the structure model reads it as rows and
the scorer may not match the box at all (eu-007 p5 on a photocopy: a two-row boxed table whose
box took in the source line and specks under it, IoU 0.45 with the table). A line that keeps to
the columns (a totals row under the frame) is left in; so is anything above the frame (a
spanning header over a ruled body runs across the rules too).
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from models.page_normalise import wipe_specks
from models.prose_rules import MAX_LINE_IN, MIN_LINE_PX, ink_bands
from models.ruled_tables import close_gaps, crop_window
from models.rules import DARK, RULE_MAX_THICKNESS_PX, rule_length, runs

SIDE_FILL = 0.8  # a column dark over this share of the frame's height is one of its vertical rules
BOTTOM_FILL = 0.8  # the frame's bottom rule is dark over this share of its width
REACH_IN = 0.5  # ink this far either side of the frame is looked at (a line running out of it)
WORD_GAP_IN = 0.1  # gaps narrower than this join a line's ink into one run (word spaces do)


def cut_under_frame(
    image: Image.Image,
    box: tuple[float, float, float, float],
    frame: tuple[float, float, float, float],
    dpi: int,
    margins: tuple[float, float],
) -> tuple[float, float, float, float]:
    """`box` (holding the ruled `frame`) cut at the first line of text under the frame, inside its
    crop (which reaches `margins`, top and bottom, past the box), that runs across one of the
    frame's vertical rules; the crop then ends on the paper halfway between. Only a closed frame
    counts (a rule at both sides and along its bottom); the box never shrinks into the frame."""
    grey = np.asarray(image.convert("L"))
    h, w = grey.shape
    fx0, fy0, fx1, fy1 = (int(round(v)) for v in frame)
    if fx1 - fx0 < 4 or fy1 - fy0 < 4:
        return box
    rules = _column_rules(grey[fy0:fy1, max(0, fx0 - 2) : min(w, fx1 + 3)] < DARK)
    rules = [x + max(0, fx0 - 2) for x in rules]
    pad = RULE_MAX_THICKNESS_PX // 2
    closed = (
        any(abs(x - fx0) <= pad for x in rules)
        and any(abs(x - fx1) <= pad for x in rules)
        and _bottom_ruled(grey[max(0, fy1 - pad) : fy1 + pad + 1, fx0 : fx1 + 1] < DARK)
    )
    if not closed:
        return box
    _, crop_bottom, _, _ = crop_window(grey.shape, box, margins)
    start = min(h, fy1 + RULE_MAX_THICKNESS_PX)
    if crop_bottom <= start:
        return box
    reach = round(REACH_IN * dpi)
    xa, xb = max(0, fx0 - reach), min(w, fx1 + reach)
    strip = wipe_specks(grey[start:crop_bottom, xa:xb].astype(np.float32)) < DARK  # specks are no text
    strip &= ~runs(close_gaps(strip), rule_length(dpi))  # nor are rules
    last = 0  # the strip's rows down to here hold the table's own ink
    for a, b in _lines(strip, dpi):
        if _crosses(strip[a:b], [x - xa for x in rules], round(WORD_GAP_IN * dpi), b - a):
            cut = start + (last + a) / 2  # the paper halfway between the table and the line
            x0, y0, x1, y1 = box
            return (x0, y0, x1, min(y1, max(float(fy1), cut - margins[1])))
        last = b
    return box


def _column_rules(dark: np.ndarray) -> list[int]:
    """Centres of the columns of `dark` (a frame's rows) dark over SIDE_FILL of its height."""
    filled = close_gaps(dark.T).T.mean(axis=0) >= SIDE_FILL  # one-pixel drop-outs along a rule closed
    xs = np.flatnonzero(filled)
    if not xs.size:
        return []
    groups = np.split(xs, np.flatnonzero(np.diff(xs) > 1) + 1)
    return [int(round(g.mean())) for g in groups if len(g) <= RULE_MAX_THICKNESS_PX]


def _bottom_ruled(dark: np.ndarray) -> bool:
    """Whether some row of `dark` (the rows round a frame's bottom edge) is a rule across it."""
    return bool(dark.size) and float(close_gaps(dark).mean(axis=1).max()) >= BOTTOM_FILL


def _lines(text: np.ndarray, dpi: int) -> list[tuple[int, int]]:
    """Bands of rows (first, past-last) holding ink, lines of text by their height (as the
    prose cut tells them)."""
    return [(a, b) for a, b in ink_bands(text) if MIN_LINE_PX <= b - a <= MAX_LINE_IN * dpi]


def _crosses(line: np.ndarray, rules: list[int], gap: int, height: int) -> bool:
    """Whether a run of the line's ink (gaps under `gap` joined, at least two line heights long:
    a word, not a mark) reaches past a rule on both sides."""
    xs = np.flatnonzero(line.any(axis=0))
    if not xs.size:
        return False
    breaks = np.flatnonzero(np.diff(xs) > gap)
    pad = RULE_MAX_THICKNESS_PX
    for i, j in zip([0, *(breaks + 1)], [*breaks, len(xs) - 1]):
        u, v = int(xs[i]), int(xs[j])
        if v - u + 1 >= 2 * height and any(u < x - pad and v > x + pad for x in rules):
            return True
    return False
