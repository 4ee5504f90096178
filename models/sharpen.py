"""Blur on a scanned page: how much, and an unsharp mask to take it back.

An out-of-focus or worn scan spreads every stroke. The layout detector then stops seeing
tables (on the simulator's moderate blur it kept 3 to 5 of 8 dev tables), thin ruling lines
fade above the grid finder's dark threshold, and the OCR reads letters merged. A page is
sharpened only when it is measurably blurred: a clean render or an ordinary scan is left as
it is (docs/scans.md, "Blurred pages").

The estimate re-blurs the page by a known Gaussian and compares gradients at its strongest
edges: a sharp edge loses much of its gradient to the extra blur, an edge already blurred by
sigma loses little. For a step edge blurred by sigma, the gradient ratio is
r = sqrt(sigma^2 + s0^2) / sigma, so sigma = s0 / sqrt(r^2 - 1). Text strokes are thin lines
rather than steps, which biases the figure low, but it ranks pages by their blur and shrugs
off sensor noise (which adds weak gradients only, not the strongest ones).

numpy and PIL; plain numbers out.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageFilter

REBLUR_SIGMA = 1.0  # px: the known blur added to compare against
STRONG_EDGES = 0.02  # the strongest 2% of the edge pixels are measured
MIN_GRADIENT = 4.0  # grey levels per px: weaker gradients are paper texture, not edges
BANDS, BAND_ROWS = 8, 256  # the page is measured on this many bands of rows (bounded memory on any page)
SHARPEN_RADIUS = 1.75  # the unsharp mask's Gaussian, in units of the estimated blur


def estimate_blur(image: Image.Image) -> float:
    """The page's blur as a Gaussian sigma in pixels, from its strongest edges (0.0 without
    edges). Dev pages: clean 144-dpi renders 0.31-0.38, noisy ones the same, photocopies
    0.35-0.46, office scans 0.5-0.65; blurred by sigma 0.7 px 0.52-0.77, by 1.1 px 0.76-1.0."""
    grey = image.convert("L")
    h = grey.height
    if h > BANDS * BAND_ROWS:  # evenly spaced bands, each with a margin for the blur and gradient
        tops = np.linspace(0, h - BAND_ROWS, BANDS).astype(int)
        bands = [grey.crop((0, int(t), grey.width, int(t) + BAND_ROWS)) for t in tops]
    else:
        bands = [grey]
    ratios = []
    for band in bands:
        sharp = _gradient(np.asarray(band, dtype=np.float32))
        soft = _gradient(np.asarray(band.filter(ImageFilter.GaussianBlur(REBLUR_SIGMA)), dtype=np.float32))
        edges = sharp > MIN_GRADIENT
        edges[:4], edges[-4:], edges[:, :4], edges[:, -4:] = False, False, False, False  # band borders
        if edges.sum() < 20:
            continue
        ratios.append((sharp[edges], soft[edges]))
    if not ratios:
        return 0.0
    sharp_all = np.concatenate([s for s, _ in ratios])
    soft_all = np.concatenate([s for _, s in ratios])
    strong = sharp_all >= np.quantile(sharp_all, 1.0 - STRONG_EDGES)
    r = sharp_all[strong] / np.maximum(soft_all[strong], 1e-3)
    r = r[r > 1.0001]
    if r.size == 0:
        return 0.0
    return float(np.median(REBLUR_SIGMA / np.sqrt(r * r - 1.0)))


def sharpen(image: Image.Image, blur: float) -> Image.Image:
    """`image` with an unsharp mask matched to `blur` (the estimated sigma, px): its Gaussian is
    SHARPEN_RADIUS times the blur and its amount 1 (the detail the blur took, added back once)."""
    return image.filter(ImageFilter.UnsharpMask(radius=SHARPEN_RADIUS * blur, percent=100, threshold=0))


def _gradient(a: np.ndarray) -> np.ndarray:
    """Gradient magnitude by central differences (0 on the border)."""
    gx = np.zeros_like(a)
    gy = np.zeros_like(a)
    gx[:, 1:-1] = (a[:, 2:] - a[:, :-2]) * 0.5
    gy[1:-1] = (a[2:] - a[:-2]) * 0.5
    return np.hypot(gx, gy)
