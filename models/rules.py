"""Ruling lines of a table image: the one detection both OCR (which erases them) and
reconstruction (which puts row and column boundaries on them) use.

A rule is a dark run at least `min_len` pixels long and at most `max_thickness` thick (so
glyph strokes, filled boxes and white-on-black headers are not rules); a vertical one may also
be a thin line a photocopy broke into shorter pieces (`bridged_runs`). Plain data out:
`RulingLines` with the y of each horizontal and the x of each vertical rule.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from PIL import Image

from models.box_filters import box_mean
from models.max_filter import max_filter
from worker.core.types import RulingLines

RULE_MIN_PX = 40  # 0.2 in at 200 dpi: longer than any glyph stroke of body text
RULE_MAX_THICKNESS_PX = 8
DARK = 160
FILL_RADIUS, FILL_SHARE = 3, 0.85  # ink covering this share of the 7 px square round it is a fill
DROPOUT_GAP = 3  # px: pieces of a drawn rule this close are one (a photocopy's drop-outs)
LINE_INK, LINE_ALONE = 0.85, 0.8  # a bridged line: its share inked, and its ink's share with paper beside


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
    long_h, long_v = runs(dark, min_len), bridged_runs(dark.T, min_len, DROPOUT_GAP).T
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
    dark = grey < DARK
    h_mask, v_mask, _, _ = rule_runs(grey, min_len, max_thickness)
    h_bands, v_bands = _bands(h_mask.sum(axis=1), min_len), _bands(v_mask.sum(axis=0), min_len)
    # where a rule is drawn: runs of ink on its rows (and a pixel beside them, for a rule that
    # wavers) half `min_len` long, so a rule a photocopy broke into pieces shorter than `min_len`
    # is still drawn there, while a letter's stem standing on the line is too short and a shaded
    # fill (ink all round, where a rule or a letter leaves paper beside it) does not count
    piece = max(2, min_len // 2)
    return RulingLines(
        tuple(round((a + b - 1) / 2, 1) for a, b in h_bands),
        tuple(round((a + b - 1) / 2, 1) for a, b in v_bands),
        tuple(_stretches(_ink_on(dark, a, b), piece) for a, b in h_bands),
        tuple(_stretches(_ink_on(dark.T, a, b), piece) for a, b in v_bands),
    )


def _ink_on(dark: np.ndarray, a: int, b: int) -> np.ndarray:
    """Per column, whether rows `a`..`b` of `dark` (a rule's, and a row either side) hold ink
    that is no shaded fill's. The fill test (ink all round) runs on those rows only, not the
    whole crop: a 300-dpi crop's box mean cost a tenth of a second a table."""
    lo, hi = max(0, a - 1), min(dark.shape[0], b + 1)
    top, bottom = max(0, lo - FILL_RADIUS), min(dark.shape[0], hi + FILL_RADIUS)
    strip = dark[top:bottom]
    fill = box_mean(strip, FILL_RADIUS) >= FILL_SHARE
    return np.any((strip & ~fill)[lo - top : hi - top], axis=0)


def rule_length(dpi: int) -> int:
    """The shortest ruling line at `dpi`, in pixels: a fifth of an inch (10 px at the least),
    longer than any letter's stroke in body text. The OCR engines take it for the dpi they are
    loaded for (INPUTS__DPI), not each run's (docs/speed.md, Round 8)."""
    return max(10, dpi // 5)


def crop_rules(crop: Image.Image, dpi: int) -> RulingLines:
    """The rules of a table crop rendered at `dpi` (`rule_length` long at least, so a letter's
    stroke never counts as one)."""
    return find_ruling_lines(crop, rule_length(dpi))


def _bands(counts: np.ndarray, min_len: int) -> list[tuple[int, int]]:
    """(first, past-last) of each run of image rows (columns) holding a rule."""
    return run_bounds(counts >= min_len)


def run_bounds(on: npt.ArrayLike) -> list[tuple[int, int]]:
    """(first, past-last) of each run of True in a 1-D mask."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], np.asarray(on).astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]


def _stretches(on: np.ndarray, piece: int) -> tuple[tuple[float, float], ...]:
    """Where along its length a rule is drawn: (from, to) of each run of its pixels at least
    `piece` long, runs at most DROPOUT_GAP apart joined (a drop-out in the ink is no gap).
    Runs one pixel apart are one run before their length is judged: a photocopy's drop-outs
    break a thin rule's end into pieces shorter than `piece`."""
    out: list[tuple[float, float]] = []
    pieces: list[tuple[int, int]] = []
    for a, b in run_bounds(on):
        if pieces and a - pieces[-1][1] <= 1:
            pieces[-1] = (pieces[-1][0], b)
        else:
            pieces.append((a, b))
    for a, b in pieces:
        if b - a < piece:
            continue
        if out and a - out[-1][1] <= DROPOUT_GAP:
            out[-1] = (out[-1][0], float(b))
        else:
            out.append((float(a), float(b)))
    return tuple(out)


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


def bridged_runs(mask: np.ndarray, length: int, gap: int) -> np.ndarray:
    """`runs(mask, length)`, and the pixels of `mask` in thin lines at least `length` long once
    gaps of at most `gap` pixels in them are bridged. Vertical rules are found this way (on the
    transposed mask): a photocopy breaks a one-pixel rule into pieces shorter than a rule, a
    few pixels apart. A bridged line counts where it is ink along LINE_INK of its length and
    has paper two pixels to each side along LINE_ALONE of it: letters stacked over the rules
    between dense rows, and a dithered fill, bridge just as well but are neither (eu-020 p3's
    photocopy). Horizontal rules are not bridged: along a text line, serifs join letters
    across gaps this small."""
    plain = runs(mask, length)
    if gap <= 0:
        return plain
    alone = mask.copy()
    alone[2:] &= ~mask[:-2]
    alone[:-2] &= ~mask[2:]
    alone[:2] = alone[-2:] = False
    # only lines with paper beside enough of their ink can hold one (a few on most crops)
    rows = np.flatnonzero(alone.sum(axis=1) >= LINE_ALONE * LINE_INK * length)
    if not len(rows):
        return plain
    sub, beside = mask[rows], alone[rows]
    closed = sub | (~sub & ~runs(~sub, gap + 1))  # short runs of paper bridged
    height, width = sub.shape
    padded = np.zeros((height, width + 1), dtype=np.int8)
    padded[:, :width] = closed
    steps = np.diff(padded.ravel(), prepend=np.int8(0))
    starts, ends = np.flatnonzero(steps == 1), np.flatnonzero(steps == -1)
    long = (ends - starts) >= length
    starts, ends = starts[long], ends[long]

    def count(values: np.ndarray) -> np.ndarray:  # True pixels of `values` in each run
        flat = np.zeros((height, width + 1), dtype=bool)
        flat[:, :width] = values
        total = np.concatenate([[0], np.cumsum(flat.ravel(), dtype=np.int32)])
        return total[ends] - total[starts]

    ink = count(sub)
    keep = (ink >= LINE_INK * (ends - starts)) & (count(beside) >= LINE_ALONE * ink)
    fill = np.zeros(padded.size + 1, dtype=np.int8)
    fill[starts[keep]] = 1
    fill[ends[keep]] = -1
    lines = np.cumsum(fill[:-1], dtype=np.int8).reshape(height, width + 1)[:, :width].view(bool)
    out = plain.copy()
    out[rows] |= lines & sub
    return out


def dilate(mask: np.ndarray, size: int) -> np.ndarray:
    return max_filter(mask, size)  # as PIL's MaxFilter over the mask, without its k^2 reads a pixel
