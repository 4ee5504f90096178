"""The fast pixel passes (docs/speed.md, Round 10) equal plain references on random inputs:
long runs, box counts, block statistics, the min filter of the noise estimate and the resize
of the embedded models' inputs. They run on every scanned page, so a wrong bit would move boxes
and texts silently; equality here is to the bit (statistics: to float rounding)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageFilter

from models.box_filters import box_count
from models.embedded.image_ops import resize
from models.fills import BLOCK, _block_stats
from models.max_filter import max_filter
from models.rules import runs

RNG = np.random.default_rng(7)


def _runs_reference(mask: np.ndarray, length: int) -> np.ndarray:
    out = np.zeros_like(mask, dtype=bool)
    for r, row in enumerate(mask):
        start = None
        for c, on in enumerate([*row, False]):
            if on and start is None:
                start = c
            elif not on and start is not None:
                if c - start >= length:
                    out[r, start:c] = True
                start = None
    return out


@pytest.mark.parametrize("trial", range(40))
def test_runs_marks_exactly_the_pixels_of_long_runs(trial: int) -> None:
    h, w = RNG.integers(1, 30, 2)
    mask = RNG.random((h, w)) < RNG.random()
    length = int(RNG.integers(1, 35))
    for m in (mask, mask.T):  # a transposed view: how vertical rules are found
        got = runs(m, length)
        assert got.dtype == bool and got.shape == m.shape
        assert (got == _runs_reference(m, length)).all()


def test_a_run_at_a_row_end_does_not_continue_on_the_next_row() -> None:
    mask = np.zeros((2, 5), dtype=bool)
    mask[0, 3:], mask[1, :2] = True, True  # 2 + 2 pixels, contiguous in memory
    assert not runs(mask, 3).any()
    assert runs(mask, 2).sum() == 4


def _box_reference(mask: np.ndarray, radius: int) -> np.ndarray:
    padded = np.pad(mask.astype(int), radius)
    k = 2 * radius + 1
    h, w = mask.shape
    return np.array([[padded[y : y + k, x : x + k].sum() for x in range(w)] for y in range(h)])


@pytest.mark.parametrize("radius", [0, 1, 3, 7])
def test_box_count_counts_the_square_around_each_pixel(radius: int) -> None:
    for _ in range(5):
        h, w = RNG.integers(1, 25, 2)
        mask = RNG.random((h, w)) < RNG.random()
        assert (box_count(mask, radius).astype(int) == _box_reference(mask, radius)).all()


def test_box_count_refuses_a_box_that_counts_past_a_byte() -> None:
    with pytest.raises(ValueError):
        box_count(np.ones((4, 4), dtype=bool), 8)


def test_block_stats_equal_float_mean_and_std() -> None:
    pixels = RNG.integers(0, 256, (64, 96)).astype(np.uint8)
    pixels[:16] = 230  # flat blocks: a standard deviation of exactly 0
    bh, bw = 64 // BLOCK, 96 // BLOCK
    blocks = pixels.astype(np.float64).reshape(bh, BLOCK, bw, BLOCK)
    mean, std = _block_stats(pixels, bh, bw)
    assert np.array_equal(mean, blocks.mean(axis=(1, 3)).astype(np.float32))
    assert np.allclose(std, blocks.std(axis=(1, 3)), atol=1e-3)
    assert (std[: 16 // BLOCK] == 0).all()


def test_the_noise_estimates_min_filter_is_pils() -> None:
    for shape in [(5, 5), (1, 9), (37, 61)]:
        grey = RNG.integers(0, 256, shape).astype(np.uint8)
        pil = np.asarray(Image.fromarray(grey).filter(ImageFilter.MinFilter(5)))
        assert np.array_equal(-max_filter(-grey.astype(np.int16), 5), pil.astype(np.int16))


def _resize_reference(pixels: np.ndarray, width: int, height: int, kind: str) -> np.ndarray:
    from models.embedded.image_ops import _taps

    src = pixels.astype(np.float32)
    yi, yw = _taps(pixels.shape[0], height, kind)
    rows = np.einsum("ytwc,yt->ywc", src[yi], yw)
    xi, xw = _taps(pixels.shape[1], width, kind)
    return np.clip(np.rint(np.einsum("yxtc,xt->yxc", rows[:, xi], xw)), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("kind", ["linear", "cubic"])
def test_resize_gathers_rows_before_converting_them(kind: str) -> None:
    pixels = RNG.integers(0, 256, (120, 90, 3)).astype(np.uint8)
    for width, height in [(40, 50), (200, 160), (90, 33)]:
        assert np.array_equal(resize(pixels, width, height, kind), _resize_reference(pixels, width, height, kind))
