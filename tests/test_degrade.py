"""The seeded scan simulator (worker.evaluation.degrade): deterministic, varied, and its maps exact."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from worker.core.page_transform import apply, invert, map_box, unbound_box
from worker.evaluation.degrade import KINDS, STRENGTHS, degrade, degrade_page, page_seed, parse_kinds, render_dpi


def _page(dpi: int = 144) -> Image.Image:
    """A white page with three black marks at known places (a scale of `dpi`/144)."""
    s = dpi / 144
    img = Image.new("RGB", (round(850 * s), round(1100 * s)), "white")
    draw = ImageDraw.Draw(img)
    for x, y in MARKS:
        draw.rectangle((x * s, y * s, (x + 8) * s - 1, (y + 8) * s - 1), fill="black")
    return img


MARKS = [(150, 200), (700, 260), (400, 900)]


def _dark_centroids(image: Image.Image, near: list[tuple[float, float]], radius: float) -> list[tuple[float, float]]:
    grey = np.asarray(image.convert("L"), dtype=np.float32)
    out = []
    for x, y in near:
        x0, y0 = max(0, int(x - radius)), max(0, int(y - radius))
        win = 255.0 - grey[y0 : int(y + radius), x0 : int(x + radius)]
        win = np.where(win > 100, win, 0.0)  # the mark, not the paper, noise or a stray speck
        ys, xs = np.nonzero(win)
        w = win[ys, xs]
        out.append((x0 + float((xs * w).sum() / w.sum()) + 0.5, y0 + float((ys * w).sum() / w.sum()) + 0.5))
    return out


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_is_deterministic_by_seed_and_varies_with_it(kind: str) -> None:
    page = _page()
    a, b = degrade(page, 144, kind, "moderate", seed=5), degrade(page, 144, kind, "moderate", seed=5)
    assert np.array_equal(np.asarray(a.image), np.asarray(b.image)) and a.params == b.params
    assert a.to_degraded == b.to_degraded
    if kind != "clean":
        others = [degrade(page, 144, kind, "moderate", seed=s) for s in (6, 7, 8)]
        assert any(o.params != a.params or not np.array_equal(np.asarray(o.image), np.asarray(a.image)) for o in others)
        assert not np.array_equal(np.asarray(a.image.convert("L")), np.asarray(page.convert("L")))


@pytest.mark.parametrize("kind", ["skew-0.5", "skew-1", "skew-2", "skew-5", "rot-90", "rot-180", "dpi-150", "office"])
def test_the_map_puts_each_mark_where_the_degraded_page_shows_it(kind: str) -> None:
    dpi = render_dpi(kind, 144)
    for seed in (1, 2):
        done = degrade_page(lambda d: _page(d), 144, kind, "moderate", seed)
        centres = [apply(done.to_degraded, x + 4, y + 4) for x, y in MARKS]
        found = _dark_centroids(done.image, centres, radius=16 * done.dpi / 144)
        for want, got in zip(centres, found, strict=True):
            assert abs(want[0] - got[0]) < 1.5 and abs(want[1] - got[1]) < 1.5, (kind, seed, want, got)
        assert dpi >= 144


def test_a_box_boxed_on_the_degraded_page_maps_back_onto_the_clean_one() -> None:
    table = (100.0, 300.0, 760.0, 420.0)
    for kind in ("skew-5", "rot-90", "office"):
        done = degrade_page(lambda d: _page(d), 144, kind, "strong", seed=3)
        seen = map_box(done.to_degraded, table)  # the upright box a tool draws on the scan
        back = unbound_box(invert(done.to_degraded), seen)
        assert all(abs(a - b) < 0.5 for a, b in zip(back, table, strict=True)), (
            kind,
            back,
        )  # resampling rounds the size


def test_strengths_grow_and_parameters_stay_in_their_band() -> None:
    page = _page()
    sigmas = [degrade(page, 144, "blur", s, seed=0).params["sigma"] for s in STRENGTHS]
    assert sigmas == sorted(sigmas)
    qualities = [degrade(page, 144, "jpeg", s, seed=0).params["quality"] for s in STRENGTHS]
    assert qualities == sorted(qualities, reverse=True)
    angles = {abs(degrade(page, 144, "skew-2", "moderate", seed=s).params["angle"]) for s in range(20)}
    assert all(1.8 <= a <= 2.2 for a in angles) and len(angles) > 5
    office = [degrade(page, 144, "office", "moderate", seed=s) for s in range(10)]
    assert all(o.dpi == 200 and abs(o.params["angle"]) <= 1.5 for o in office)
    assert all(o.image.size == (round(850 * 200 / 144), round(1100 * 200 / 144)) for o in office)


def test_kinds_and_seeds_are_checked_and_pages_get_their_own_seeds() -> None:
    assert parse_kinds("skew-1, blur") == ["skew-1", "blur"]
    with pytest.raises(ValueError, match="wobble"):
        parse_kinds("skew-1,wobble")
    with pytest.raises(ValueError):
        degrade(_page(), 144, "blur", "extreme")
    assert page_seed(0, "a:1") == page_seed(0, "a:1") != page_seed(0, "a:2") != page_seed(1, "a:1")
    photocopy = np.asarray(degrade(_page(), 144, "photocopy", "moderate", seed=0).image)
    assert set(np.unique(photocopy)) <= {0, 255}
    tint = degrade(_page(), 144, "tint", "strong", seed=0).image
    assert tint.mode == "RGB" and np.asarray(tint)[5, 5].std() > 2  # coloured paper
