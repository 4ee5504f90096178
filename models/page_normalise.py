"""Page normalisation before detection: orientation, deskew and (optionally) a flat background.

A scanned page comes in turned (fed sideways or upside down), skewed by a degree or two, on
grey or uneven paper. The detector, the structure model and the OCR all read upright,
straight, white pages best, so the page is made so first, and the map back is kept
(`worker.core.page_transform.PageTransform`): every stored box stays in the coordinates of the
page as it came in.

- Orientation: tesseract's orientation and script detection (`--psm 0`) on a reduced copy of
  the page; a turn is applied only when tesseract is confident of it.
- Skew: the angle that makes the horizontal projection of the ink sharpest. Text lines and
  ruling lines both line up into peaks when straight; the sum of squared row counts is largest
  there. A coarse search, a fine one, and a parabola through the best three give a tenth of a
  degree on ordinary pages (tests/test_page_normalise.py).
- Clean (`clean_page`, for the detector's input only): a contrast stretch that maps the paper
  to white and the darkest ink to black, and isolated specks (dust, toner dots: dark blobs with
  no ink around them) wiped. The layout detector reads grey paper and scattered specks as table
  texture; the structure model and the OCR read the page as normalised, which scored higher
  than the cleaned page on clean pages (docs/scans.md).
- Background: the page divided by a smooth estimate of its paper (grey, tinted or unevenly
  lit paper becomes white; ink stays dark). Off by default: see docs/scans.md for what it does.

numpy, PIL and the tesseract binary; plain data out.
"""

from __future__ import annotations

import logging
import math
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageFilter

from models.box_filters import box_count
from models.dark_bands import invert_dark_bands
from models.max_filter import max_filter
from worker.core.page_transform import (
    IDENTITY,
    Affine,
    PageTransform,
    compose,
    invert,
    map_box,
    quarter_turn,
    rotation,
    scaling,
    translation,
)

log = logging.getLogger(__name__)

REFERENCE_DPI = 144  # the blur gate is in pixels at this resolution: the models read pages resized to about it
SKEW_WORK_SIDE = 1600  # the skew search runs on a copy this long (0.1 deg = 2.8 px over its width)
OSD_WORK_SIDE = 1400  # tesseract's OSD reads a copy this long (its time grows with the pixels)
MAX_INK_POINTS = 250_000
LOCAL_PAPER_PX = 15  # window of the local paper estimate: wider than a stroke, narrower than a bar


@dataclass(frozen=True)
class NormaliseOptions:
    """What normalisation does; the pipeline fills it from the settings' normalisation group."""

    orientation: str = "projection"  # projection (ink profiles), osd (tesseract --psm 0) or off
    deskew: bool = True
    max_skew: float = 6.0  # degrees searched either way
    min_skew: float = 0.3  # smaller angles are left alone (not worth a resampling: docs/scans.md)
    osd_min_confidence: float = 1.5  # tesseract's orientation confidence needed to turn a page
    osd_when_unsure: bool = True  # projection: tesseract's OSD decides where the ink is unsure (sideways, upside down)
    background: bool = False
    rescale: bool = False
    x_height: float = 11.0  # px the text's x-height is scaled to (a 9-10 pt text at 144 dpi: what the models read best)
    rescale_band: float = 1.3  # pages whose x-height is within this factor of `x_height` are left alone
    sharpen: bool = False
    sharpen_above: float = 0.7  # estimated blur (models.sharpen), in px at 144 dpi, over which a page is sharpened
    dpi: int | None = None  # the page's resolution (None: taken as 144 dpi)
    threads: int = 1


@dataclass(frozen=True)
class Normalised:
    image: Image.Image
    transform: PageTransform
    skew_estimate: float  # degrees the content was found skewed by (counter-clockwise), before the fix
    orientation_confidence: float | None
    blur_estimate: float | None = None  # px (models.sharpen.estimate_blur), when sharpening is on


