"""A square max filter (grey dilation) in numpy, equal to PIL's `ImageFilter.MaxFilter(size)`.

PIL's rank filter visits every pixel of the size x size window (225 reads a pixel at size 15):
on the page normaliser's 1600-px copy of a page it took a third of the pipeline's time on scans
(docs/speed.md). A max over a square is a max over rows and then over columns, and a max over
a run of k pixels is built by doubling (runs of 1, 2, 4, 8, then two overlapping runs of 8 make
15): about 2 x log2(k) array maxima a pixel instead of k^2. Borders repeat the edge pixel, as
PIL's filter does (it expands the image by its edge before filtering), so the output is the same
to the bit (tests/test_max_filter.py).
"""

from __future__ import annotations

import numpy as np


def max_filter(values: np.ndarray, size: int) -> np.ndarray:
    """The max over the `size` x `size` window centred on each element of a 2-D array (`size`
    odd, as PIL requires), borders extended by their edge values; same dtype and shape."""
    if values.ndim != 2:
        raise ValueError("max_filter takes a 2-D array")
    if size < 1 or size % 2 == 0:
        raise ValueError(f"size must be odd and positive, got {size}")
    if size == 1 or not values.size:
        return values.copy()
    return _run_max(_run_max(values, size, axis=1), size, axis=0)


def _run_max(values: np.ndarray, size: int, axis: int) -> np.ndarray:
    """Centred running max of length `size` along `axis`, edges repeated."""
    radius = size // 2
    pad = [(0, 0), (0, 0)]
    pad[axis] = (radius, radius)
    out = np.pad(values, pad, mode="edge")
    view = np.moveaxis(out, axis, 0)  # the runs go along the first axis of `view`
    width = 1
    while 2 * width <= size:
        view = np.maximum(view[:-width], view[width:])  # runs of 2 * width
        width *= 2
    if width < size:  # two overlapping runs of `width` cover `size`
        view = np.maximum(view[: view.shape[0] - (size - width)], view[size - width :])
    return np.ascontiguousarray(np.moveaxis(view, 0, axis))
