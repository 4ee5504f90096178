"""Labels on a photocopied grey band read a second time, with the band's dots cleared.

The first read of a black-and-white crop finds no text line in a light header band the
photocopy turned into dots (`models.bold_screens`); every value under those labels then has no
column. This reads the rows of the crop that hold such bands again, the bands cleared, and keeps
only what the first read lacks, so a band it did read (a dark band's white labels) is left as it
was. Only those rows: the second read costs what the bands hold, not what the table does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PIL import Image

from worker.core.geometry import center, intersection
from worker.core.types import Word

SECOND_READ_MIN_CONFIDENCE = 0.6
STRIP_MARGIN = 12  # px of the crop read above and below a band


def read_bold_screens(
    raw: Image.Image, words: list[Word], ocr: Callable[[Image.Image], list[Word]]
) -> tuple[list[Word], int]:
    """`words` and the words a second read finds in the light dotted bands of the black-and-white
    crop `raw`, read with the bands cleared of their dots (`models.bold_screens`: a photocopied
    grey header band's bold labels), where the first read has no word; a junk read there (less
    than two letters or digits) under a new word goes. A new word read unsurely (under
    SECOND_READ_MIN_CONFIDENCE) is left out: in a dark band the cleared dots read as `ii` or `11`
    and took a column's label. Also how many words were added."""
    from models.bold_screens import bold_screens
    from models.page_normalise import soften_binary

    grey = np.asarray(raw.convert("L"))
    bands = bold_screens(grey)
    if not bands:
        return words, 0
    cleared = grey.copy()
    for (x0, y0, x1, y1), pixels in bands:
        cleared[y0:y1, x0:x1] = pixels

    def in_band(w: Word) -> bool:
        cx, cy = center(w.bbox)
        return any(x0 <= cx < x1 and y0 <= cy < y1 for (x0, y0, x1, y1), _ in bands)

    def meets(a: Word, b: Word) -> bool:
        return intersection(a.bbox, b.bbox) is not None

    def junk(w: Word) -> bool:
        return sum(ch.isalnum() for ch in w.text) < 2

    read: list[Word] = []
    for top, bottom in _strips(bands, grey.shape[0]):
        strip = soften_binary(Image.fromarray(cleared[top:bottom]))  # softened, as the first read's crop
        read += [
            Word(w.text, (w.bbox[0], w.bbox[1] + top, w.bbox[2], w.bbox[3] + top), w.confidence) for w in ocr(strip)
        ]
    added = [
        w
        for w in read
        if in_band(w)
        and (w.confidence if w.confidence is not None else 1.0) >= SECOND_READ_MIN_CONFIDENCE
        and not junk(w)
        and not any(meets(w, old) and not junk(old) for old in words)
    ]
    if not added:
        return words, 0
    kept = [old for old in words if not (junk(old) and any(meets(w, old) for w in added))]
    return [*kept, *added], len(added)


def _strips(bands: list[tuple[tuple[int, int, int, int], np.ndarray]], height: int) -> list[tuple[int, int]]:
    """The crop's rows the second read takes: each band's, STRIP_MARGIN more either side (the
    line finder needs paper round a line), overlapping ones joined. A strip, not the whole crop:
    the read costs what the bands hold, not what the table does."""
    spans = sorted((max(0, y0 - STRIP_MARGIN), min(height, y1 + STRIP_MARGIN)) for (_, y0, _, y1), _ in bands)
    out: list[tuple[int, int]] = []
    for top, bottom in spans:
        if out and top <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], bottom))
        else:
            out.append((top, bottom))
    return out
