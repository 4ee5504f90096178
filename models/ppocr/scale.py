"""The scale PP-OCR finds a strip's or crop's text lines at: large text on a reduced copy, read at full size.

The DB detector's cost follows its input's pixels, and a 300-dpi strip has 4.3x the pixels of
the same strip at 144 dpi, with text twice as tall as the detector needs to find it. So an image
whose text's x-height is well above `target` is detected at the scale that brings it to
`target`; the line boxes come back in the image's own pixels (`TextDetector.boxes` maps the
probability map onto the input), and the recogniser reads its line crops from the full-size
image, so the thin strokes it reads are kept (downscaling the page for every model cost TEDS:
docs/scans.md, "Rescale"). Images at ordinary render sizes are left at scale 1. Table crops are
reduced the same way: the detector stops seeing a lone dash at half size, but the dashes of empty
cells are found in the crop's pixels (models.dashes).
"""

from __future__ import annotations

REFERENCE_DPI = 144  # the renders the models read best; a strip is never reduced below this resolution
BAND = 1.3  # text within this factor of the target is detected as it is: a resampling would buy little
MIN_SCALE = 0.25  # never reduced further than this (an x-height estimate thrown by a figure or a rule)


def detection_scale(x_height: float, target: float, band: float = BAND) -> float:
    """The factor a crop is reduced by for detection: `target / x_height` when the text is more
    than `band` times `target` (never above 1: small text is not enlarged here; never below
    MIN_SCALE), else 1.0; 1.0 when either is unknown (0)."""
    if x_height <= 0 or target <= 0 or x_height <= target * band:
        return 1.0
    return round(max(MIN_SCALE, target / x_height), 4)


def dpi_floor(dpi: int) -> float:
    """The smallest detection scale for an image at `dpi`: the one that brings it to
    REFERENCE_DPI (1.0 at or below it). The x-height estimate alone is not enough: on 144-dpi
    photocopied strips, toner specks made it 22 and 97 px, which would have reduced strips that
    are already at the size the models read best (docs/speed.md, Round 8)."""
    return 1.0 if dpi <= REFERENCE_DPI else round(REFERENCE_DPI / dpi, 4)
