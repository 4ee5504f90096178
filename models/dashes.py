"""Placeholder dashes the OCR cannot see, read from the pixels of empty cells.

Statistical tables mark a missing value with a lone dash ("-", "–"). At scan resolutions it
is a bar one or two pixels tall, thinner than the smallest text kernel PP-OCR's detector
keeps (DB post-processing drops kernels under 3 px on their short side, as PaddleOCR does),
so the cell came out empty: on four dev pages a quarter of the ground truth's values were such
dashes, every one lost. An empty value and a dash are not the same answer ("not applicable"
against "not read"), and the label-binding measure counts the difference.

Only cells the grid left empty are looked at, and a dash is accepted only where it is the
cell's one mark: a solid bar, much wider than tall, short against the table's text height,
clear of the cell's edges (ink reaching them is the cell's frame: ruling lines, a fill's
border), and the only mark there bigger than a speck (a broken rule leaves several pieces).
Every size is a share of the table's text height, none in pixels.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

import numpy as np
from PIL import Image

from models.ppocr.components import component_boxes
from worker.core.types import BBox, Cell, Word

DASH_TEXT = "-"
DASH_CONFIDENCE = 0.8  # a shape read, not a recognised glyph
MIN_WIDTH = 0.2  # of the text height: a hyphen-minus is about a third of it
MAX_WIDTH = 1.5  # an em dash is about one
MAX_HEIGHT = 0.3  # a bar, not a letter
MIN_ASPECT = 2.0  # width over height
MIN_FILL = 0.5  # ink share of the bar's box: solid, not a scatter of specks
SPECK = 0.15  # components whose sides are all under this share of the text height are specks
INSET = 0.1  # the cell's edges (and a ruling line on them) are left out by this share of the text height


def text_height(words: Sequence[Word]) -> float | None:
    """The median height of the table's word boxes: the unit every threshold is in."""
    heights = [w.bbox[3] - w.bbox[1] for w in words if w.bbox[3] > w.bbox[1]]
    return float(median(heights)) if heights else None


def ink_mask(grey: np.ndarray) -> np.ndarray:
    """Ink: darker than halfway between the crop's paper and its ink (cell fills stay paper)."""
    paper = float(np.percentile(grey, 90))
    ink = float(np.percentile(grey, 1))
    if paper - ink < 40:  # no contrast to speak of: nothing is surely ink
        return np.zeros(grey.shape, dtype=bool)
    return grey < (paper + ink) / 2


def dash_in(mask: np.ndarray, box: BBox, unit: float) -> BBox | None:
    """The box (crop pixels) of the one dash inside `box`, or None when the cell holds none."""
    inset = max(1, round(INSET * unit))
    h, w = mask.shape
    x0, y0 = max(0, int(box[0]) + inset), max(0, int(box[1]) + inset)
    x1, y1 = min(w, int(np.ceil(box[2])) - inset), min(h, int(np.ceil(box[3])) - inset)
    if x1 - x0 < 3 or y1 - y0 < 2:
        return None
    window = mask[y0:y1, x0:x1]
    if not window.any():
        return None
    parts = component_boxes(window)
    # what reaches the cell's edge is its frame (ruling lines, a fill's border), not its content
    inner = (parts[:, 0] > 0) & (parts[:, 1] > 0) & (parts[:, 2] < window.shape[1]) & (parts[:, 3] < window.shape[0])
    sides = np.maximum(parts[:, 2] - parts[:, 0], parts[:, 3] - parts[:, 1])
    marks = parts[inner & (sides >= max(2.0, SPECK * unit))]
    if len(marks) != 1:
        return None
    a, b, c, d = (int(v) for v in marks[0])
    bw, bh = c - a, d - b
    if not (MIN_WIDTH * unit <= bw <= MAX_WIDTH * unit and bh <= max(2.0, MAX_HEIGHT * unit)):
        return None
    if bw < MIN_ASPECT * bh or window[b:d, a:c].mean() < MIN_FILL:
        return None
    return (float(x0 + a), float(y0 + b), float(x0 + c), float(y0 + d))


def placeholder_dashes(crop: Image.Image, cells: Sequence[Cell], words: Sequence[Word]) -> list[Word]:
    """A `-` word for every empty body cell of `cells` (crop pixels) whose one mark is a dash.

    The words come back sized like a line of text around the bar, so the grid builder places
    them as it would a word the OCR read."""
    unit = text_height(words)
    empty = [c for c in cells if not c.text.strip() and not c.is_header and c.bbox is not None]
    if unit is None or not empty:
        return []
    mask = ink_mask(np.asarray(crop.convert("L")))
    out: list[Word] = []
    for cell in empty:
        assert cell.bbox is not None
        found = dash_in(mask, cell.bbox, unit)
        if found is None:
            continue
        cy = (found[1] + found[3]) / 2
        half = min(unit / 2, (cell.bbox[3] - cell.bbox[1]) / 2)
        bbox = (found[0], max(cell.bbox[1], cy - half), found[2], min(cell.bbox[3], cy + half))
        out.append(Word(DASH_TEXT, tuple(round(v, 2) for v in bbox), DASH_CONFIDENCE))  # type: ignore[arg-type]
    return out
