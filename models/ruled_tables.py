"""Ruled tables found on a page by their lines: a second, model-free table finder for scans.

The layout detector reads tables by their look (shaded headers, text texture). On a
black-and-white photocopy the shading is gone, the strokes are bolder and toner specks are
everywhere, and it drops tables or draws one box over two of them (docs/scans.md). The ruling
lines survive a photocopy: a grid of horizontal and vertical rules that cross one another is a
table whatever the detector thinks of its texture.

A grid is a set of horizontal and vertical rules, connected through their crossings, with at
least `MIN_H` horizontal and `MIN_V` vertical rules: more than a box drawn round a paragraph or
a figure's frame. Rules are found as in `models.rules` (long, thin dark runs), after one-pixel
gaps along a line are closed (a photocopy drops ink out of its rules).

numpy and PIL; plain data out (boxes in the page's pixels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from models.rules import DARK, RULE_MAX_THICKNESS_PX, runs

MIN_H = 3  # horizontal rules in a grid: a frame and at least one row line
MIN_V = 3  # vertical rules in a grid: a frame and at least one column line
CROSS_TOL = 3  # px: a rule reaching this close to another crosses it
MIN_WIDTH_IN, MIN_HEIGHT_IN = 1.0, 0.4  # smaller grids are logos, checkboxes, icons
MIN_ROW_PITCH_IN = 0.08  # rules closer on average than this (about a 6-pt line) are a chart's ...
MIN_COLUMN_PITCH_IN = 0.15  # ... gridlines, a halftone or a photo, not a table's rows and columns


@dataclass(frozen=True)
class Rule:
    """One rule: `at` is its y (horizontal) or x (vertical), `lo`-`hi` its extent along itself."""

    at: float
    lo: int
    hi: int


@dataclass(frozen=True)
class Grid:
    """A ruled table: its box (page pixels) and the rules it is made of."""

    box: tuple[float, float, float, float]
    horizontal: int
    vertical: int


def find_grids(image: Image.Image, dpi: int) -> list[Grid]:
    """Ruled grids on a page rendered or scanned at `dpi`, top to bottom."""
    grey = np.asarray(image.convert("L"))
    dark = grey < DARK
    min_len = max(10, dpi // 5)  # a fifth of an inch: longer than any stroke of body text
    h_rules = _rules(_close(dark), min_len)
    v_rules = _rules(_close(dark.T), min_len)
    return [g for g in _grids(h_rules, v_rules) if _table_like(g, dpi)]


def _table_like(grid: Grid, dpi: int) -> bool:
    """Big enough for a table, with rows and columns no denser than text allows."""
    x0, y0, x1, y1 = grid.box
    width, height = (x1 - x0) / dpi, (y1 - y0) / dpi
    if width < MIN_WIDTH_IN or height < MIN_HEIGHT_IN:
        return False
    return height / (grid.horizontal - 1) >= MIN_ROW_PITCH_IN and width / (grid.vertical - 1) >= MIN_COLUMN_PITCH_IN


def _close(mask: np.ndarray) -> np.ndarray:
    """One-pixel gaps along rows closed (ink drop-outs in a photocopied rule)."""
    out = mask.copy()
    out[:, 1:-1] |= mask[:, :-2] & mask[:, 2:]
    return out


def _rules(mask: np.ndarray, min_len: int) -> list[Rule]:
    """Horizontal rules of `mask` (transpose it for vertical ones): runs of at least `min_len`
    dark pixels on a row, joined with the runs overlapping them on the rows next to them, at
    most RULE_MAX_THICKNESS_PX rows thick (thicker dark areas are bars or fills, not rules)."""
    long = runs(mask, min_len)
    rules: list[Rule] = []
    open_: list[list[int]] = []  # [first row, last row, lo, hi] of lines still growing
    for y in range(long.shape[0]):
        row = long[y]
        if not row.any():
            segments: list[tuple[int, int]] = []
        else:
            edges = np.flatnonzero(np.diff(np.concatenate([[0], row.astype(np.int8), [0]])))
            segments = [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]
        grown: list[list[int]] = []
        used = [False] * len(open_)
        for a, b in segments:
            for i, line in enumerate(open_):
                if not used[i] and a < line[3] and line[2] < b:
                    used[i] = True
                    grown.append([line[0], y, min(a, line[2]), max(b, line[3])])
                    break
            else:
                grown.append([y, y, a, b])
        for i, line in enumerate(open_):
            if not used[i]:
                _close_line(line, rules)
        open_ = grown
    for line in open_:
        _close_line(line, rules)
    return rules


def _close_line(line: list[int], rules: list[Rule]) -> None:
    first, last, lo, hi = line
    if last - first + 1 <= RULE_MAX_THICKNESS_PX:
        rules.append(Rule((first + last) / 2, lo, hi))


def _crosses(h: Rule, v: Rule) -> bool:
    return h.lo - CROSS_TOL <= v.at <= h.hi + CROSS_TOL and v.lo - CROSS_TOL <= h.at <= v.hi + CROSS_TOL


def _grids(h_rules: list[Rule], v_rules: list[Rule]) -> list[Grid]:
    """Connected sets of crossing rules with enough of each kind, as grids."""
    parent = list(range(len(h_rules) + len(v_rules)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, h in enumerate(h_rules):
        for j, v in enumerate(v_rules):
            if _crosses(h, v):
                a, b = find(i), find(len(h_rules) + j)
                if a != b:
                    parent[a] = b
    groups: dict[int, tuple[list[Rule], list[Rule]]] = {}
    for i, h in enumerate(h_rules):
        groups.setdefault(find(i), ([], []))[0].append(h)
    for j, v in enumerate(v_rules):
        groups.setdefault(find(len(h_rules) + j), ([], []))[1].append(v)
    grids = []
    for hs, vs in groups.values():
        if len(hs) < MIN_H or len(vs) < MIN_V:
            continue
        x0 = min(min(h.lo for h in hs), min(v.at for v in vs))
        x1 = max(max(h.hi for h in hs), max(v.at for v in vs))
        y0 = min(min(v.lo for v in vs), min(h.at for h in hs))
        y1 = max(max(v.hi for v in vs), max(h.at for h in hs))
        grids.append(Grid((float(x0), float(y0), float(x1), float(y1)), len(hs), len(vs)))
    return sorted(grids, key=lambda g: (g.box[1], g.box[0]))


TRIM_WINDOW_IN = 0.1  # ink is weighed in strips this wide ...
TRIM_INK_IN2 = 0.004  # ... and a strip with less ink than this (square inches) is blank: a speck or two
TRIM_KEEP_IN = 0.05  # paper left beside the ink (about the detector's own margin round a table)
TRIM_MIN_BAND_IN = 0.25  # only a blank band this wide or wider is trimmed off


def trim_to_grid(
    image: Image.Image, box: tuple[float, float, float, float], grid: tuple[float, float, float, float], dpi: int
) -> tuple[float, float, float, float]:
    """`box` (holding `grid`) without the blank paper between its edges and the grid's: the
    detector drew a photocopied demo table's box twice as wide as its ruled frame, over empty
    paper dotted with specks. Outside the grid, a strip `TRIM_WINDOW_IN` wide is blank when it
    holds less than `TRIM_INK_IN2` of ink; the box keeps everything from its first inked strip
    in (a title or notes line beside the frame is kept), and never less than the grid. Only
    bands `TRIM_MIN_BAND_IN` wide or wider go: trimming the detector's usual few pixels of margin
    cost SLANet a spanning header on a JPEG page (docs/scans.md)."""
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    ink = np.asarray(image.convert("L").crop((x0, y0, x1, y1))) < DARK
    if ink.size == 0:
        return box
    window = max(2, round(TRIM_WINDOW_IN * dpi))
    mass, keep = TRIM_INK_IN2 * dpi * dpi, TRIM_KEEP_IN * dpi
    gx0, gy0, gx1, gy1 = grid[0] - x0, grid[1] - y0, grid[2] - x0, grid[3] - y0
    pad = RULE_MAX_THICKNESS_PX // 2  # the frame's own rules (the grid's box runs along their centres)
    ink[max(0, int(gy0) - pad) : max(0, int(gy1) + pad + 1), max(0, int(gx0) - pad) : max(0, int(gx1) + pad + 1)] = (
        False  # only ink outside the grid decides
    )
    left, right = _inked_from(ink.sum(axis=0), window, mass, gx0, gx1)
    top, bottom = _inked_from(ink.sum(axis=1), window, mass, gy0, gy1)
    edges = (
        max(box[0], min(grid[0], x0 + left - keep)),
        max(box[1], min(grid[1], y0 + top - keep)),
        min(box[2], max(grid[2], x0 + right + keep)),
        min(box[3], max(grid[3], y0 + bottom + keep)),
    )
    band = TRIM_MIN_BAND_IN * dpi  # a thinner band is the detector's own margin: SLANet reads crops with it
    return (
        edges[0] if edges[0] - box[0] >= band else box[0],
        edges[1] if edges[1] - box[1] >= band else box[1],
        edges[2] if box[2] - edges[2] >= band else box[2],
        edges[3] if box[3] - edges[3] >= band else box[3],
    )


def _inked_from(profile: np.ndarray, window: int, mass: float, lo: float, hi: float) -> tuple[float, float]:
    """The first and last positions of `profile` (ink per row or column) where a strip of
    `window` holds at least `mass`, searched outside [lo, hi] only (inside is the grid)."""
    sums = np.convolve(profile.astype(np.float64), np.ones(window), mode="same")
    inked = np.flatnonzero(sums >= mass)
    before, after = inked[inked < lo], inked[inked > hi]
    first = float(before[0]) - window / 2 if before.size else lo
    last = float(after[-1]) + window / 2 if after.size else hi
    return max(0.0, first), min(float(profile.size), last)
