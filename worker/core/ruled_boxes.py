"""The detector's tables checked against the page's ruled grids (a model-free second finder).

On a scan the layout detector can draw one box over two tables, or miss a table, where the
ruling lines still show each table plainly (a black-and-white photocopy: docs/scans.md). Two
rules, both on evidence the lines give:

- a box holding two or more separate grids is as many tables: it is replaced by the grids
  (grids that are one frame's parts, its row rules broken between them, count as one);
- a box holding a whole frame and cutting into another beyond it (above, below or to a side)
  is drawn back to the middle of the paper between them: a table's box never cuts through
  another table's frame (a photocopy's detector box over one table and the top half of the
  table above it, eu-003 p1 at seed 1, read a 4 x 6 table as 12 x 8);
- a box holding most of one grid is widened to hold all of it (a ruled frame is one table:
  the detector cut a photocopied demo table's last rows off); boxes that then coincide are one;
- a grid that no box covers is a table the detector missed: it is added (a grid of two rows
  only so: it may also be a part of a bigger table, so it never reshapes a box).

A box is never shrunk to its grid: the detector knows the table's unruled header and notes,
the grid only its frame. On the dev pages no table holds two grids.
"""

from __future__ import annotations

from dataclasses import replace

from worker.core.detections import TableBox
from worker.core.geometry import area, intersection_area, iou
from worker.core.types import BBox

INSIDE = 0.8  # a grid lies in a box when this share of its area does
MOSTLY = 0.5  # a box holding this share of a grid's area is widened to all of it
SAME = 0.8  # boxes overlapping by this IoU after widening are one table
UNCOVERED = 0.2  # a grid no box covers more than this share of is a missed table


def reconcile(
    boxes: list[TableBox], grids: list[BBox], score: float, min_widen: float = 0.0, frames: list[BBox] | None = None
) -> tuple[list[TableBox], int, int]:
    """The page's tables after the rules, with how many boxes were split and grids added.

    Added grids take `score` (the detector's threshold: they are as sure as its weakest table).
    A box is widened only on a side where the grid sticks out by `min_widen` pixels or more: a
    detector's edge a few pixels inside the frame is its usual margin, and moving it by 6 px cost a
    clean page's table its spanning header. A box is split only into separate `frames` (the
    grids, where no frames are given): grids that are one frame's parts, its row rules broken
    between them (`models.ruled_tables.frames`), are one table."""
    out: list[TableBox] = []
    split = 0
    parts = grids if frames is None else frames
    for box in boxes:
        inner = [g for g in parts if area(g) > 0 and intersection_area(g, box.bbox) >= INSIDE * area(g)]
        if len(inner) >= 2 and _separate(inner):
            out.extend(replace(box, bbox=g) for g in inner)
            split += 1
            continue
        box = replace(box, bbox=_clear_of(box.bbox, inner, parts))
        held = [g for g in grids if area(g) > 0 and intersection_area(g, box.bbox) >= MOSTLY * area(g)]
        if len(held) == 1:
            box = replace(box, bbox=_widened(box.bbox, held[0], min_widen))
        if all(iou(box.bbox, kept.bbox) < SAME for kept in out):
            out.append(box)
    out, added = with_uncovered(out, grids, score)
    return out, split, added


def with_uncovered(boxes: list[TableBox], grids: list[BBox], score: float) -> tuple[list[TableBox], int]:
    """`boxes` with each grid that no box covers added as a table at `score`; how many were."""
    out = list(boxes)
    added = 0
    for g in grids:
        if area(g) > 0 and all(intersection_area(g, b.bbox) <= UNCOVERED * area(g) for b in out):
            out.append(TableBox(g, score, False))
            added += 1
    return out, added


def held_grid(box: BBox, grids: list[BBox]) -> BBox | None:
    """The one grid lying in `box`, if exactly one does."""
    inner = [g for g in grids if area(g) > 0 and intersection_area(g, box) >= INSIDE * area(g)]
    return inner[0] if len(inner) == 1 else None


def _clear_of(box: BBox, held: list[BBox], frames: list[BBox]) -> BBox:
    """`box` drawn back out of the `frames` it cuts into but does not hold, where it holds whole
    frames (`held`, those lying in it) and the cut one lies wholly beyond them: its edge moves to
    the middle of the paper between them (a caption there is left to the crop-edge rules)."""
    if not held:
        return box
    x0, y0, x1, y1 = box
    left, top = min(f[0] for f in held), min(f[1] for f in held)
    right, bottom = max(f[2] for f in held), max(f[3] for f in held)
    for f in frames:
        if f in held or intersection_area(f, box) == 0:
            continue
        if f[1] >= bottom:
            y1 = min(y1, (bottom + f[1]) / 2)
        elif f[3] <= top:
            y0 = max(y0, (f[3] + top) / 2)
        elif f[0] >= right:
            x1 = min(x1, (right + f[0]) / 2)
        elif f[2] <= left:
            x0 = max(x0, (f[2] + left) / 2)
    return (x0, y0, x1, y1)


def _widened(box: BBox, grid: BBox, by: float) -> BBox:
    """`box` pushed out to `grid` on each side where the grid sticks out by `by` or more."""
    x0, y0, x1, y1 = box
    return (
        grid[0] if x0 - grid[0] >= by else x0,
        grid[1] if y0 - grid[1] >= by else y0,
        grid[2] if grid[2] - x1 >= by else x1,
        grid[3] if grid[3] - y1 >= by else y1,
    )


def _separate(grids: list[BBox]) -> bool:
    """No two of the grids overlap (nested or crossing grids are one table's parts)."""
    return all(intersection_area(a, b) == 0 for i, a in enumerate(grids) for b in grids[i + 1 :])
