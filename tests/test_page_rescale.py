"""Page rescaling in normalisation (models.page_normalise): the x-height estimate follows the
text's size, a page far from the target size is scaled to it, and every box maps back onto the
page as it came in exactly. Pure numpy/PIL on the demo's sample pages: no model is loaded."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
from PIL import Image

from models.page_normalise import NormaliseOptions, estimate_x_height, normalise_page, rescale, rescale_factor
from worker.core.page_transform import apply, invert, map_box
from worker.devtools.samples import financial_table, make_page


@lru_cache(maxsize=4)
def _page(scale: float):
    """The demo's financial page drawn at `scale` times its 200-dpi size (fonts scaled alike):
    at 1.0 its x-height is about 15 px, at 0.75 about the target 11."""
    return make_page(
        [financial_table()],
        page_size_px=(round(1700 * scale), round(2200 * scale)),
        font_size=round(28 * scale),
        table_font_size=round(24 * scale),
        title="Annual report 2024: revenue and cost by region",
        seed=1,
    )


def _ink_box(image: Image.Image) -> tuple[float, float, float, float]:
    ys, xs = np.nonzero(np.asarray(image.convert("L")) < 128)
    return float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1)


def test_x_height_follows_the_size_of_the_text() -> None:
    small, large = estimate_x_height(_page(0.45).image), estimate_x_height(_page(1.0).image)
    assert 12 <= large <= 17, large  # 24-28 px fonts at 200 dpi
    assert 1.9 <= large / small <= 2.6, (small, large)  # 1 / 0.45 = 2.2


@pytest.mark.parametrize(("x_height", "expected"), [(11.0, 1.0), (12.5, 1.0), (5.5, 2.0), (22.0, 0.5), (2.0, 2.5)])
def test_rescale_factor_leaves_pages_near_the_target_alone(x_height: float, expected: float) -> None:
    assert rescale_factor(x_height, 11.0, 1.3) == pytest.approx(expected)
    assert rescale_factor(0.0, 11.0, 1.3) == 1.0  # no text line: nothing to go by


def test_rescale_map_is_exact_for_the_rounded_size() -> None:
    image = Image.new("L", (1001, 757), 255)
    out, m = rescale(image, 1.7)
    assert out.size == (round(1001 * 1.7), round(757 * 1.7))
    # the page's corners map onto the rescaled page's corners, and back, exactly
    assert map_box(m, (0.0, 0.0, 1001.0, 757.0)) == pytest.approx((0.0, 0.0, *out.size))
    back = invert(m)
    assert apply(back, *out.size) == pytest.approx((1001.0, 757.0))


@pytest.mark.parametrize("scale", [0.45, 1.0])
def test_a_page_far_from_the_target_is_rescaled_and_its_boxes_map_back(scale: float) -> None:
    page = _page(scale)
    done = normalise_page(page.image, NormaliseOptions(orientation="off", rescale=True))
    t = done.transform
    assert t.original_size == page.image.size
    assert (t.scale > 1.5) if scale < 1 else (t.scale < 0.77), t.scale
    # the rescaled page's text has the target size
    assert estimate_x_height(done.image) == pytest.approx(11.0, rel=0.25)
    # the ink on the rescaled page maps back onto the ink of the page as it came in
    assert t.box_to_original(_ink_box(done.image)) == pytest.approx(_ink_box(page.image), abs=2.5)
    # and a box (the table's) carried onto the rescaled page comes back exactly
    for box in page.table_boxes:
        on_normalised = map_box(invert(t.to_original), box)
        assert t.box_to_original(on_normalised) == pytest.approx(box, abs=1e-6)


def test_a_page_at_the_target_size_is_left_alone() -> None:
    page = _page(0.75)
    done = normalise_page(page.image, NormaliseOptions(orientation="off", rescale=True))
    assert done.transform.scale == 1.0 and done.image.size == page.image.size
