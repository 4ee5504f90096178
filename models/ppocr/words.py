"""Words and their boxes out of a recognised line: the grid builder assigns words to cells.

The recogniser reads a whole line ("Margin of error (±)"), but a table line may cross several
cells, so it is cut into words at the space characters it emitted, and at silent gaps of more
than `GAP_FRAMES` frames between two characters (a cell gap the model did not spell as a
space). Each character was read on known output frames, one per 8 columns of the 48-px-high
line image, so a word's frames map back to crop columns. The cut between two words is put
half-way between their frames; inside its share of the line a word's box is then tightened to
the ink (dark columns) within two frames of its own, and to the rows of its own glyphs (not a
rule or the edge of the next line the line crop also holds), so boxes hug the glyphs as
tesseract's do.

A word's confidence is the mean probability of its glyphs, as PaddleOCR scores a line, but a
number's is never above that of its least sure digit or separator (`number_confidence`): one
wrong digit makes the whole value wrong, and a mean over sure digits hides the unsure one
("9157" read for "9187" on a photocopy). So the doubt the recogniser had reaches the cell and its marks
(`worker.core.doubt`).
"""

from __future__ import annotations

import numpy as np

from models.ppocr.components import component_boxes
from models.ppocr.recognise import Glyph, LineRead

GAP_FRAMES = 5  # ~0.8 line heights of silence between characters ends a word (as PaddleOCR's word boxes)
MIN_CONTRAST = 40  # grey levels between paper and ink below which boxes are not tightened
NEAR_FRAMES = 2  # a word's ink is looked for this many frames either side of its own frames
RULE_SHARE = 0.9  # a row of ink across this share of a word's columns is a rule, not a glyph
SIGNS = frozenset("-−–")  # what a minus before a number is read as
SIGN_BAR = 1.5  # a minus is at least this many times as wide as it is high; a speck is not
SIGN_SPREAD = 1.3  # ... and on a grey scan its darkness spreads this much wider than high (a blot: 1)
SOFT_SHARE = 0.3  # a mark with this share of its inked pixels half-tone has soft edges
ACCENT_GAP = 0.2  # ink this close (in glyph heights) above or below the glyphs is a dot or an accent
DIGITS = frozenset("0123456789")
NUMBER_GLYPHS = DIGITS | frozenset(".,%") | SIGNS  # the glyphs a number's value depends on


def split_glyphs(glyphs: tuple[Glyph, ...]) -> list[list[Glyph]]:
    """The glyphs of a line grouped into words: cut at spaces and at long silent gaps."""
    words: list[list[Glyph]] = []
    current: list[Glyph] = []
    for glyph in glyphs:
        if glyph.char.isspace():
            if current:
                words.append(current)
            current = []
            continue
        if current and glyph.first - current[-1].last > GAP_FRAMES:
            words.append(current)
            current = []
        current.append(glyph)
    if current:
        words.append(current)
    return words


