"""Halftone screens in black-and-white crops read back as flat fill with letters on it.

A photocopier (or a thresholded scan) cannot print grey: a shaded header band comes out as a
screen of scattered dots, black on white for a light fill, white on black for a dark one. The
OCR reads such a band as noise, so the header's labels, and with them every value's column,
are lost (photocopies, docs/scans.md). A screen is told from text by its dots: pixels, black or
white, with at most one neighbour of their own colour among the eight around them. A screen is
full of them; a stroke's pixels have neighbours along the stroke, and paper has none. Inside a
screen (the letters it surrounds included) each pixel becomes its contrast against the screen's
own density: the fill turns white and its letters dark, whichever way round they were printed.
A screen no letters come out of (the threshold erased them) and pixels outside every screen are
left as they are.

numpy only; a crop without a screen costs a few box sums.
"""

from __future__ import annotations

import numpy as np

from models.box_filters import between, box_mean

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
    dotted, screen = _screen(ink)
    if screen.mean() < MIN_SCREEN_SHARE:
        return grey
    density = box_mean(ink, DOT_RADIUS)
    # the fill level from the dotted part alone: letters and the paper beyond the band would pull it
    fill = box_mean(ink & dotted, FILL_RADIUS) / np.maximum(box_mean(dotted, FILL_RADIUS), 1e-6)
    span = np.maximum(np.maximum(fill, 1.0 - fill), MIN_SPAN)
    contrast = np.abs(density - fill) / span
    letters = np.clip((contrast - LETTER_LOW) / (LETTER_HIGH - LETTER_LOW), 0.0, 1.0)
    if float((letters[screen] > 0.5).mean()) < MIN_LETTERS:
        return grey  # a band whose letters the threshold erased: blank paper would read no better
    out = np.asarray(grey, dtype=np.float32).copy()
    out[screen] = 255.0 * (1.0 - letters[screen])
    return out


def screen_mask(ink: np.ndarray) -> np.ndarray:
    """Where `ink` (True = dark) is a halftone screen, letters inside it included."""
    return _screen(ink)[1]


def _screen(ink: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The dotted part of the screens in `ink`, and the screens with the letters they surround."""
    ink = ink.astype(bool)
    paper = ~ink
    dots = (ink & (_neighbours(ink) <= MAX_DOT_NEIGHBOURS)) | (paper & (_neighbours(paper) <= MAX_DOT_NEIGHBOURS))
    hits = box_mean(dots, SCREEN_RADIUS) > MIN_DOTS
    dotted = box_mean(hits, REGION_RADIUS) > 0.5
    # letters: pixels with screen on both sides within CLOSE_RADIUS, across or down (a closing
    # would also fill the paper between a band and the crop's edge)
    return dotted, dotted | between(dotted, CLOSE_RADIUS)


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
