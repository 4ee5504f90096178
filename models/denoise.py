"""Sensor noise on a scanned table crop: how much, and a median filter for the structure model.

Grey sensor noise costs the structure model rows and columns (SLANet reads the grain of the
paper between cells as content), while the OCR reads noisy text better than median-filtered
text: a 3x3 median on the crops both read put the structure right and the text wrong
(docs/scans.md). So the median goes to the structure model only, and only on crops whose paper
is measurably grainy.

The estimate is the mean absolute difference between the crop and its hybrid median, over blank
paper (pixels whose 5-px neighbourhood in the filtered image is all paper). On dev table crops:
0.0 on clean renders, blurred pages and (softened) photocopies, 0.1-0.2 on JPEG, 0.2-1.4 on office
scans; 1.5-1.9 under sensor noise of sigma 8, 2.9-3.7 under sigma 16.

PIL and numpy; plain numbers out.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from models.max_filter import max_filter

NOISY = 2.0  # mean grey levels of grain on the paper above which a crop counts as noisy
PAPER_MARGIN = 24  # grey levels under the paper level still counted as paper


def noise_level(image: Image.Image) -> float:
    """Mean absolute residual of the hybrid median over the blank paper of `image` (0.0 without
    paper). The hybrid median keeps one-pixel rules and strokes, so a crop of thin black lines is
    not mistaken for grain (a plain median erases them, and they counted as noise)."""
    grey = image.convert("L")
    return _residual(grey, hybrid_median(grey))


def _residual(grey: Image.Image, smooth: Image.Image) -> float:
    """`noise_level` of `grey` given its hybrid median `smooth`."""
    m = np.asarray(smooth, dtype=np.int16)
    near = -max_filter(-m, 5)  # PIL's MinFilter(5) to the bit, without its 25 reads a pixel
    paper = near >= np.percentile(m[::3, ::3], 60) - PAPER_MARGIN
    if not paper.any():
        return 0.0
    return float(np.abs(np.asarray(grey, dtype=np.int16) - m)[paper].mean())


def structure_view(image: Image.Image) -> Image.Image:
    """What the structure model reads of a crop: a hybrid median of it when its paper is noisy,
    else the crop itself (the median is computed once, for the estimate and the view)."""
    grey = image.convert("L")
    smooth = hybrid_median(grey)
    if _residual(grey, smooth) <= NOISY:
        return image
    return smooth.convert(image.mode)


def hybrid_median(image: Image.Image) -> Image.Image:
    """The 3x3 hybrid median of a grey image: the median of the pixel, the median of its `+`
    neighbours and the median of its `x` neighbours. Isolated grains go as under a plain median,
    but a one-pixel ruling line survives (a plain 3x3 median erases it: three dark pixels of nine,
    and SLANet then lost rows on two dev tables)."""
    a = np.pad(np.asarray(image.convert("L"), dtype=np.uint8), 1, mode="edge")
    h, w = a.shape[0] - 2, a.shape[1] - 2

    def at(dy: int, dx: int) -> np.ndarray:
        return a[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]

    centre = at(0, 0)
    plus = _median5(centre, at(-1, 0), at(1, 0), at(0, -1), at(0, 1))
    cross = _median5(centre, at(-1, -1), at(-1, 1), at(1, -1), at(1, 1))
    return Image.fromarray(_median3(centre, plus, cross)).convert(image.mode)


def _median3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The elementwise median of three arrays by min and max: the same values as np.median of
    their stack, in a few passes instead of a sort (a 300-dpi page's crops: 4x the pixels)."""
    return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))


def _median5(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, e: np.ndarray) -> np.ndarray:
    """The elementwise median of five arrays: the median of `e` and the middle two of the four
    others' pair-minima and pair-maxima (exact, as `_median3`)."""
    return _median3(e, np.maximum(np.minimum(a, b), np.minimum(c, d)), np.minimum(np.maximum(a, b), np.maximum(c, d)))
