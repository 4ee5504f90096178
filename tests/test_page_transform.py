"""Affine maps between the page as it came in and the normalised page (worker.core.page_transform)."""

from __future__ import annotations

import math

import pytest

from worker.core.page_transform import (
    IDENTITY,
    PageTransform,
    angle_of,
    apply,
    compose,
    invert,
    map_box,
    quarter_turn,
    rotation,
    scaling,
    translation,
    unbound_box,
)


def _close(a: tuple[float, ...], b: tuple[float, ...], tol: float = 1e-6) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


def test_compose_applies_first_then_second() -> None:
    m = compose(translation(10, 0), scaling(2))
    assert _close(apply(m, 1, 1), (22, 2))
    assert _close(compose(IDENTITY, m), m) and _close(compose(m, IDENTITY), m)


@pytest.mark.parametrize("angle", [-5.0, -1.5, 0.3, 2.0, 37.0, 90.0])
def test_invert_undoes_a_rotation_about_a_point(angle: float) -> None:
    m = compose(rotation(angle, 600, 800), translation(13, -7))
    back = invert(m)
    for x, y in [(0, 0), (1200, 0), (333, 1500)]:
        assert _close(apply(back, *apply(m, x, y)), (x, y), 1e-6)
    assert angle_of(m) == pytest.approx(angle)


def test_rotation_turns_counter_clockwise_on_screen() -> None:
    # y runs down: a point right of the centre goes up when turned counter-clockwise
    x, y = apply(rotation(90, 0, 0), 10, 0)
    assert _close((x, y), (0, -10))


def test_quarter_turns_map_corners_into_the_turned_frame() -> None:
    w, h = 400.0, 300.0
    # one turn counter-clockwise: the top-right corner becomes the top-left one, the frame is h x w
    assert _close(apply(quarter_turn(1, w, h), w, 0), (0, 0))
    assert _close(apply(quarter_turn(1, w, h), 0, h), (h, w))
    assert _close(apply(quarter_turn(2, w, h), 0, 0), (w, h))
    assert _close(apply(quarter_turn(3, w, h), 0, 0), (h, 0))
    for turns in range(4):
        m = compose(quarter_turn(turns, w, h), invert(quarter_turn(turns, w, h)))
        assert _close(m, IDENTITY)


def test_map_box_bounds_the_rotated_rectangle() -> None:
    box = (100.0, 100.0, 300.0, 200.0)
    x0, y0, x1, y1 = map_box(rotation(30, 200, 150), box)
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    assert x1 - x0 == pytest.approx(200 * c + 100 * s)
    assert y1 - y0 == pytest.approx(200 * s + 100 * c)
    assert ((x0 + x1) / 2, (y0 + y1) / 2) == pytest.approx((200, 150))


@pytest.mark.parametrize("angle", [0.5, -1.0, 2.0, -5.0, 90.0, 180.0, -90.0])
@pytest.mark.parametrize("scale", [1.0, 200 / 144])
def test_unbound_box_recovers_the_upright_box_behind_a_bounding_box(angle: float, scale: float) -> None:
    """A table on a skewed, rescaled scan, boxed upright by a detector, maps back to its own box."""
    table = (150.0, 420.0, 1050.0, 560.0)  # wide and short: the case a plain bounding box gets wrong
    to_scan = compose(scaling(scale), rotation(angle, 612 * scale, 792 * scale))
    seen = map_box(to_scan, table)  # what a detector boxes on the scan
    back = unbound_box(invert(to_scan), seen)
    assert _close(back, table, 1e-6)


def test_unbound_box_keeps_the_bounds_where_no_upright_box_fits() -> None:
    m = rotation(3.0, 0, 0)
    box = (0.0, 0.0, 100.0, 1.0)  # too thin to be the bounds of anything rotated by 3 degrees
    assert unbound_box(m, box) == map_box(m, box)


def test_page_transform_maps_boxes_back_onto_the_original_page_clipped() -> None:
    w, h = 1000, 800
    to_norm = rotation(2.0, w / 2, h / 2)
    t = PageTransform(invert(to_norm), 0, 2.0, 1.0, (w, h), (w, h))
    box = (100.0, 100.0, 400.0, 200.0)
    assert _close(t.box_to_original(map_box(to_norm, box)), map_box(invert(to_norm), map_box(to_norm, box)))
    assert t.box_to_original((-50.0, -50.0, 2000.0, 2000.0)) == (0.0, 0.0, 1000.0, 800.0)
    same = PageTransform(IDENTITY, 0, 0.0, 1.0, (w, h), (w, h))
    assert same.is_identity and same.box_to_original(box) == box


def test_singular_maps_are_refused() -> None:
    with pytest.raises(ValueError):
        invert((0.0, 0.0, 1.0, 0.0, 0.0, 1.0))
