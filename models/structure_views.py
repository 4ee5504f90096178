"""Other views of a table crop for the structure model's second reading (worker.pipeline.second_look).

SLANet-plus is brittle on scanned crops: the same crop with sensor grain, toner spread or
JPEG blocks can come back as three rows where the text has fifteen, and a small change of the
pixels (a median filter, a blur) can give the fifteen back, or lose them (docs/scans.md,
Round 11). No single view mends every crop, so the pipeline reads a crop whose numbers share
cells again on each of these views and keeps the reading that parts its numbers best (a view
that parts them all can still split a column in two: it is not taken before the others are read).

- a 5x5 median: grain and specks go, strokes stay (a 3x3 one is `models.denoise`'s view);
- Gaussian blurs of 1.5 and 2 px: the grain and the blocks are smoothed into the paper.

PIL only; each view has the crop's size, so the cell boxes read on it are the crop's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from PIL import Image, ImageFilter

VIEWS: tuple[tuple[str, Callable[[Image.Image], Image.Image]], ...] = (
    ("median-filtered", lambda im: im.filter(ImageFilter.MedianFilter(5))),
    ("blurred (1.5 px)", lambda im: im.filter(ImageFilter.GaussianBlur(1.5))),
    ("blurred (2 px)", lambda im: im.filter(ImageFilter.GaussianBlur(2.0))),
)


def second_views(crop: Image.Image, limit: int | None = None) -> Iterator[tuple[str, Image.Image]]:
    """(name, view) for each view of `crop`, made as it is asked for."""
    for name, make in VIEWS[:limit]:
        yield name, make(crop)
