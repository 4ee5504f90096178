"""Halftone screens in black-and-white crops read back as flat fill with letters on it.

A photocopier (or a thresholded scan) cannot print grey: a shaded header band comes out as a
screen of scattered dots, black on white for a light fill, white on black for a dark one. The
OCR reads such a band as noise, so the header's labels, and with them every value's column,
are lost (photocopies, docs/scans.md). A screen is told from text by its dots: pixels,
black or white, with at most one neighbour of their own colour among the eight around them. A
screen is full of them; a stroke's pixels have neighbours along the stroke, and paper has none. Inside a screen (its
holes, the letters, closed over) each pixel becomes its contrast against the screen's local
density: the fill turns white and its letters dark, whichever way round they were printed.
Pixels outside every screen are left as they are.

numpy only; a crop without a screen costs a few box sums.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SCREEN_RADIUS = 7  # a screen is judged over (2 * 7 + 1) px squares: several dots, less than a row
MAX_DOT_NEIGHBOURS = 1  # a dot has at most this many neighbours of its own colour
MIN_DOTS = 0.02  # a screen has more dots of either colour than this per pixel (text on paper: specks)
REGION_RADIUS = 6  # the screen mask is a majority over these squares (lone hits are no screen)
CLOSE_RADIUS = 16  # letters inside a screen: pixels with screen on both sides within 16 px
MIN_SCREEN_SHARE = 0.01  # less screen than this share of a crop is left alone
FILL_RADIUS = 12  # the screen's density (its fill level) is measured over these squares ...
DOT_RADIUS = 1  # ... and each pixel's over these (3 x 3: a stroke, not a dot)
LETTER_LOW, LETTER_HIGH = 0.45, 0.75  # contrast against the fill: below is fill, above is letter (thin strokes)
MIN_LETTERS = 0.025  # a screen holds letters on this share of it (dev crops: 4-11% legible, 1-2% erased)
MIN_SPAN = 0.3  # the contrast's scale never falls below this density (a near-empty screen)


def descreen(grey: np.ndarray) -> np.ndarray:
    """`grey` (a black-and-white crop, float or uint8, paper light) with every screen turned
    into white paper and its letters into dark ink; the same array back when it holds none."""
    ink = np.asarray(grey) < 128
    dots, screen = screen_mask(ink, with_dots=True)
    if screen.mean() < MIN_SCREEN_SHARE:
        return grey
    density = _box_mean(ink, DOT_RADIUS)
    # the fill level from the dots alone: letters and the paper beyond the band would pull it
    fill = _box_mean(ink & dots, FILL_RADIUS) / np.maximum(_box_mean(dots, FILL_RADIUS), 1e-6)
    span = np.maximum(np.maximum(fill, 1.0 - fill), MIN_SPAN)
    contrast = np.abs(density - fill) / span
    letters = np.clip((contrast - LETTER_LOW) / (LETTER_HIGH - LETTER_LOW), 0.0, 1.0)
    if float((letters[screen] > 0.5).mean()) < MIN_LETTERS:
        return grey  # a band whose letters the threshold erased: blank paper would read no better
    out = np.asarray(grey, dtype=np.float32).copy()
    out[screen] = 255.0 * (1.0 - letters[screen])
    return out


def screen_mask(ink: np.ndarray, with_dots: bool = False) -> Any:
    """Where `ink` (True = dark) is a halftone screen, letters inside it included (with
    `with_dots`: the dotted part alone, and that mask)."""
    ink = ink.astype(bool)
    paper = ~ink
    dots = (ink & (_neighbours(ink) <= MAX_DOT_NEIGHBOURS)) | (paper & (_neighbours(paper) <= MAX_DOT_NEIGHBOURS))
    hits = _box_mean(dots, SCREEN_RADIUS) > MIN_DOTS
    region = _box_mean(hits, REGION_RADIUS) > 0.5
    if not region.any():
        return (region, region) if with_dots else region
    # letters: pixels with screen on both sides within CLOSE_RADIUS, across or down (a closing
    # would also fill the paper between a band and the crop's edge)
    screen = region | _between(region, CLOSE_RADIUS, axis=0) | _between(region, CLOSE_RADIUS, axis=1)
    return (region, screen) if with_dots else screen


def _between(mask: np.ndarray, radius: int, axis: int) -> np.ndarray:
    """Pixels with a set pixel within `radius` before them and one within `radius` after them
    along `axis`."""
    n = mask.shape[axis]
    prefix = np.cumsum(mask, axis=axis, dtype=np.int32)  # prefix[i]: set pixels in [0, i]
    prefix = np.concatenate([np.zeros_like(prefix.take([0], axis=axis)), prefix], axis=axis)

    def count(start: np.ndarray, stop: np.ndarray) -> np.ndarray:  # set pixels in [start, stop)
        return prefix.take(np.clip(stop, 0, n), axis=axis) - prefix.take(np.clip(start, 0, n), axis=axis)

    index = np.arange(n)
    return (count(index - radius, index) > 0) & (count(index + 1, index + radius + 1) > 0)


def _neighbours(mask: np.ndarray) -> np.ndarray:
    """How many of the eight pixels around each pixel are set."""
    h, w = mask.shape
    padded = np.zeros((h + 2, w + 2), dtype=np.uint8)
    padded[1:-1, 1:-1] = mask
    count = np.zeros((h, w), dtype=np.uint8)
    for dy in (0, 1, 2):
        for dx in (0, 1, 2):
            if dy != 1 or dx != 1:
                count += padded[dy : dy + h, dx : dx + w]
    return count


def _box_mean(values: np.ndarray, radius: int) -> np.ndarray:
    """Mean over the (2 * radius + 1) square around each pixel, edges repeated (an integral image
    in float64: exact for any crop a page holds)."""
    k = 2 * radius + 1
    padded = np.pad(values.astype(np.float64), radius, mode="edge")
    integral = np.zeros((padded.shape[0] + 1, padded.shape[1] + 1))
    np.cumsum(np.cumsum(padded, axis=0), axis=1, out=integral[1:, 1:])
    sums = integral[k:, k:] - integral[:-k, k:] - integral[k:, :-k] + integral[:-k, :-k]
    return (sums / (k * k)).astype(np.float32)
