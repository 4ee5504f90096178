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

from models.dotted_rules import MIN_X_HEIGHT, dotted_rule_mask, ink_mask, rule_length
from models.page_normalise import estimate_x_height
from models.ppocr.components import component_boxes
from models.rules import runs
from worker.core.aligned_text import Region, aligned_regions
from worker.core.types import BBox

CLOSE_XH = 1.0  # gaps along a row this narrow are closed (a word space is about half an x-height)


def text_blobs(image: Image.Image, x_height: float | None = None) -> tuple[list[BBox], float]:
    """The page's text blobs (words and phrases) and the x-height they were measured with."""
    xh = estimate_x_height(image) if x_height is None else x_height
    if xh < MIN_X_HEIGHT:
        return [], xh
    dark = ink_mask(image)
    rule = rule_length(xh)
    dark &= ~runs(dark, rule) & ~runs(np.ascontiguousarray(dark.T), rule).T
    dark &= ~dotted_rule_mask(dark, xh, rule)  # a dotted rule closed would join the rows it parts
    gap = max(1, round(CLOSE_XH * xh))
    blank = ~dark
    closed = dark | (blank & ~runs(blank, gap + 1))  # runs of blank shorter than `gap` filled
    boxes = component_boxes(closed)
    h, w = closed.shape
    inner = (boxes[:, 0] > 0) & (boxes[:, 1] > 0) & (boxes[:, 2] < w) & (boxes[:, 3] < h)  # no text touches the edge
    return [(float(x0), float(y0), float(x1), float(y1)) for x0, y0, x1, y1 in boxes[inner].tolist()], xh


def find_aligned(image: Image.Image) -> tuple[list[Region], float]:
    """Aligned-text (unruled) table regions of a straight page, and its x-height."""
    blobs, xh = text_blobs(image)
    return aligned_regions(blobs, xh), xh
