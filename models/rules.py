"""Ruling lines of a table image: the one detection both OCR (which erases them) and
reconstruction (which puts row and column boundaries on them) use.

A rule is a dark run at least `min_len` pixels long and at most `max_thickness` thick (so
glyph strokes, filled boxes and white-on-black headers are not rules). Plain data out:
`RulingLines` with the y of each horizontal and the x of each vertical rule.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from models.max_filter import max_filter
from worker.core.types import RulingLines

RULE_MIN_PX = 40  # 0.2 in at 200 dpi: longer than any glyph stroke of body text
RULE_MAX_THICKNESS_PX = 8
DARK = 160


def rule_masks(
    grey: np.ndarray, min_len: int = RULE_MIN_PX, max_thickness: int = RULE_MAX_THICKNESS_PX
) -> tuple[np.ndarray, np.ndarray]:
    """(horizontal, vertical) masks of the rule pixels of a greyscale array."""
    h_rules, v_rules, _, _ = rule_runs(grey, min_len, max_thickness)
    return h_rules, v_rules


def rule_runs(
    grey: np.ndarray, min_len: int = RULE_MIN_PX, max_thickness: int = RULE_MAX_THICKNESS_PX
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`rule_masks`, and the masks of the dark pixels in horizontal and in vertical runs of at
    least `min_len` they were found from (erasing rules needs them again: computed once)."""
    dark = grey < DARK
    long_h, long_v = runs(dark, min_len), runs(dark.T, min_len).T
    thick_v, thick_h = runs(dark.T, max_thickness + 1).T, runs(dark, max_thickness + 1)
    return long_h & ~thick_v, long_v & ~thick_h, long_h, long_v


def find_ruling_lines(
    image: Image.Image, min_len: int = RULE_MIN_PX, max_thickness: int = RULE_MAX_THICKNESS_PX
) -> RulingLines:
    """Centre positions of the horizontal and vertical rules of `image` (pixels of `image`).

    Rows (columns) of rule pixels next to each other are one rule; a rule counts when at
    least `min_len` of its pixels lie on one image row (column).
    """
    grey = np.asarray(image.convert("L"))
    h_mask, v_mask = rule_masks(grey, min_len, max_thickness)
    return RulingLines(_centres(h_mask.sum(axis=1), min_len), _centres(v_mask.sum(axis=0), min_len))


def rule_length(dpi: int) -> int:
    """The shortest ruling line at `dpi`, in pixels: a fifth of an inch (10 px at the least),
    longer than any letter's stroke in body text. The OCR engines take it for the dpi they are
    loaded for (INPUTS__DPI), not each run's (docs/speed.md, Round 8)."""
    return max(10, dpi // 5)


def crop_rules(crop: Image.Image, dpi: int) -> RulingLines:
    """The rules of a table crop rendered at `dpi` (`rule_length` long at least, so a letter's
    stroke never counts as one)."""
    return find_ruling_lines(crop, rule_length(dpi))


def _centres(counts: np.ndarray, min_len: int) -> tuple[float, ...]:
    on = counts >= min_len
    edges = np.flatnonzero(np.diff(np.concatenate([[0], on.astype(np.int8), [0]])))
    return tuple(round(float(a + b - 1) / 2, 1) for a, b in zip(edges[::2], edges[1::2]))


def runs(mask: np.ndarray, length: int) -> np.ndarray:
    """Pixels lying in a horizontal run of at least `length` True pixels.

    From the runs' ends, not a sliding window: each row gets a False pixel after it, so in the
    flattened mask every run starts where it steps up and ends where it steps down; the long
    runs are filled back by a cumulative sum of +1 at their starts and -1 at their ends. One-byte
    arrays and a few passes over the pixels: on a 300-dpi page this was a third of what a scan
    costs over a clean render (docs/speed.md, Round 10)."""
    height, width = mask.shape
    if length > width:
        return np.zeros_like(mask, dtype=bool)
    padded = np.zeros((height, width + 1), dtype=np.int8)
    padded[:, :width] = mask
    steps = np.diff(padded.ravel(), prepend=np.int8(0))
    starts, ends = np.flatnonzero(steps == 1), np.flatnonzero(steps == -1)
    long = (ends - starts) >= length
    fill = np.zeros(padded.size, dtype=np.int8)
    fill[starts[long]] = 1
    fill[ends[long]] = -1
    np.cumsum(fill, out=fill)
    return fill.reshape(height, width + 1)[:, :width].view(bool)


def dilate(mask: np.ndarray, size: int) -> np.ndarray:
    return max_filter(mask, size)  # as PIL's MaxFilter over the mask, without its k^2 reads a pixel
