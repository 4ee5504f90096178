"""Image resizing as the embedded models were trained with it (OpenCV's half-pixel convention).

The models saw images resized without antialiasing (OpenCV `INTER_LINEAR` / `INTER_CUBIC`);
PIL's filters antialias when shrinking, which shifts the model's output. OpenCV is not a
dependency, so the same separable interpolation is done here with numpy gathers.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

_CUBIC_A = -0.75  # the cubic kernel OpenCV uses


def rgb_array(image: Image.Image) -> np.ndarray:
    """H x W x 3 uint8 RGB."""
    return np.asarray(image if image.mode == "RGB" else image.convert("RGB"), dtype=np.uint8)


def _taps(src: int, dst: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Source indices (dst x taps) and weights for one axis."""
    scale = src / dst
    pos = (np.arange(dst, dtype=np.float64) + 0.5) * scale - 0.5
    base = np.floor(pos)
    frac = pos - base
    if kind == "linear":
        offsets = np.array([0, 1])
        weights = np.stack([1 - frac, frac], axis=1)
    else:
        offsets = np.array([-1, 0, 1, 2])
        d = frac[:, None] - offsets[None, :]  # distance of each tap from the sample point
        ad = np.abs(d)
        a = _CUBIC_A
        near = ((a + 2) * ad - (a + 3)) * ad * ad + 1
        far = ((a * ad - 5 * a) * ad + 8 * a) * ad - 4 * a
        weights = np.where(ad <= 1, near, np.where(ad < 2, far, 0.0))
    idx = np.clip(base[:, None].astype(np.int64) + offsets[None, :], 0, src - 1)  # replicate the border
    return idx, weights.astype(np.float32)


def resize(pixels: np.ndarray, width: int, height: int, kind: str = "linear") -> np.ndarray:
    """Resize an H x W x C uint8 array to (width, height); kind is `linear` or `cubic`."""
    h, w = pixels.shape[:2]
    if (w, h) == (width, height):
        return pixels.copy()
    yi, yw = _taps(h, height, kind)
    # only the source rows the taps read become floats: a 300-dpi page is 25 M pixels, its
    # layout input 0.5 M (exact either way: a uint8 is a float32 exactly)
    rows = np.einsum("ytwc,yt->ywc", pixels[yi].astype(np.float32), yw)
    xi, xw = _taps(w, width, kind)
    out = np.einsum("yxtc,xt->yxc", rows[:, xi], xw)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)
