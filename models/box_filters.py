"""Box sums and the closing of a mask between its parts, on whole arrays (numpy only).

Shared by the fill flattening (`models.fills`, on blocks), the halftone and dark-band reading
(`models.halftone`, `models.dark_bands`, on pixels) and the speck wipe
(`models.page_normalise`): they judge a region by counts over squares around each element and
fill in the letters a region surrounds.
"""

from __future__ import annotations

import numpy as np


def box_sum(values: np.ndarray, radius: int) -> np.ndarray:
    """Sum of `values` in the (2 * radius + 1) square around each element, zero beyond the
    edges (an integral image in float64: exact for any crop a page holds)."""
    padded = np.pad(values.astype(np.float64), ((radius + 1, radius), (radius + 1, radius)))
    c = padded.cumsum(0).cumsum(1)
    k = 2 * radius + 1
    return c[k:, k:] - c[:-k, k:] - c[k:, :-k] + c[:-k, :-k]


def box_mean(values: np.ndarray, radius: int) -> np.ndarray:
    """Mean of `values` over the (2 * radius + 1) square around each element, edges repeated."""
    padded = np.pad(values.astype(np.float64), radius, mode="edge")
    k = 2 * radius + 1
    return (box_sum(padded, radius)[radius:-radius, radius:-radius] / (k * k)).astype(np.float32)


def box_count(mask: np.ndarray, radius: int) -> np.ndarray:
    """Count of true pixels in the (2 * radius + 1) square around each pixel (zero beyond the
    edges), on one-byte arrays: a row pass and a column pass of shifted adds (a count of at most
    255 fits; the speck wipe's largest is 225). Two page-sized int32 integral images cost 4x more
    on a 300-dpi page (docs/speed.md); `box_sum`'s float64 one costs more still."""
    k = 2 * radius + 1
    if k * k > 255:
        raise ValueError(f"a box of {k} px a side counts past one byte")
    h, w = mask.shape
    padded = np.zeros((h + k - 1, w + k - 1), dtype=np.uint8)
    padded[radius : radius + h, radius : radius + w] = mask
    rows = padded[:, :w].copy()
    for d in range(1, k):
        rows += padded[:, d : d + w]
    out = rows[:h].copy()
    for d in range(1, k):
        out += rows[d : d + h]
    return out


def between(mask: np.ndarray, reach: int) -> np.ndarray:
    """Elements with `mask` set within `reach` on both sides, left and right or above and below."""
    return _both_sides(mask, reach, axis=1) | _both_sides(mask, reach, axis=0)


def _both_sides(mask: np.ndarray, reach: int, axis: int) -> np.ndarray:
    n = mask.shape[axis]
    prefix = np.cumsum(mask, axis=axis, dtype=np.int32)  # prefix[i + 1]: set elements in [0, i]
    prefix = np.concatenate([np.zeros_like(prefix.take([0], axis=axis)), prefix], axis=axis)

    def count(start: np.ndarray, stop: np.ndarray) -> np.ndarray:  # set elements in [start, stop)
        return prefix.take(np.clip(stop, 0, n), axis=axis) - prefix.take(np.clip(start, 0, n), axis=axis)

    index = np.arange(n)
    return (count(index - reach, index) > 0) & (count(index + 1, index + reach + 1) > 0)
