"""Rows and columns as bands: filter, de-duplicate and snap them into a gap-free partition.

A structure model emits rows and columns as boxes that overlap, leave gaps, repeat
themselves with lower scores and stop short of the table edge. Reconstruction needs the
opposite: an ordered list of bands along one axis that tile the table box exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from worker.core.geometry import overlap_1d
from worker.core.types import BBox


@dataclass(slots=True)
class Band:
    """One row (axis 'y') or column (axis 'x'): an interval on its axis and the model's score."""

    lo: float
    hi: float
    score: float

    @property
    def size(self) -> float:
        return self.hi - self.lo

    @property
    def mid(self) -> float:
        return (self.lo + self.hi) / 2


def interval(box: BBox, axis: str) -> tuple[float, float]:
    return (box[1], box[3]) if axis == "y" else (box[0], box[2])


def suppress_duplicates(bands: list[Band], max_overlap: float) -> tuple[list[Band], int]:
    """Keep the best-scoring band of every group whose 1-D IoU exceeds `max_overlap`.

    IoU rather than overlap of the smaller band: jittered true neighbours overlap a lot of
    the thinner one, yet they are two rows; a real duplicate covers nearly the same extent.
    (Measured with `tablesight eval oracle`: high noise TEDS 0.853 -> 0.880.)
    Returns the survivors sorted along the axis and how many were dropped.
    """
    kept: list[Band] = []
    for band in sorted(bands, key=lambda b: (-b.score, b.lo)):
        if band.size <= 0:
            continue
        duplicate = False
        for other in kept:
            shared = overlap_1d(band.lo, band.hi, other.lo, other.hi)
            union = band.size + other.size - shared
            if union > 0 and shared / union > max_overlap:
                duplicate = True
                break
        if not duplicate:
            kept.append(band)
    kept.sort(key=lambda b: b.mid)
    return kept, len(bands) - len(kept)


def snap(bands: list[Band], lo: float, hi: float) -> list[Band]:
    """Tile [lo, hi] with the bands: neighbours meet half-way across their gap or overlap.

    The first band starts at `lo` and the last ends at `hi` (the table edge), so every point of
    the table belongs to exactly one band and no empty row or column is lost.
    """
    if not bands:
        return []
    out = [Band(b.lo, b.hi, b.score) for b in bands]
    out[0].lo = lo
    out[-1].hi = hi
    for a, b in zip(out, out[1:]):
        cut = (a.hi + b.lo) / 2
        # a band must keep a positive size even when its neighbour swallowed it
        cut = min(max(cut, a.lo + 1e-6), b.hi - 1e-6)
        a.hi = cut
        b.lo = cut
    return out


def covered(bands: list[Band], lo: float, hi: float, min_fraction: float = 0.5) -> list[int]:
    """Indices of bands more than `min_fraction` of whose extent lies inside [lo, hi].

    On a snapped (contiguous, sorted) list the result is always a contiguous range.
    """
    hits = []
    for i, b in enumerate(bands):
        if b.size > 0 and overlap_1d(lo, hi, b.lo, b.hi) > min_fraction * b.size:
            hits.append(i)
    if hits:
        return list(range(hits[0], hits[-1] + 1))
    return hits


def best_band(bands: list[Band], lo: float, hi: float) -> int | None:
    """The band sharing most of [lo, hi]; None when nothing overlaps."""
    best, best_overlap = None, 0.0
    for i, b in enumerate(bands):
        o = overlap_1d(lo, hi, b.lo, b.hi)
        if o > best_overlap:
            best, best_overlap = i, o
    return best
