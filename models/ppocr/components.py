"""Connected regions of a binary map, as boxes: the text kernels of DB detection.

Written for this project in plain numpy (no OpenCV in the dependencies): the map is cut into
horizontal runs of set pixels, runs in adjacent rows that touch (8-connectivity) are joined,
and each group's extent is its box. Everything is vectorised over runs, so a crop-sized map
with a few hundred text lines takes milliseconds.
"""

from __future__ import annotations

import numpy as np


def component_boxes(mask: np.ndarray) -> np.ndarray:
    """Boxes of the 8-connected regions of a 2-D boolean `mask`, as an (n, 4) int array of
    (x0, y0, x1, y1) with x1, y1 exclusive, in no particular order."""
    if mask.ndim != 2:
        raise ValueError("mask must be 2-D")
    h, w = mask.shape
    if not h or not w or not mask.any():
        return np.zeros((0, 4), dtype=np.int64)
    padded = np.zeros((h, w + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    edges = np.diff(padded, axis=1)
    rows, starts = np.nonzero(edges == 1)  # row-major, so the k-th start and end are one run
    _, ends = np.nonzero(edges == -1)  # exclusive
    width = w + 2  # > any column: row * width + column orders runs row by row
    # The runs of the row above that touch run k: a contiguous range [lo, hi) of run indices.
    lo = np.searchsorted(rows * width + ends, (rows - 1) * width + starts, side="left")
    hi = np.searchsorted(rows * width + starts, (rows - 1) * width + ends, side="right")
    counts = np.maximum(hi - lo, 0)
    below = np.repeat(np.arange(rows.size), counts)
    above = np.repeat(lo, counts) + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts))
    labels = _join(rows.size, below, above)
    _, group = np.unique(labels, return_inverse=True)
    n = int(group.max()) + 1
    boxes = np.empty((n, 4), dtype=np.int64)
    boxes[:, 0], boxes[:, 1] = w, h
    boxes[:, 2], boxes[:, 3] = 0, 0
    np.minimum.at(boxes[:, 0], group, starts)
    np.minimum.at(boxes[:, 1], group, rows)
    np.maximum.at(boxes[:, 2], group, ends)
    np.maximum.at(boxes[:, 3], group, rows + 1)
    return boxes


def _join(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A label per node such that nodes joined by the edges (a[i], b[i]) share one: the
    smallest index of the group, by min-propagation over the edges with pointer jumping."""
    labels = np.arange(n)
    if not a.size:
        return labels
    while True:
        low = np.minimum(labels[a], labels[b])
        before = labels.copy()
        np.minimum.at(labels, a, low)
        np.minimum.at(labels, b, low)
        while True:  # point every node at its label's label until nothing moves
            jumped = labels[labels]
            if np.array_equal(jumped, labels):
                break
            labels = jumped
        if np.array_equal(labels, before):
            return labels


def box_means(values: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Mean of `values` (2-D) inside each (x0, y0, x1, y1) box (exclusive ends), by a
    summed-area table: one pass for all boxes."""
    table = np.zeros((values.shape[0] + 1, values.shape[1] + 1), dtype=np.float64)
    table[1:, 1:] = values.cumsum(axis=0).cumsum(axis=1)
    x0, y0, x1, y1 = boxes.T
    sums = table[y1, x1] - table[y0, x1] - table[y1, x0] + table[y0, x0]
    area = np.maximum((x1 - x0) * (y1 - y0), 1)
    return sums / area
