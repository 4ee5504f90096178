"""Bold labels on a light halftone screen, cleared of the screen's dots for a second read.

A photocopy of a header band shaded light grey comes out as a field of scattered black dots
with the labels printed over it. Where the labels are bold, the OCR's line detector still finds
no line there: the dots around every letter hide its edges, and every column's label is lost
with its column (photocopies, docs/scans.md, Round 31). An opening (a 3 x 3 minimum, then a
maximum) keeps every stroke at least three pixels wide and removes every lone dot and small
cluster, which a screen of a third ink or so is made of; the strokes are then grown back a
pixel or two through the ink they came from, so a letter's hairlines and joins return. Each
screen whose opening leaves strokes is given back as its box with the screen rewritten as
those strokes and its rules (long runs of ink) on white paper, for the OCR to read where it
read nothing the first time (`worker.pipeline.screen_labels`). A screen whose letters are thin (the
opening leaves next to nothing) is not given back. A dark one is (the ink between its white
letters survives the opening), but its labels were read the first time (`models.dark_bands`
inverts such a band), so the second read adds nothing there.

numpy only; a crop without a screen costs one screen test.
"""

from __future__ import annotations

import numpy as np

from models.halftone import MIN_SCREEN_SHARE, screen_mask
from models.max_filter import max_filter
from models.ppocr.components import component_boxes
from models.rules import runs

OPEN_SIZE = 3  # strokes this wide survive the opening; a screen's dots and clusters do not
GROW = 2  # the strokes are grown back this many pixels through the ink they were opened from
MIN_STROKES = 0.03  # a screen is given back when strokes cover this share of it (bold labels)
RULE_RUN = 15  # ink runs at least this long are rules (a third-ink screen never holds one)
MIN_AREA = 400  # screens smaller than this (a 20 x 20 px patch) hold no label worth reading

Box = tuple[int, int, int, int]


def bold_screens(grey: np.ndarray) -> list[tuple[Box, np.ndarray]]:
    """Each light screen of `grey` (a black-and-white crop, paper light) that holds bold
    strokes: its box (x0, y0, x1, y1) and the box's pixels (uint8) with the screen rewritten as
    those strokes and its rules on white; the pixels outside the screen as they were."""
    pixels = np.asarray(grey)
    ink = pixels < 128
    screen = screen_mask(ink)
    if screen.mean() < MIN_SCREEN_SHARE:
        return []
    strokes = opening(ink, OPEN_SIZE)
    rules = runs(ink, RULE_RUN) | runs(ink.T, RULE_RUN).T
    found: list[tuple[Box, np.ndarray]] = []
    for x0, y0, x1, y1 in component_boxes(screen):
        box = (int(x0), int(y0), int(x1), int(y1))
        region = screen[y0:y1, x0:x1]
        area = int(region.sum())
        if area < MIN_AREA:
            continue
        if float((strokes[y0:y1, x0:x1] & region & ~rules[y0:y1, x0:x1]).sum()) < MIN_STROKES * area:
            continue
        keep = _grown(strokes[y0:y1, x0:x1] | rules[y0:y1, x0:x1], ink[y0:y1, x0:x1], GROW)
        window = np.asarray(pixels[y0:y1, x0:x1], dtype=np.uint8).copy()
        window[region] = np.where(keep[region], 0, 255)
        found.append((box, window))
    return found


def opening(mask: np.ndarray, size: int) -> np.ndarray:
    """`mask` opened by a `size` x `size` square: what a square of that size fits inside."""
    eroded = max_filter((~mask).astype(np.uint8), size) == 0
    return max_filter(eroded.astype(np.uint8), size) > 0


def _grown(seed: np.ndarray, ink: np.ndarray, steps: int) -> np.ndarray:
    """`seed` grown `steps` pixels through `ink` (a geodesic dilation): the thin parts of a
    letter (a hairline, a join) that the opening took off come back from its thick strokes."""
    for _ in range(steps):
        seed = (max_filter(seed.astype(np.uint8), 3) > 0) & ink
    return seed
