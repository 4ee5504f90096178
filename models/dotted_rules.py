"""Dotted and broken horizontal rules in a page's ink, and the page with them drawn solid.

A photocopy thresholds a thin grey rule into dots and drops dots out of a black one. Two
readers of the page stumble on the dots: the aligned-text finder (`models.aligned_text`), whose
closing joins a dotted rule between two rows into one line, and the layout detector, which
reads a table partly by its rules. On eu-017 p2's photocopy (seed 1) the detector scored the
table 0.98 where a slightly different grey conversion of the same render had left its row
rules nearly whole, and found nothing where they came out dotted (docs/scans.md, Round 20).

A dotted rule is a thin run of ink, once gaps of up to `GAP_XH` x-heights are closed, at least
a rule long; the closing joins a line of text too, but letters stand an x-height high where a
rule is a dot high (`THICK_XH`). Everything is in units of the page's x-height, so no rule
depends on the resolution.

numpy and PIL; plain data out.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from models.page_normalise import estimate_x_height
from models.rules import runs

GAP_XH = 0.5  # a dotted rule's dots are at most this far apart ...
THICK_XH = 0.3  # ... and it is at most this thick (a letter is an x-height high)
RULE_XH = 6.0  # dark runs this long, along a row or a column, are rules or bars, not text
MIN_X_HEIGHT = 3.0  # pages whose text is smaller than this (px) are not read
MIN_FILLED = 2e-4  # a page whose dotted rules' gaps cover less than this share of it has none to draw


def ink_mask(image: Image.Image) -> np.ndarray:
    """Ink: pixels darker than half-way between the paper (the page's bright level) and the
    ink (the dark end of what is clearly darker than the paper)."""
    grey = np.asarray(image.convert("L"), dtype=np.int16)
    paper = float(np.percentile(grey, 90))
    darker = grey[grey < paper - 40]
    if darker.size == 0:
        return np.zeros(grey.shape, dtype=bool)
    ink = float(np.percentile(darker, 10))
    return grey < (paper + ink) / 2


def rule_length(x_height: float) -> int:
    """Pixels a run must reach to be a rule rather than a word, at this x-height."""
    return max(8, round(RULE_XH * x_height))


def dotted_rule_mask(dark: np.ndarray, x_height: float, length: int) -> np.ndarray:
    """The whole length of every dotted or broken horizontal rule in `dark`, its gaps included."""
    gap = max(1, round(GAP_XH * x_height))
    blank = ~dark
    closed = dark | (blank & ~runs(blank, gap + 1))
    thick = runs(np.ascontiguousarray(closed.T), max(2, round(THICK_XH * x_height)) + 1).T
    return runs(closed, length) & ~thick


def solid_rules(image: Image.Image) -> Image.Image | None:
    """`image` (a page, paper light) in grey with its dotted and broken horizontal rules drawn
    solid; None when it has none worth drawing (`MIN_FILLED`) or its text is too small to read."""
    x_height = estimate_x_height(image)
    if x_height < MIN_X_HEIGHT:
        return None
    dark = ink_mask(image)
    rules = dotted_rule_mask(dark, x_height, rule_length(x_height))
    if float((rules & ~dark).mean()) < MIN_FILLED:
        return None
    grey = np.array(image.convert("L"))
    grey[rules] = 0
    return Image.fromarray(grey)
