"""Overlapping tiles for the DB text detector, so one call's memory does not follow the input.

The detector's activations grow with its input (measured: ~166 MiB at 800 x 608, ~650 MiB at
2016 x 1600, docs/speed.md), so a large table crop would set a worker's peak RSS. Instead the
resized input is cut into tiles of at most `tile_pixels`, overlapping by `overlap` pixels, each
tile is run on its own, and the probability maps are stitched back into one map of the whole
input: in an overlap each pixel comes from the tile it lies deeper inside (the seam is the
overlap's middle), so every tile's edge, where the network lacks context, is discarded. The DB
post-processing then runs once on the stitched map, so a text line crossing a seam is one
component and one box, and boxes are in the whole input's coordinates with no mapping back.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

STRIDE = 32


def spans(size: int, count: int, overlap: int) -> list[tuple[int, int]]:
    """`count` (start, end) windows covering 0..size, each a multiple of STRIDE long (the last
    one ends at `size`, itself a multiple of STRIDE), neighbours overlapping by >= `overlap`."""
    if count <= 1:
        return [(0, size)]
    length = math.ceil((size + (count - 1) * overlap) / count / STRIDE) * STRIDE
    length = min(length, size)
    starts = [round(i * (size - length) / (count - 1) / STRIDE) * STRIDE for i in range(count)]
    return [(s, min(size, s + length)) for s in starts]


def grid(
    width: int, height: int, tile_pixels: int, overlap: int
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Column and row windows: the fewest tiles whose area stays within `tile_pixels`
    (one tile when the whole input fits, or tiling is off with `tile_pixels` = 0)."""
    if not tile_pixels or width * height <= tile_pixels:
        return [(0, width)], [(0, height)]
    best: tuple[int, int, int] | None = None
    for nx in range(1, width // STRIDE + 1):
        for ny in range(1, height // STRIDE + 1):
            cols, rows = spans(width, nx, overlap), spans(height, ny, overlap)
            tile_w, tile_h = cols[0][1] - cols[0][0], rows[0][1] - rows[0][0]
            if tile_w * tile_h <= tile_pixels:
                if best is None or nx * ny < best[0]:
                    best = (nx * ny, nx, ny)
                break  # more rows for this nx only adds tiles
    if best is None:  # tile_pixels below one stride cell: finest grid
        nx, ny = width // STRIDE, height // STRIDE
    else:
        _, nx, ny = best
    return spans(width, nx, overlap), spans(height, ny, overlap)


def _owned(windows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The part of each window it keeps: up to the middle of its overlap with each neighbour."""
    kept = []
    for i, (start, end) in enumerate(windows):
        lo = 0 if i == 0 else (start + windows[i - 1][1]) // 2
        hi = end if i == len(windows) - 1 else (windows[i + 1][0] + end) // 2
        kept.append((lo, hi))
    return kept


def tiled_map(
    tensor: np.ndarray, run: Callable[[np.ndarray], np.ndarray], tile_pixels: int, overlap: int
) -> np.ndarray:
    """The (h, w) probability map of an NCHW `tensor`, `run` called per tile (it returns the
    tile's (h, w) map); one call on the whole tensor when it fits in one tile."""
    height, width = tensor.shape[2:]
    cols, rows = grid(width, height, tile_pixels, overlap)
    if len(cols) == 1 and len(rows) == 1:
        return run(tensor)
    out = np.empty((height, width), dtype=np.float32)
    for (y0, y1), (ky0, ky1) in zip(rows, _owned(rows)):
        for (x0, x1), (kx0, kx1) in zip(cols, _owned(cols)):
            tile = run(np.ascontiguousarray(tensor[:, :, y0:y1, x0:x1]))
            out[ky0:ky1, kx0:kx1] = tile[ky0 - y0 : ky1 - y0, kx0 - x0 : kx1 - x0]
    return out