def normalise_page(image: Image.Image, options: NormaliseOptions | None = None) -> Normalised:
    """The page upright and straight, and the map from it back to `image`."""
    options = options or NormaliseOptions()
    original_size = image.size
    to_norm: Affine = IDENTITY
    turns, confidence = 0, None
    if options.orientation == "osd":
        turns, confidence = detect_orientation(
            image, min_confidence=options.osd_min_confidence, threads=options.threads
        )
    elif options.orientation == "projection" and _sideways(image, options):
        turns = 1  # upright or upside down is decided once the page is straight
    if turns:
        to_norm = quarter_turn(turns, image.width, image.height)
        image = image.transpose(_TRANSPOSE[turns])
    skew = 0.0
    applied = 0.0
    if options.deskew:
        skew = estimate_skew(image, options.max_skew)
        if abs(skew) >= options.min_skew:
            image, m = rotate_expand(image, -skew)
            to_norm = compose(to_norm, m)
            applied = -skew
    if options.orientation == "projection":
        ratio = ascender_ratio(image)
        confidence = round(abs(math.log(ratio)), 3) if ratio > 0 else None
        if SURE_UPSIDE_DOWN <= ratio < UPRIGHT_RATIO and options.osd_when_unsure:
            osd_turns, confidence = detect_orientation(
                image, min_confidence=options.osd_min_confidence, threads=options.threads
            )
            ratio = 0.5 if osd_turns == 2 else 2.0
        if 0 < ratio < UPSIDE_DOWN_RATIO:
            to_norm = compose(to_norm, quarter_turn(2, image.width, image.height))
            image = image.transpose(Image.Transpose.ROTATE_180)
            turns = (turns + 2) % 4
    scale = 1.0
    if options.rescale:
        scale = rescale_factor(estimate_x_height(image), options.x_height, options.rescale_band)
        if scale != 1.0:
            image, m = rescale(image, scale)
            to_norm = compose(to_norm, m)
    blur = None
    if options.sharpen:
        from models.sharpen import estimate_blur, sharpen

        blur = round(estimate_blur(image), 3)
        if blur * REFERENCE_DPI / ((options.dpi or REFERENCE_DPI) * scale) > options.sharpen_above:
            image = sharpen(image, blur)
    if options.background:
        image = flatten_background(image)
    transform = PageTransform(
        to_original=invert(to_norm),
        quarter_turns=turns,
        skew=round(applied, 3),
        scale=scale,
        size=image.size,
        original_size=original_size,
    )
    return Normalised(image, transform, round(skew, 3), confidence, blur)


_TRANSPOSE = {1: Image.Transpose.ROTATE_90, 2: Image.Transpose.ROTATE_180, 3: Image.Transpose.ROTATE_270}
# Latin text has more ink above its x-height band (capitals, digits, ascenders) than below its
# baseline (descenders): on most dev pages 2-12 times as much upright and under 0.6 upside down;
# pages of mostly numbers sit near 1 (1.15-1.34 upright, 0.74-0.87 upside down), and between
# these two ratios tesseract's OSD decides (`osd_when_unsure`). A photocopy's strokes shift the
# ratio: eu-006 p1 upright read 0.79 (seed 1), was turned over, and every cell was read upside
# down, where OSD said upright at 5.4. So OSD is asked from SURE_UPSIDE_DOWN up; without it a
# page under UPSIDE_DOWN_RATIO is turned.
SURE_UPSIDE_DOWN = 0.6
UPSIDE_DOWN_RATIO = 0.8
UPRIGHT_RATIO = 1.5


# A page turned by 90 degrees lines its ink up more sharply into columns than into rows. On the
# dev pages, upright pages score 0.1-0.8 (column sharpness over row sharpness), turned ones 1.7-6;
# one page of tall ruled columns scores 0.8-1.16 upright (1.16 as a bold photocopy) and 1.26
# turned. Between the two bounds below, tesseract's OSD decides whether the page lies sideways (its
# turn's parity, which was right on every page there; its 0-or-180 answer is not used).
SIDEWAYS_RATIO = 1.15
UNSURE_SIDEWAYS = (0.85, 2.0)


