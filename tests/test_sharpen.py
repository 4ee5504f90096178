"""Blurred scans (models.sharpen): the blur estimate ranks pages by a known blur, the unsharp mask
restores edges and faint ruling lines, and normalisation sharpens blurred pages only."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from models.page_normalise import NormaliseOptions, normalise_page
from models.ruled_tables import find_grids
from models.sharpen import estimate_blur, sharpen

DPI = 144


def _page(rule: int = 1) -> Image.Image:
    """A white page with text lines and two ruled tables of `rule`-px rules (0.5 pt at 144 dpi)."""
    page = Image.new("L", (1190, 1684), 255)
    draw = ImageDraw.Draw(page)
    for i in range(20):
        draw.text((120, 100 + 18 * i), f"Line {i} of body text, 12,345 and 67.8 per cent", fill=0)
    for x0, y0, rows, cols, cw in ((150, 600, 6, 4, 160), (150, 820, 9, 3, 200)):
        for r in range(rows + 1):
            draw.line([(x0, y0 + r * 22), (x0 + cols * cw, y0 + r * 22)], fill=0, width=rule)
        for c in range(cols + 1):
            draw.line([(x0 + c * cw, y0), (x0 + c * cw, y0 + rows * 22)], fill=0, width=rule)
        for r in range(rows):
            for c in range(cols):
                draw.text((x0 + c * cw + 6, y0 + r * 22 + 5), f"{r * 10 + c} 000", fill=0)
    return page


def _blurred(image: Image.Image, sigma: float) -> Image.Image:
    return image.filter(ImageFilter.GaussianBlur(sigma)) if sigma else image


def test_blur_estimate_ranks_pages_by_their_blur_and_ignores_noise() -> None:
    page = _page()
    estimates = [estimate_blur(_blurred(page, s)) for s in (0.0, 0.5, 0.8, 1.1, 1.6)]
    assert estimates == sorted(estimates) and len(set(estimates)) == len(estimates), estimates
    assert estimates[0] < 0.5 and estimates[3] > 0.7  # sharp: left alone; 1.1 px: over the default gate
    noisy = np.asarray(page, dtype=np.float32) + np.random.default_rng(0).normal(0, 16, (page.height, page.width))
    noisy_page = Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8))
    assert abs(estimate_blur(noisy_page) - estimates[0]) < 0.15  # grain is not blur


def test_sharpening_steepens_a_blurred_edge() -> None:
    edge = Image.new("L", (200, 200), 255)
    ImageDraw.Draw(edge).rectangle([100, 0, 199, 199], fill=0)
    soft = _blurred(edge, 1.2)
    restored = sharpen(soft, estimate_blur(soft))
    row = lambda im: np.asarray(im, dtype=np.float32)[100]  # noqa: E731
    rise = lambda r: int(((r > 25) & (r < 230)).sum())  # noqa: E731 - px between 10% and 90%
    assert rise(row(restored)) < rise(row(soft))
    assert np.abs(row(restored) - row(edge)).sum() < 0.6 * np.abs(row(soft) - row(edge)).sum()


def test_sharpening_brings_back_ruling_lines_too_faint_for_the_grid_finder() -> None:
    page = _blurred(_page(rule=1), 1.2)  # a 1-px rule blurred by 1.2 px bottoms out above the dark level
    assert len(find_grids(page, DPI)) < 2
    assert len(find_grids(sharpen(page, estimate_blur(page)), DPI)) == 2


def test_normalisation_sharpens_blurred_pages_only() -> None:
    options = NormaliseOptions(orientation="off", deskew=False, sharpen=True)
    clean = _page()
    done = normalise_page(clean, options)
    assert done.blur_estimate is not None and done.blur_estimate < options.sharpen_above
    assert np.array_equal(np.asarray(done.image), np.asarray(clean))
    blurred = _blurred(clean, 1.2)
    done = normalise_page(blurred, options)
    assert done.blur_estimate is not None and done.blur_estimate > options.sharpen_above
    assert not np.array_equal(np.asarray(done.image), np.asarray(blurred))
    assert done.image.size == blurred.size and done.transform.scale == 1.0  # boxes need no new mapping


def test_the_blur_gate_is_in_pixels_at_144_dpi() -> None:
    blurred = _blurred(_page(), 1.2)  # about 0.9 px: blurred at 144 dpi, but not at 300 (0.43 px at 144 dpi)
    at_300 = normalise_page(blurred, NormaliseOptions(orientation="off", deskew=False, sharpen=True, dpi=300))
    assert np.array_equal(np.asarray(at_300.image), np.asarray(blurred))
    at_144 = normalise_page(blurred, NormaliseOptions(orientation="off", deskew=False, sharpen=True, dpi=144))
    assert not np.array_equal(np.asarray(at_144.image), np.asarray(blurred))
