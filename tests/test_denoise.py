"""Noisy scans (models.denoise): the noise estimate tells grainy paper from clean, the hybrid
median wipes grain but keeps one-pixel ruling lines, and only noisy crops get a structure view."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from models.denoise import NOISY, hybrid_median, noise_level, structure_view


def _crop() -> Image.Image:
    """A ruled table crop: 1-px rules and digits, on white paper."""
    crop = Image.new("L", (500, 240), 255)
    draw = ImageDraw.Draw(crop)
    for r in range(6):
        draw.line([(10, 10 + 40 * r), (490, 10 + 40 * r)], fill=0, width=1)
    for c in range(5):
        draw.line([(10 + 120 * c, 10), (10 + 120 * c, 210)], fill=0, width=1)
    for r in range(5):
        for c in range(4):
            draw.text((20 + 120 * c, 22 + 40 * r), f"{r}{c},345", fill=0)
    return crop


def _noisy(image: Image.Image, sigma: float, seed: int = 0) -> Image.Image:
    a = np.asarray(image, dtype=np.float32) + np.random.default_rng(seed).normal(0, sigma, (image.height, image.width))
    return Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))


def test_noise_level_tells_grainy_paper_from_clean() -> None:
    crop = _crop()
    assert noise_level(crop) < 1.0
    levels = [noise_level(_noisy(crop, s)) for s in (8.0, 16.0, 28.0)]
    assert levels == sorted(levels) and levels[1] > NOISY, levels


def test_hybrid_median_wipes_grain_and_keeps_one_pixel_rules() -> None:
    crop = _crop()
    noisy = _noisy(crop, 16.0)
    out = np.asarray(hybrid_median(noisy), dtype=np.float32)
    paper = np.asarray(crop) == 255
    assert np.abs(out - 255)[paper].mean() < 0.75 * np.abs(np.asarray(noisy, dtype=np.float32) - 255)[paper].mean()
    assert out[50, 100:400].max() < 100  # the horizontal rule at y=50 stays dark along its length
    assert out[60:200, 130].max() < 100  # and so does the vertical rule at x=130


def test_only_noisy_crops_get_a_structure_view() -> None:
    crop = _crop()
    assert structure_view(crop) is crop
    noisy = _noisy(crop, 16.0)
    view = structure_view(noisy)
    assert view is not noisy and view.size == noisy.size


def test_hybrid_median_by_min_and_max_equals_the_sorted_median() -> None:
    a = np.random.default_rng(3).integers(0, 256, (37, 53), dtype=np.uint8)
    a[5:9, 10:20] = 7  # ties
    p = np.pad(a, 1, mode="edge")
    h, w = a.shape

    def at(dy: int, dx: int) -> np.ndarray:
        return p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]

    plus = np.median(np.stack([at(0, 0), at(-1, 0), at(1, 0), at(0, -1), at(0, 1)]), axis=0)
    cross = np.median(np.stack([at(0, 0), at(-1, -1), at(-1, 1), at(1, -1), at(1, 1)]), axis=0)
    reference = np.median(np.stack([a.astype(np.float64), plus, cross]), axis=0).astype(np.uint8)
    assert np.array_equal(np.asarray(hybrid_median(Image.fromarray(a))), reference)
