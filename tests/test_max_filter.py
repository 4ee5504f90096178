"""models.max_filter stands in for PIL's MaxFilter in page normalisation and rule erasing: it must
give the same pixels, borders included, for every odd size those callers use."""

import numpy as np
import pytest
from PIL import Image, ImageFilter

from models.max_filter import max_filter


@pytest.mark.parametrize("size", [1, 3, 5, 7, 15, 31])
@pytest.mark.parametrize("shape", [(1, 1), (1, 9), (6, 2), (37, 41)])
def test_equals_pil_max_filter_on_grey(size, shape):
    grey = np.random.default_rng(size * 100 + shape[0]).integers(0, 256, shape, dtype=np.uint8)
    want = np.asarray(Image.fromarray(grey).filter(ImageFilter.MaxFilter(size)))
    got = max_filter(grey, size)
    assert got.dtype == np.uint8 and got.shape == grey.shape
    assert np.array_equal(got, want)


def test_dilates_a_mask_as_pil_does():
    mask = np.random.default_rng(3).random((60, 80)) > 0.97
    want = np.asarray(Image.fromarray(mask.astype(np.uint8) * 255).filter(ImageFilter.MaxFilter(5))) > 0
    got = max_filter(mask, 5)
    assert got.dtype == bool and np.array_equal(got, want)
    assert got.sum() > mask.sum()  # it grew


def test_refuses_even_sizes_and_other_ranks():
    with pytest.raises(ValueError, match="odd"):
        max_filter(np.zeros((4, 4), np.uint8), 4)
    with pytest.raises(ValueError, match="2-D"):
        max_filter(np.zeros((4, 4, 3), np.uint8), 3)
