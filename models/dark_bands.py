"""Dark header bands read back as paper with dark letters: white-on-black labels a photocopy kept.

A header printed white on a dark fill survives a photocopier (or a thresholded scan) as a band
of nearly solid black with white letters and scattered white dots where the fill was not quite
black. The OCR and the structure model are trained on dark ink on paper: they read such a band
as nothing, so its labels, and with them every value's column, are lost (docs/scans.md, Round 23).
The fill flattening (`models.fills`) does not take it for a fill: a fill there is flat grey, and
this band is black and white at once.

A band is where ink covers most of every square around a pixel (`DENSE_SHARE` of a
`DENSE_RADIUS` square), in horizontal runs wider than a few letters (`MIN_WIDTH_PX`: a bold
glyph's stroke is never that dense over that width); the letters inside it are the pixels with
band on both sides within `LETTER_REACH`; it is as tall as a line of text (`MIN_HEIGHT_PX`: a
thick rule is not), and it is grown to the rectangle of columns mostly ink over its rows (the
squares miss the middle of a long bold label); a shorter band beside a taller one is grown
over its own rows. Inside a band the white dots (white pixels with at most one white
neighbour; a letter's stroke has more along it) are turned black, the band is inverted, and
the specks the dots left are wiped. A band that then holds no letters (too few pixels in stems
`STEM_PX` tall) is put back as it was. Pixels outside every band stay as they are.

numpy only; an image without a band costs one box count on one-byte arrays.
"""

from __future__ import annotations

import numpy as np

from models.box_filters import between, box_count, box_sum
from models.rules import run_bounds, runs

INK = 128  # darker than this is ink
DENSE_RADIUS = 6  # the ink's share is judged over (2 * 6 + 1) px squares: larger than a stroke
DENSE_SHARE = 0.6  # ... and a band covers more than this share of them (bold text: under 0.5)
MIN_WIDTH_PX = 60  # a band runs at least this wide: several letters, more than any glyph
LETTER_REACH = 12  # px: a letter inside a band has band on both sides within this (rows between
# two bands further apart than twice this stay as they are)
MIN_HEIGHT_PX = 20  # ... and at least this tall, letters included: a text line and its margins (a
# thick rule under bold letters is as dense, but only as tall as the rule; large bold letters on
# a light screen, only as tall as the letters)
COLUMN_SHARE = 0.5  # a band's column is mostly ink in the top and bottom quarter of its rows
# (the margins above and below its letters)
MIN_COVER = 0.8  # once grown, a band covers this share of each of its columns' rows or more
COLUMN_SMOOTH = 2  # px each side: a thin white line between two header cells does not split a band
MAX_DOT_NEIGHBOURS = 1  # a white dot in a band has at most this many white neighbours
STEM_PX = 6  # read back, a band's letters have stems at least this tall (9 pt at 144 dpi: 10+ px) ...
MIN_STEM_SHARE = 0.006  # ... on this share of it or more (dev labels read: 5-10%, one word on a
# block: 1.3%; erased by the threshold, specks only: 0.2%)


def band_mask(grey: np.ndarray) -> np.ndarray:
    """Where `grey` (paper light) is a dark band, the letters inside it included."""
    ink = np.asarray(grey) < INK
    side = 2 * DENSE_RADIUS + 1
    count = box_count(np.pad(ink, DENSE_RADIUS, mode="edge"), DENSE_RADIUS)  # edges repeated
    dense = count[DENSE_RADIUS:-DENSE_RADIUS, DENSE_RADIUS:-DENSE_RADIUS] > DENSE_SHARE * side * side
    wide = runs(dense, MIN_WIDTH_PX)
    if not wide.any():
        return wide
    band = runs((wide | between(wide, LETTER_REACH)).T, MIN_HEIGHT_PX).T
    return _whole(band, ink)


def _whole(band: np.ndarray, ink: np.ndarray, again: bool = True) -> np.ndarray:
    """Each band grown to the rectangle it is printed as. Over the rows a band spans, it takes
    every run of columns mostly ink in the top and the bottom quarter of those rows (above and
    below the letters) that holds part of it: bold white words fill most of a square around
    them, so the squares alone leave a long label's middle dark and split the band (a header
    row half read is worse than none: it splits a column). Columns the band then covers less
    than `MIN_COVER` of are a shorter band beside a taller one (years dark over a white
    'N | %' sub-header, beside a stub block dark over both rows): judged by its bottom quarter
    the tall one does not grow over them, and read back with it they came out in patches. They
    are taken once more as bands of their own rows. A band is left at least `MIN_WIDTH_PX`
    wide, or dropped: a screen of mid-grey dots passes the cover test in scattered columns, and
    read back in slivers its labels were lost (dev page eu-020 p3, photocopied)."""
    window = np.ones(2 * COLUMN_SMOOTH + 1) / (2 * COLUMN_SMOOTH + 1)
    short = np.zeros_like(band)
    for top, bottom in run_bounds(band.any(axis=1)):
        edge = max(1, (bottom - top) // 4)
        share = np.minimum(
            np.convolve(ink[top : top + edge].mean(axis=0), window, mode="same"),
            np.convolve(ink[bottom - edge : bottom].mean(axis=0), window, mode="same"),
        )
        rows = band[top:bottom]
        for left, right in run_bounds(share > COLUMN_SHARE):
            if rows[:, left:right].any():
                rows[:, left:right] = True
        partial = rows.mean(axis=0) < MIN_COVER
        short[top:bottom, partial] = rows[:, partial]
        rows[:, partial] = False
        for left, right in run_bounds(rows.any(axis=0)):
            if right - left < MIN_WIDTH_PX:  # what is left of a band is a band, or nothing
                rows[:, left:right] = False
    if again and short.any():
        band |= _whole(runs(runs(short.T, MIN_HEIGHT_PX).T, MIN_WIDTH_PX), ink, again=False)
    return band


def invert_dark_bands(grey: np.ndarray) -> np.ndarray:
    """`grey` (float or uint8, paper light) with every dark band turned to paper and its letters
    to dark ink; the same array back when it holds none."""
    band = band_mask(grey)
    if not band.any():
        return grey
    from models.page_normalise import wipe_specks  # here: page_normalise imports this module

    ink = np.asarray(grey) < INK
    white = ~ink
    dots = white & (box_sum(white, 1) - white <= MAX_DOT_NEIGHBOURS)
    out = np.asarray(grey, dtype=np.float32).copy()
    out[band] = 255.0 - np.where(dots, 0.0, out)[band]
    wiped = wipe_specks(out.copy(), rules_aside=False)
    out[band] = wiped[band]
    _keep_letterless(out, np.asarray(grey), band)
    return out.astype(np.asarray(grey).dtype)


def _keep_letterless(out: np.ndarray, grey: np.ndarray, band: np.ndarray) -> None:
    """Put back, in `out`, each band that read back holds no letters: a threshold that erased
    them leaves specks, and a black bar the structure model still takes for a header row is
    better than blank paper it merges away (dev page eu-024 p2, photocopied: its header lost)."""
    letters = out < INK
    for top, bottom in run_bounds(band.any(axis=1)):
        stems = runs(letters[top:bottom].T, STEM_PX).T
        for left, right in run_bounds(band[top:bottom].any(axis=0)):
            piece = band[top:bottom, left:right]
            if stems[:, left:right][piece].mean() < MIN_STEM_SHARE:
                out[top:bottom, left:right][piece] = grey[top:bottom, left:right][piece]