def sideways_ratio(image: Image.Image) -> float:
    """How much more sharply the page's ink lines up into columns than into rows, at the best
    angle either way (0.0 when the page holds too little ink to tell)."""
    ink, _ = _ink(image, SKEW_WORK_SIDE)
    ys, xs = np.nonzero(ink)
    if ys.size < 200:
        return 0.0
    return float(_best_angle(xs, ys, ink.shape[::-1], 6.0)[1] / max(_best_angle(ys, xs, ink.shape, 6.0)[1], 1e-9))


def _sideways(image: Image.Image, options: NormaliseOptions) -> bool:
    """Whether the page lies sideways: by the ink's lines, and where they are unsure, by OSD."""
    ratio = sideways_ratio(image)
    if options.osd_when_unsure and UNSURE_SIDEWAYS[0] <= ratio <= UNSURE_SIDEWAYS[1]:
        turns, confidence = detect_orientation(image, min_confidence=0.0, threads=options.threads)
        if confidence is not None:
            return turns % 2 == 1
    return ratio > SIDEWAYS_RATIO


def ascender_ratio(image: Image.Image, strips: int = 4) -> float:
    """Ink above the x-height band over ink below the baseline, summed over the text lines of
    `strips` vertical strips of a straight page (0.0 when no line is found)."""
    ink, _ = _ink(image, SKEW_WORK_SIDE)
    h, w = ink.shape
    above = below = 0.0
    for s in range(strips):
        profile = ink[:, s * w // strips : (s + 1) * w // strips].sum(axis=1).astype(np.float64)
        on = profile > 0
        edges = np.flatnonzero(np.diff(np.concatenate([[0], on.astype(np.int8), [0]])))
        for a, b in zip(edges[::2], edges[1::2]):
            if not 4 <= b - a <= 60:  # specks, rules and figures are not text lines
                continue
            band = profile[a:b]
            core = np.flatnonzero(band >= 0.5 * band.max())
            above += float(band[: core[0]].sum())
            below += float(band[core[-1] + 1 :].sum())
    if above + below == 0:
        return 0.0
    return (above + 1.0) / (below + 1.0)


X_HEIGHT_WORK_SIDE = 2400  # the x-height is measured on a copy this long (a 300-dpi A4 page: 1 px = 1.5 px)
MAX_RESCALE = 2.5  # a page is never scaled by more than this either way


def estimate_x_height(image: Image.Image, strips: int = 4) -> float:
    """The x-height of the page's text in pixels (0.0 when no text line is found): the core of
    each text line (its rows holding at least half the line's peak ink), the median over the
    lines of a straight page weighted by their ink, so specks and dots count for next to nothing."""
    ink, factor = _ink(image, X_HEIGHT_WORK_SIDE)
    h, w = ink.shape
    cores: list[tuple[int, float]] = []
    for s in range(strips):
        profile = ink[:, s * w // strips : (s + 1) * w // strips].sum(axis=1).astype(np.float64)
        on = profile > 0
        edges = np.flatnonzero(np.diff(np.concatenate([[0], on.astype(np.int8), [0]])))
        for a, b in zip(edges[::2], edges[1::2]):
            if not 3 <= b - a <= 120:  # rules and figures are not text lines
                continue
            band = profile[a:b]
            core = np.flatnonzero(band >= 0.5 * band.max())
            cores.append((int(core[-1] - core[0] + 1), float(band.sum())))
    if not cores:
        return 0.0
    cores.sort()
    half, seen = sum(mass for _, mass in cores) / 2, 0.0
    for height, mass in cores:
        seen += mass
        if seen >= half:
            return height / factor
    return 0.0  # unreachable: the masses sum past half


def rescale_factor(x_height: float, target: float, band: float) -> float:
    """The scale that brings `x_height` to `target`, or 1.0 when it is within `band` of it
    (or unknown): a resampling costs detail, so only a clear mismatch is worth one."""
    if x_height <= 0 or target <= 0:
        return 1.0
    scale = target / x_height
    if 1 / band <= scale <= band:
        return 1.0
    return round(min(MAX_RESCALE, max(1 / MAX_RESCALE, scale)), 4)


def rescale(image: Image.Image, scale: float) -> tuple[Image.Image, Affine]:
    """`image` resized by `scale` (area-averaged down, bicubic up) and the map onto the result:
    the exact factors of the rounded size, so a box maps back onto the same pixels."""
    w, h = image.size
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    method = Image.Resampling.LANCZOS if scale < 1 else Image.Resampling.BICUBIC
    return image.resize(size, method), scaling(size[0] / w, size[1] / h)


def rotate_expand(image: Image.Image, angle: float) -> tuple[Image.Image, Affine]:
    """`image` rotated by `angle` degrees (counter-clockwise) into a canvas holding all of it,
    filled with the paper's grey; the map from `image` onto the result."""
    w, h = image.size
    m = rotation(angle, w / 2, h / 2)
    x0, y0, x1, y1 = map_box(m, (0.0, 0.0, float(w), float(h)))
    size = (math.ceil(x1 - x0), math.ceil(y1 - y0))
    m = compose(m, translation(-x0, -y0))
    a, b, c, d, e, f = invert(m)  # PIL samples the source at the inverse map of each output pixel
    fill = _paper(image)
    out = image.transform(size, Image.Transform.AFFINE, (a, b, c, d, e, f), Image.Resampling.BICUBIC, fillcolor=fill)
    return out, m


def _paper(image: Image.Image) -> int | tuple[int, ...]:
    """The page's paper colour: a high percentile of its pixels (most of a page is paper)."""
    arr = np.asarray(image)
    if arr.ndim == 2:
        return int(np.percentile(arr[::4, ::4], 90))
    return tuple(int(v) for v in np.percentile(arr[::4, ::4].reshape(-1, arr.shape[2]), 90, axis=0))


def _ink(image: Image.Image, work_side: int) -> tuple[np.ndarray, float]:
    """Ink mask of a reduced grey copy and the reduction factor. Ink is darker than the paper
    around it (the lightest pixel within a few strokes), so text on a shaded box counts and the
    inside of a solid bar or photo does not."""
    grey = image.convert("L")
    factor = min(1.0, work_side / max(grey.size))
    if factor < 1.0:
        grey = grey.resize(
            (max(1, round(grey.width * factor)), max(1, round(grey.height * factor))), Image.Resampling.BOX
        )
    arr = np.asarray(grey, dtype=np.float32)
    local = max_filter(np.asarray(grey), LOCAL_PAPER_PX).astype(np.float32)  # PIL's MaxFilter, ~500x faster
    return (arr < local * 0.65) & (arr < local - 40), factor


def estimate_skew(image: Image.Image, max_angle: float = 6.0) -> float:
    """Degrees the page's lines are rotated counter-clockwise by (0.0 when it cannot tell)."""
    ink, _ = _ink(image, SKEW_WORK_SIDE)
    ys, xs = np.nonzero(ink)
    if ys.size < 200:
        return 0.0
    angle, sharpness, flat = _best_angle(ys, xs, ink.shape, max_angle)
    return angle if sharpness > 1.02 * flat else 0.0  # no lines to line up: a photo, a blank page


def _best_angle(ys: np.ndarray, xs: np.ndarray, shape: tuple[int, ...], max_angle: float) -> tuple[float, float, float]:
    """The angle whose projection onto rows is sharpest, that sharpness (1.0 = ink spread
    evenly over its rows) and the median sharpness over the angles searched."""
    if ys.size > MAX_INK_POINTS:  # a fixed subsample: the same page gives the same angle
        keep = np.random.default_rng(0).choice(ys.size, MAX_INK_POINTS, replace=False)
        ys, xs = ys[keep], xs[keep]
    xs_c = xs.astype(np.float64) - shape[1] / 2
    ys_c = ys.astype(np.float64) - shape[0] / 2
    span = int(math.hypot(shape[0], shape[1])) + 4

    def sharpness(angle: float) -> float:
        # content rotated counter-clockwise by `angle` lies on rows of y' = y cos + x sin
        t = math.radians(angle)
        proj = (ys_c * math.cos(t) + xs_c * math.sin(t) + span / 2).astype(np.int64)
        counts = np.bincount(proj, minlength=span).astype(np.float64)
        extent = int(proj.max() - proj.min() + 1)
        return float(np.dot(counts, counts)) * extent / float(ys.size) ** 2

    coarse = np.arange(-max_angle, max_angle + 1e-9, 0.2)
    scores = np.array([sharpness(a) for a in coarse])
    best = float(coarse[int(np.argmax(scores))])
    fine = np.arange(best - 0.25, best + 0.25 + 1e-9, 0.025)
    fine_scores = np.array([sharpness(a) for a in fine])
    i = int(np.argmax(fine_scores))
    angle = float(fine[i])
    if 0 < i < len(fine) - 1:  # the peak of the parabola through the best three
        s0, s1, s2 = fine_scores[i - 1 : i + 2]
        denom = s0 - 2 * s1 + s2
        if denom < 0:
            angle += 0.025 * 0.5 * (s0 - s2) / denom
    return angle, float(fine_scores[i]), float(np.median(scores))


def detect_orientation(
    image: Image.Image, *, min_confidence: float = 1.5, threads: int = 1
) -> tuple[int, float | None]:
    """Quarter turns (counter-clockwise) that make the page upright, and tesseract's
    confidence; (0, None) when tesseract cannot tell (too little text)."""
    grey = image.convert("L")
    factor = min(1.0, OSD_WORK_SIDE / max(grey.size))
    if factor < 1.0:
        grey = grey.resize(
            (max(1, round(grey.width * factor)), max(1, round(grey.height * factor))), Image.Resampling.LANCZOS
        )
    with tempfile.TemporaryDirectory(prefix="tess_osd_") as tmp:
        src = os.path.join(tmp, "page.png")
        grey.save(src, compress_level=1)
        env = {**os.environ, "OMP_THREAD_LIMIT": str(max(1, threads))}
        proc = subprocess.run(
            ["tesseract", src, "stdout", "--psm", "0", "-l", "osd"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    text = proc.stdout + proc.stderr
    rotate = re.search(r"Rotate:\s*(\d+)", text)
    conf = re.search(r"Orientation confidence:\s*([\d.]+)", text)
    if proc.returncode != 0 or not rotate or not conf:
        log.debug("osd: no answer (%s)", " ".join(text.split())[:200])
        return 0, None
    confidence = float(conf.group(1))
    degrees = int(rotate.group(1))  # clockwise turn that makes it upright
    if confidence < min_confidence:
        return 0, confidence
    return (-(degrees // 90)) % 4, confidence


def flatten_background(image: Image.Image) -> Image.Image:
    """Grey page divided by a smooth estimate of its paper: grey, tinted or unevenly lit paper
    becomes white while the ink keeps its contrast."""
    grey = image.convert("L")
    w, h = grey.size
    small = grey.resize((max(1, w // 8), max(1, h // 8)), Image.Resampling.BOX)
    paper = small.filter(ImageFilter.MaxFilter(7)).filter(ImageFilter.GaussianBlur(4))
    bg = np.asarray(paper.resize((w, h), Image.Resampling.BILINEAR), dtype=np.float32)
    out = np.asarray(grey, dtype=np.float32) / np.maximum(bg, 1.0) * 255.0
    return Image.fromarray(np.clip(out, 0, 255).astype(np.uint8))


SPECK_CORE = 3  # a speck fits in a (2 * 3 + 1) px square around its centre ...
SPECK_RING = 7  # ... and has no other ink within this many px of that centre
SPECK_RULE_PX = 25  # ... but ruling lines: dark runs at least this long
WHITE_PAPER = 250  # a page whose paper is this light ...
CLEAN_SPECKS = 5e-4  # ... and fewer speck centres than this per pixel is left as it is (dev: clean renders
# 0.7-1.4e-4, photocopies 1.8-3e-3)


def clean_page(image: Image.Image) -> Image.Image:
    """Grey page with its paper stretched to white and its ink to black, and isolated specks
    wiped. Office scans (grey paper, noise) and photocopies (scattered toner specks) lost most
    of their tables to the layout detector without it. A page already clean (white paper, next
    to no specks) is returned as it is: the detector's boxes on it then stay what they were.
    Its arrays are the page's size, so it counts in bytes and works in place (an int32 version
    peaked at 120 MiB over the page on a 200-dpi Letter page, in every lane at once: docs/speed.md)."""
    grey = np.asarray(image.convert("L"), dtype=np.float32)
    sample = grey[::3, ::3]
    paper, ink = float(np.percentile(sample, 60)), float(np.percentile(sample, 1))
    dark = grey < 128
    centres = _speck_centres(dark)
    if paper >= WHITE_PAPER and int(centres.sum()) < CLEAN_SPECKS * grey.size:
        return image
    if paper - ink > 20:  # a blank or flat page is not stretched
        grey -= ink
        grey /= paper - ink
        grey *= 255.0
        np.clip(grey, 0, 255, out=grey)
    return Image.fromarray(wipe_specks(grey, rules_aside=False).astype(np.uint8))


def wipe_specks(grey: np.ndarray, rules_aside: bool = True) -> np.ndarray:
    """`grey` (float, paper white) with its isolated specks turned to paper, in place: dark blobs
    with no other ink but ruling lines around them (runs of SPECK_RULE_PX dark pixels or longer)."""
    dark = grey < 128
    if rules_aside:  # a speck next to a ruling line is still a speck; the line stays whole
        from models.rules import runs

        dark &= ~(runs(dark, SPECK_RULE_PX) | runs(dark.T, SPECK_RULE_PX).T)
    spread = max_filter(_speck_centres(dark), 2 * SPECK_CORE + 1)
    spread &= dark
    grey[spread] = 255.0
    return grey


def _speck_centres(dark: np.ndarray) -> np.ndarray:
    """Dark pixels with ink in their core square and none in the ring around it: specks, not strokes."""
    core = box_count(dark, SPECK_CORE)
    ring = box_count(dark, SPECK_RING)
    ring -= core
    return dark & (core > 0) & (ring == 0)


BINARY_MID_GREY = 0.1  # an image with fewer grey pixels than this per black one is black-and-white
SOFTEN_SIGMA = 0.6  # px: about the antialiasing of a clean render


def is_binary(image: Image.Image) -> bool:
    """Whether `image` is black and white (a photocopy, a fax, a thresholded scan): next to no
    pixels between ink and paper, where a render or a grey scan has antialiased edges."""
    grey = np.asarray(image.convert("L"))
    black = int((grey <= 40).sum())
    if black < 50:  # too little ink to tell
        return False
    return int(((grey > 40) & (grey < 215)).sum()) < BINARY_MID_GREY * black


def soften_binary(image: Image.Image, descreen: bool = False) -> Image.Image:
    """A black-and-white crop with its edges softened to grey, as a render antialiases them; any
    other crop as it is. The structure model and the OCR are trained on antialiased text. With
    `descreen`, halftone screens (shaded fills a photocopy dotted) are first read back as white
    fill with dark letters (`models.halftone`). Dark bands (white labels on a black fill the
    photocopy kept) are always read back so (`models.dark_bands`): the structure model then sees
    a header row, where it saw a black bar."""
    if not is_binary(image):
        return image
    grey = np.asarray(image.convert("L"), dtype=np.float32)
    if descreen:
        from models.halftone import descreen as read_screens

        grey = read_screens(grey)
    grey = wipe_specks(invert_dark_bands(grey))
    return Image.fromarray(grey.astype(np.uint8)).filter(ImageFilter.GaussianBlur(SOFTEN_SIGMA)).convert(image.mode)
