"""Shaded and coloured cell fills flattened to white paper before OCR.

Header rows are often printed on a fill: white letters on an orange band, black letters on a
grey one. In grey levels such a fill sits between ink and paper, and OCR trained on dark ink on
white paper reads its letters as noise ("Dompstigg?>)" for "Domestic (%)"). Here each region of
flat fill is found on a coarse grid of blocks, its level estimated from the fill around it, and
every pixel in it rewritten as its contrast against the fill: the fill becomes white and its
letters dark, whichever way round they were printed. Pixels outside every fill are left as they
are, so a page without fills comes back unchanged.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from models.box_filters import between, box_sum
from models.dark_bands import invert_dark_bands

BLOCK = 4  # fill is judged on blocks of this many pixels a side
FILL_MIN, FILL_MAX = 40, 232  # a block this grey is neither paper nor ink ...
FILL_MAX_STD = 14.0  # ... and this flat is fill (text and edges vary far more inside a block)
GRAIN_FACTOR = 2.5  # ... or as flat as this many times the paper's own block spread (noisy scans)
MIN_FILL_BLOCKS = 24  # fewer fill blocks than this in an image is no fill worth flattening
CLOSE_BLOCKS = 4  # letters inside a fill: the fill mask is closed over this many blocks
LEVEL_BLOCKS = 6  # the fill level is the mean of fill blocks within this many blocks
MIN_CONTRAST = 24.0  # letters must differ from their fill by at least this many grey levels
MIN_NEAR_FILL = 8  # a region needs this many fill blocks around it (a lone grey block is a letter)
PAPER_PERCENTILE = 90  # the paper's level: this percentile of the block means (most of a crop is paper)
PAPER_MARGIN = 16.0  # a fill is darker than the paper by at least this: grey scanned paper is no fill
DARK_FILL = 200.0  # ... but a fill this dark is one even where it covers most of the crop


def flatten_fills(image: Image.Image) -> Image.Image:
    """`image` in grey with every flat fill turned to white and its letters to dark ink, and
    every dark band too (`models.dark_bands`: black and white at once, which no flat fill is)."""
    return Image.fromarray(invert_dark_bands(_flat_fills(np.asarray(image.convert("L")))))


def _flat_fills(pixels: np.ndarray) -> np.ndarray:
    """`pixels` (grey, uint8) with every flat fill turned to white and its letters to dark ink."""
    h, w = pixels.shape
    bh, bw = h // BLOCK, w // BLOCK
    if bh < 3 or bw < 3:
        return pixels
    mean, std = _block_stats(pixels[: bh * BLOCK, : bw * BLOCK], bh, bw)
    # paper scanned grey (office scans: 220-240) is not a fill: flattening it would turn its
    # noise, lighter than its level, into dark specks
    paper = float(np.percentile(mean, PAPER_PERCENTILE))
    upper = min(FILL_MAX, max(paper - PAPER_MARGIN, DARK_FILL))
    # sensor grain makes a fill as uneven as the paper around it: the flatness allowed grows with
    # the paper's own unevenness (a clean render's paper has none, and the limit stays as it was)
    grain = float(np.median(std[mean > upper])) if bool((mean > upper).any()) else 0.0
    fill = (mean >= FILL_MIN) & (mean <= upper) & (std <= max(FILL_MAX_STD, GRAIN_FACTOR * grain))
    if int(fill.sum()) < MIN_FILL_BLOCKS:
        return pixels
    # the fill's level near each block, from fill blocks only (a normalised box mean)
    count = box_sum(fill.astype(np.float32), LEVEL_BLOCKS)
    total = box_sum(np.where(fill, mean, 0.0).astype(np.float32), LEVEL_BLOCKS)
    level = np.where(count > 0, total / np.maximum(count, 1.0), 255.0)
    # letters inside a fill: blocks surrounded by fill on both sides, in rows or in columns
    near = box_sum(fill.astype(np.float32), CLOSE_BLOCKS) > 0
    region = fill | (near & between(fill, CLOSE_BLOCKS))
    region &= count >= MIN_NEAR_FILL
    if not region.any():
        return pixels
    grey = pixels.astype(np.float32)
    full_region = np.zeros((h, w), dtype=bool)
    full_level = np.full((h, w), 255.0, dtype=np.float32)
    full_region[: bh * BLOCK, : bw * BLOCK] = np.repeat(np.repeat(region, BLOCK, 0), BLOCK, 1)
    full_level[: bh * BLOCK, : bw * BLOCK] = np.repeat(np.repeat(level, BLOCK, 0), BLOCK, 1)
    lighter = grey > full_level
    span = np.where(lighter, 255.0 - full_level, full_level)  # how far ink can be from the fill
    span = np.maximum(span, MIN_CONTRAST)
    # grain is no letter: on a light fill, grain a little lighter than the fill would otherwise
    # come out as dark specks (little room between the fill and white)
    floor = GRAIN_FACTOR * grain
    contrast = np.clip((np.abs(grey - full_level) - floor) / np.maximum(span - floor, 1.0), 0.0, 1.0)
    out = np.where(full_region, 255.0 * (1.0 - contrast), grey)
    return out.astype(np.uint8)


def _block_stats(pixels: np.ndarray, bh: int, bw: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of each BLOCK x BLOCK block of a uint8 image, from exact
    integer sums of the levels and their squares over strided views (most crops have no fill and
    stop after this; a float copy of every pixel and two reductions over a 4-D view cost 5x more)."""
    n = float(BLOCK * BLOCK)  # blocks up to 16 x 16: their levels sum below 2**16, their squares below 2**32
    mean = _block_sums(pixels, np.uint16) / n
    variance = np.maximum(_block_sums(np.square(pixels, dtype=np.uint16), np.uint32) / n - mean * mean, 0.0)
    return mean.astype(np.float32), np.sqrt(variance).astype(np.float32)


def _block_sums(values: np.ndarray, dtype: type) -> np.ndarray:
    rows: np.ndarray = values[:, 0::BLOCK].astype(dtype)
    for k in range(1, BLOCK):
        rows += values[:, k::BLOCK]
    out = rows[0::BLOCK].copy()
    for k in range(1, BLOCK):
        out += rows[k::BLOCK]
    return out
