"""How a page was normalised before detection (turned, deskewed): stored with the page and its tables."""

from __future__ import annotations

from typing import ClassVar

from worker.contract.base import Contract, Number


class PageTransformRecord(Contract):
    """The map from the normalised page the models saw back to the page as it came in.

    `to_original` is the affine map (a, b, c, d, e, f): x = a*u + b*v + c, y = d*u + e*v + f
    takes a pixel (u, v) of the normalised page to the original page. A table's `bbox` is in the
    original page's pixels; its `crop_box`, crop image and cell boxes are on the normalised page.
    """

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"orientation_confidence", "second_pass_tables"})

    to_original: list[Number]
    quarter_turns: int  # orientation fix, counter-clockwise quarter turns
    skew: Number  # deskew rotation applied, degrees counter-clockwise (0 when under the minimum)
    skew_estimate: Number  # the angle the page's lines were found at, degrees counter-clockwise
    orientation_confidence: Number | None = None
    scale: Number = 1.0
    size: list[int]  # the normalised page, pixels
    original_size: list[int]
    second_pass_tables: int | None = None  # tables found by the recall fallback on the page as it came in