def line_words(
    read: LineRead, box: tuple[float, float, float, float], grey: np.ndarray
) -> list[tuple[str, tuple[float, float, float, float], float]]:
    """(text, box, confidence) per word of `read`, boxes in the frame of `box` (the line's box
    in the image); `grey` is the line crop (h, w) used to tighten boxes to the ink."""
    groups = split_glyphs(read.glyphs)
    if not groups:
        return []
    x0, y0, x1, y1 = box
    width = grey.shape[1]
    fp = read.frame_px
    ink = _ink(grey)
    # a word's share of the line: up to the cut before the next word (see _cut)
    cuts = [0.0]
    for left, right in zip(groups, groups[1:]):
        cuts.append(_cut(ink, left[-1].last, right[0].first, fp))
    cuts.append(float(width))
    out = []
    for k, group in enumerate(groups):
        lo, hi = max(0, int(cuts[k])), min(width, int(np.ceil(cuts[k + 1])))
        est = (group[0].first * fp, (group[-1].last + 1) * fp)  # where the frames put it
        wx0, wx1 = max(lo, est[0] - fp), min(hi, est[1] + fp)
        wy0, wy1 = 0.0, float(grey.shape[0])
        # the ink near where the frames put the word, not anywhere in its share of the line:
        # on a noisy scan a dark pixel in the gap to the next word stretched the box over it
        near_lo, near_hi = max(lo, int(est[0] - NEAR_FRAMES * fp)), min(hi, int(np.ceil(est[1] + NEAR_FRAMES * fp)))
        if ink is not None and near_hi > near_lo:
            cols = np.flatnonzero(ink[:, near_lo:near_hi].any(axis=0))
            if cols.size:
                wx0, wx1 = near_lo + cols[0], near_lo + cols[-1] + 1
                rows = _glyph_rows(ink[:, int(wx0) : int(wx1)])
                if rows is not None:
                    wy0, wy1 = float(rows[0]), float(rows[1])
        if ink is not None:
            band = slice(int(wy0), int(np.ceil(wy1)))
            digits = _speck_sign_end(group, ink[band], int(wx0), int(wx1), grey[band])
            if digits is not None:
                group, wx0 = group[1:], digits
        text = "".join(g.char for g in group)
        conf = number_confidence(group)
        bbox = (x0 + float(wx0), y0 + wy0, min(x1, x0 + float(wx1)), min(y1, y0 + wy1))
        out.append((text, bbox, conf))
    return out


def number_confidence(group: list[Glyph]) -> float:
    """The mean glyph probability; for a word with a digit, at most that of its least sure digit,
    sign or separator (see the module docstring)."""
    conf = float(np.mean([g.prob for g in group]))
    if any(g.char in DIGITS for g in group):  # ASCII digits: `m²` holds no digit of a value
        conf = min(conf, min(g.prob for g in group if g.char in NUMBER_GLYPHS))
    return conf


def _blobs(ink: np.ndarray, x0: int, x1: int) -> list[tuple[int, int, int]]:
    """The connected marks of `ink` between columns `x0` and `x1`, left to right, as (start,
    end, height)."""
    boxes = component_boxes(np.asarray(ink[:, x0:x1]))
    return sorted((x0 + int(b[0]), x0 + int(b[2]), int(b[3] - b[1])) for b in boxes)


def _speck_sign_end(group: list[Glyph], ink: np.ndarray, x0: int, x1: int, grey: np.ndarray) -> int | None:
    """Where the digits start, when the minus read before a number is no minus at all (else
    None): a speck on a photocopy left of "1385" was read as "-1385", a confident wrong number.
    A minus or a dash is a stroke `SIGN_BAR` times as wide as it is high at least; a speck is
    about as high as it is wide. The marks before the first glyph as tall as half the word
    (the first digit) are looked at, left to right: a bar among them is the minus (a speck may
    stand beside a real one: an office scan's "-10.8"), and with none the sign goes. A sign
    whose ink runs on into the digits (no column of paper between) is kept. On a blurred scan
    a short minus thresholds to a 3 x 3 blot, but its grey still spreads sideways: where the
    mark's grey holds soft edges (`_soft`), the spread of its darkness decides (`_spread`)."""
    if len(group) < 2 or group[0].char not in SIGNS or not group[1].char.isdigit():
        return None
    blobs = _blobs(ink, x0, x1)
    for k, (start, end, height) in enumerate(blobs):
        if height > 0.5 * ink.shape[0]:  # the first digit
            return start if k > 0 else None
        if end - start >= SIGN_BAR * height:  # a bar: the minus
            return None
        if _soft(grey[:, start:end]):
            # the mark's grey up to its neighbours' ink: a blurred bar's fringe runs past its blot
            pad = height + 2
            lo = max(start - pad, blobs[k - 1][1] + 2 if k else 0)
            hi = min(end + pad, blobs[k + 1][0] - 2 if k + 1 < len(blobs) else grey.shape[1])
            if _spread(grey[:, lo:hi]) >= SIGN_SPREAD:
                return None  # a blurred bar
    return None


