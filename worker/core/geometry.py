"""Box arithmetic on (x0, y0, x1, y1) tuples; no dependencies."""

from __future__ import annotations

from collections.abc import Iterable

from worker.core.types import BBox


def area(b: BBox) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def intersection(a: BBox, b: BBox) -> BBox | None:
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[2], b[2]), min(a[3], b[3])
    if x1 <= x0 or y1 <= y0:
        return None
    return (x0, y0, x1, y1)


def intersection_area(a: BBox, b: BBox) -> float:
    i = intersection(a, b)
    return area(i) if i else 0.0


def iou(a: BBox, b: BBox) -> float:
    inter = intersection_area(a, b)
    union = area(a) + area(b) - inter
    return inter / union if union > 0 else 0.0


def overlap_1d(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def union_box(boxes: Iterable[BBox]) -> BBox:
    boxes = list(boxes)
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def clip(b: BBox, bounds: BBox) -> BBox:
    return (
        min(max(b[0], bounds[0]), bounds[2]),
        min(max(b[1], bounds[1]), bounds[3]),
        min(max(b[2], bounds[0]), bounds[2]),
        min(max(b[3], bounds[1]), bounds[3]),
    )


def center(b: BBox) -> tuple[float, float]:
    return ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)


def line_gap(a: BBox, b: BBox) -> tuple[float, float] | None:
    """(gap, height) of two boxes on one text line: the space between them across and the taller
    one's height; None where they overlap down by less than half of that height (two lines)."""
    h = max(a[3] - a[1], b[3] - b[1])
    if min(a[3], b[3]) - max(a[1], b[1]) < 0.5 * h:
        return None
    return max(a[0], b[0]) - min(a[2], b[2]), h
