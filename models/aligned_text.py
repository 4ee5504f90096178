"""Text blobs of a page, for the aligned-text table finder (`worker.core.aligned_text`).

No model: the page is binarised half-way between its paper and its ink (so a blurred or grey
scan binarises like a clean one), long rules and bars are set aside (they join a table's
cells into one blob), gaps along a row narrower than `CLOSE_XH` x-heights are closed (letters
join into words, words into phrases; column gutters stay open), and the connected regions
are the blobs, but those touching the page's edge (a scan's dark border, specks cut off).
Everything is in units of the page's x-height (`estimate_x_height`).

numpy and PIL; plain data out (boxes in the page's pixels).
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from models.page_normalise import estimate_x_height
from models.ppocr.components import component_boxes
from models.rules import runs
from worker.core.aligned_text import Region, aligned_regions
from worker.core.types import BBox

CLOSE_XH = 1.0  # gaps along a row this narrow are closed (a word space is about half an x-height)
RULE_XH = 6.0  # dark runs this long, along a row or a column, are rules or bars, not text
MIN_X_HEIGHT = 3.0  # pages whose text is smaller than this (px) are not read
DOT_GAP_XH = 0.5  # a dotted rule's dots are at most this far apart ...
DOT_THICK_XH = 0.3  # ... and it is at most this thick (a letter is an x-height high)


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


def text_blobs(image: Image.Image, x_height: float | None = None) -> tuple[list[BBox], float]:
    """The page's text blobs (words and phrases) and the x-height they were measured with."""
    xh = estimate_x_height(image) if x_height is None else x_height
    if xh < MIN_X_HEIGHT:
        return [], xh
    dark = ink_mask(image)
    rule = max(8, round(RULE_XH * xh))
    dark &= ~runs(dark, rule) & ~runs(np.ascontiguousarray(dark.T), rule).T
    dark &= ~dotted_rules(dark, xh, rule)
    gap = max(1, round(CLOSE_XH * xh))
    blank = ~dark
    closed = dark | (blank & ~runs(blank, gap + 1))  # runs of blank shorter than `gap` filled
    boxes = component_boxes(closed)
    h, w = closed.shape
    inner = (boxes[:, 0] > 0) & (boxes[:, 1] > 0) & (boxes[:, 2] < w) & (boxes[:, 3] < h)  # no text touches the edge
    return [(float(x0), float(y0), float(x1), float(y1)) for x0, y0, x1, y1 in boxes[inner].tolist()], xh


def dotted_rules(dark: np.ndarray, x_height: float, length: int) -> np.ndarray:
    """The pixels of dotted or broken horizontal rules (a photocopy breaks plain ones): thin
    runs, once gaps of up to `DOT_GAP_XH` x-heights are closed, at least `length` long. The
    closing joins a line of text too, but its letters are as high as an x-height where a
    rule is a dot high; closed, a dotted rule between rows joined their cells into one line."""
    gap = max(1, round(DOT_GAP_XH * x_height))
    blank = ~dark
    closed = dark | (blank & ~runs(blank, gap + 1))
    thick = runs(np.ascontiguousarray(closed.T), max(2, round(DOT_THICK_XH * x_height)) + 1).T
    return dark & runs(closed, length) & ~thick


def find_aligned(image: Image.Image) -> tuple[list[Region], float]:
    """Aligned-text (unruled) table regions of a straight page, and its x-height."""
    blobs, xh = text_blobs(image)
    return aligned_regions(blobs, xh), xh