def _soft(window: np.ndarray) -> bool:
    """Whether a mark's pixels hold soft edges (a grey scan, blurred or antialiased), not the
    hard black and white of a photocopy, whose marks' shapes their pixels give exactly."""
    dark = float(window.max()) - window.astype(np.float32)
    contrast = float(dark.max())
    if contrast <= 0:
        return False
    inked = dark > 0.2 * contrast
    return bool((inked & (dark < 0.8 * contrast)).sum() >= SOFT_SHARE * inked.sum())


def _spread(window: np.ndarray) -> float:
    """How much wider than high the darkness of a mark spreads (the ratio of the standard
    deviations of its darkness across and down): about 1 for a blot, 1.4-1.5 for a blurred
    minus (dev eu-011 p3, eu-004 p4 on the blur scan)."""
    dark = np.clip(np.percentile(window, 95) - window.astype(np.float32), 0.0, None)
    total = float(dark.sum())
    if total <= 0:
        return 0.0
    ys, xs = np.mgrid[0 : window.shape[0], 0 : window.shape[1]]
    cx, cy = float((dark * xs).sum()) / total, float((dark * ys).sum()) / total
    var_x = float((dark * (xs - cx) ** 2).sum()) / total
    var_y = float((dark * (ys - cy) ** 2).sum()) / total
    return float(np.sqrt(var_x / var_y)) if var_y > 0 else float("inf")


def _glyph_rows(ink: np.ndarray) -> tuple[int, int] | None:
    """The rows (start, end) of a word's own glyphs in the ink under its columns: the heaviest
    run of inked rows, with the runs close enough to be a dot or an accent. A line crop can
    hold a rule and the edges of the lines above and below (a 12-px "kg/year" got a 32-px box
    over the rule and the next row's digits, and its row boundary moved past the value); rows
    inked nearly across the whole word are a rule, not glyphs, and ink at the crop's edge is the
    next line's, not a dot."""
    per_row = ink.sum(axis=1)
    if not per_row.any():
        return None
    glyph = per_row < RULE_SHARE * ink.shape[1]
    marked = (per_row > 0) & glyph
    if not marked.any():
        marked = per_row > 0  # the word is a dash or a bar itself
    edges = np.flatnonzero(np.diff(np.concatenate([[0], marked.astype(np.int8), [0]])))
    runs = list(zip(edges[::2].tolist(), edges[1::2].tolist()))
    best = max(runs, key=lambda r: int(per_row[r[0] : r[1]].sum()))
    lo, hi = best
    reach = max(1.0, ACCENT_GAP * (hi - lo))
    for a, b in sorted(runs, key=lambda r: -r[0]):  # runs above, nearest first
        if b <= lo and lo - b <= reach and a > 0:
            lo = a
    for a, b in sorted(runs):  # runs below, nearest first
        if a >= hi and a - hi <= reach and b < len(per_row):
            hi = b
    return lo, hi


def _cut(ink: np.ndarray | None, left: int, right: int, fp: float) -> float:
    """Where to cut between a word ending on frame `left` and one starting on frame `right`:
    the middle of the widest ink-free run of columns between the two frames' centres (CTC
    frames lag or lead the glyphs by a frame or so), else half-way between the frames."""
    fallback = (left + 1 + right) / 2 * fp
    if ink is None:
        return fallback
    lo, hi = int((left + 0.5) * fp), int(np.ceil((right + 0.5) * fp))
    hi = min(hi, ink.shape[1])
    if hi - lo < 2:
        return fallback
    blank = ~ink[:, lo:hi].any(axis=0)
    if not blank.any():
        return fallback
    edges = np.flatnonzero(np.diff(np.concatenate([[0], blank.astype(np.int8), [0]])))
    starts, ends = edges[::2], edges[1::2]
    k = int(np.argmax(ends - starts))
    return lo + (starts[k] + ends[k]) / 2


def _ink(grey: np.ndarray) -> np.ndarray | None:
    """Dark pixels of a line crop (half-way between paper and ink), or None when the crop
    has too little contrast to tell."""
    if grey.size == 0:
        return None
    paper, dark = np.percentile(grey, 90), np.percentile(grey, 2)
    if paper - dark < MIN_CONTRAST:
        return None
    return grey < (paper + dark) / 2
