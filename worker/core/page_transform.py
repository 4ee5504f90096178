"""Affine maps between a page as it came in and the page the models saw, and boxes through them.

Page normalisation (orientation, deskew, rescaling) and the scan simulator both move pixels
by an affine map. Everything stored stays in the coordinates of the page as it came in, so
boxes found on the normalised page go back through the inverse map. An axis-aligned box on
one side becomes a rotated rectangle on the other: `map_box` gives its bounding box (what
covers the content), `unbound_box` the upright box whose image that bounding box is (what a
detector would have drawn on the upright page).

An `Affine` is `(a, b, c, d, e, f)`: x' = a*x + b*y + c, y' = d*x + e*y + f, in pixels with
the origin at the top-left corner and y running down.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from worker.core.types import BBox

Affine = tuple[float, float, float, float, float, float]
IDENTITY: Affine = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0)


def compose(first: Affine, then: Affine) -> Affine:
    """The map that applies `first`, then `then`."""
    a1, b1, c1, d1, e1, f1 = first
    a2, b2, c2, d2, e2, f2 = then
    return (
        a2 * a1 + b2 * d1,
        a2 * b1 + b2 * e1,
        a2 * c1 + b2 * f1 + c2,
        d2 * a1 + e2 * d1,
        d2 * b1 + e2 * e1,
        d2 * c1 + e2 * f1 + f2,
    )


def invert(m: Affine) -> Affine:
    """The inverse map; raises ValueError for a singular one."""
    a, b, c, d, e, f = m
    det = a * e - b * d
    if abs(det) < 1e-12:
        raise ValueError("singular affine map")
    ia, ib, id_, ie = e / det, -b / det, -d / det, a / det
    return (ia, ib, -(ia * c + ib * f), id_, ie, -(id_ * c + ie * f))


def apply(m: Affine, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return (a * x + b * y + c, d * x + e * y + f)


def translation(dx: float, dy: float) -> Affine:
    return (1.0, 0.0, dx, 0.0, 1.0, dy)


def scaling(sx: float, sy: float | None = None) -> Affine:
    return (sx, 0.0, 0.0, 0.0, sx if sy is None else sy, 0.0)


def rotation(degrees: float, cx: float = 0.0, cy: float = 0.0) -> Affine:
    """Rotate by `degrees` about (cx, cy); positive turns the content counter-clockwise on
    screen (y down), as PIL's `Image.rotate` does."""
    t = math.radians(degrees)
    cos, sin = math.cos(t), math.sin(t)
    # counter-clockwise on screen with y down: x' = cos x + sin y, y' = -sin x + cos y
    return compose(compose(translation(-cx, -cy), (cos, sin, 0.0, -sin, cos, 0.0)), translation(cx, cy))


def quarter_turn(turns: int, width: float, height: float) -> Affine:
    """Turn a `width` x `height` image by `turns` x 90 degrees counter-clockwise, into the
    frame of the turned image (PIL's `transpose(ROTATE_90)` for one turn)."""
    turns %= 4
    if turns == 0:
        return IDENTITY
    if turns == 1:  # (x, y) -> (y, W - x)
        return (0.0, 1.0, 0.0, -1.0, 0.0, width)
    if turns == 2:
        return (-1.0, 0.0, width, 0.0, -1.0, height)
    return (0.0, -1.0, height, 1.0, 0.0, 0.0)  # (x, y) -> (H - y, x)


def corners(box: BBox) -> list[tuple[float, float]]:
    x0, y0, x1, y1 = box
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def map_box(m: Affine, box: BBox) -> BBox:
    """The axis-aligned bounding box of `box` mapped through `m`."""
    pts = [apply(m, x, y) for x, y in corners(box)]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return (min(xs), min(ys), max(xs), max(ys))


def angle_of(m: Affine) -> float:
    """The rotation part of `m` in degrees (counter-clockwise on screen), in (-180, 180]."""
    a, b = m[0], m[1]
    return math.degrees(math.atan2(b, a))


def unbound_box(m: Affine, box: BBox) -> BBox:
    """The upright box in `m`'s target frame that best explains `box`.

    `box` is taken to be the bounding box of an upright rectangle of the target frame as it
    appears in the source frame (a table on a skewed scan, boxed by a detector). Its centre maps
    through `m`; its size is solved from W = w|cos| + h|sin|, H = w|sin| + h|cos| and scaled by
    the map's scale. Near 45 degrees, or where no positive solution exists, it is the mapped
    bounding box (`map_box`).
    """
    a, b, c, d, e, f = m
    s = math.sqrt(abs(a * e - b * d))  # the map's (mean) scale
    cx, cy = apply(m, (box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
    big_w, big_h = box[2] - box[0], box[3] - box[1]
    t = math.radians(angle_of(m))
    cos, sin = abs(math.cos(t)), abs(math.sin(t))
    det = cos * cos - sin * sin
    w = h = -1.0
    if abs(det) > 0.2:  # (w, h): the upright rectangle's sides along the target frame's axes
        w = (big_w * cos - big_h * sin) / det
        h = (big_h * cos - big_w * sin) / det
    if w <= 0 or h <= 0:  # not the bounding box of any upright rectangle: keep the mapped bounds
        return map_box(m, box)
    w, h = w * s, h * s
    return (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


@dataclass(frozen=True)
class PageTransform:
    """How the normalised page was made from the page as it came in.

    `to_original` maps normalised-page pixels to original-page pixels; `quarter_turns` is the
    orientation correction (counter-clockwise, x 90 degrees), `skew` the deskew angle applied
    (degrees, counter-clockwise), `scale` the resampling factor, `size` the normalised page's
    pixel size and `original_size` the input's.
    """

    to_original: Affine
    quarter_turns: int
    skew: float
    scale: float
    size: tuple[int, int]
    original_size: tuple[int, int]

    @property
    def is_identity(self) -> bool:
        return self.quarter_turns % 4 == 0 and self.skew == 0.0 and self.scale == 1.0

    def box_to_original(self, box: BBox) -> BBox:
        """A box on the normalised page, as the bounding box of its area on the original page."""
        if self.is_identity:
            return box
        x0, y0, x1, y1 = map_box(self.to_original, box)
        w, h = self.original_size
        return (max(0.0, x0), max(0.0, y0), min(float(w), x1), min(float(h), y1))
