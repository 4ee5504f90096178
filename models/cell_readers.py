"""Second readers of single cells: a different look at the few numbers a total doubts.

The first OCR pass reads the whole table crop at its own scale. Where a printed total does not
add up, the cells involved are read again, one by one, by a reader that sees them differently:
`tesseract-digits` cuts each cell's text out of the crop (ruling lines erased), brings it to a
text height tesseract reads well, adds a white margin and reads it as one line (psm 7) of
digits, signs and separators. The core then keeps whichever readings make the sums agree
(`worker.core.totals.choose_readings`). A reader is chosen by name (`TOTALS_READER`), so
another engine (PP-OCR) plugs in here without touching the pipeline.

Plain data out: per box, a `Reading` (text, source, confidence) or None when nothing was read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytesseract
from PIL import Image, ImageOps

from models.ocr import erase_rules
from models.rules import RULE_MIN_PX
from worker.core.totals import Reading
from worker.core.types import BBox

CellReader = Callable[[Image.Image, Sequence[BBox]], list[Reading | None]]

# Text height (px) the cell is scaled to. Measured on the demo sample's numbers (19-21 px tall
# at 200 dpi): read whole-crop at native size, one '3' of 20 reads as '5'; cut out and scaled
# to 48 px, psm 7, all 20 read right. Larger or smaller targets each misread one or two.
TARGET_TEXT_PX = 48
MARGIN_SHARE = 0.3  # of the text height, around the text box before scaling
DIGITS = "0123456789.,-()%+"


def read_digits(
    crop: Image.Image,
    boxes: Sequence[BBox],
    *,
    lang: str = "eng",
    rule_min_px: int | None = RULE_MIN_PX,
    target_px: float = TARGET_TEXT_PX,
) -> list[Reading | None]:
    """Each box (crop pixels, around a cell's text) read as one line of digits."""
    grey = crop.convert("L")
    if rule_min_px is not None:
        grey = erase_rules(grey, rule_min_px)
    out: list[Reading | None] = []
    for x0, y0, x1, y1 in boxes:
        h = max(1.0, y1 - y0)
        pad = MARGIN_SHARE * h
        box = (
            max(0, round(x0 - pad)),
            max(0, round(y0 - pad)),
            min(grey.width, round(x1 + pad)),
            min(grey.height, round(y1 + pad)),
        )
        if box[2] - box[0] < 2 or box[3] - box[1] < 2:
            out.append(None)
            continue
        piece = grey.crop(box)
        scale = target_px / h
        piece = piece.resize(
            (max(1, round(piece.width * scale)), max(1, round(piece.height * scale))), Image.Resampling.LANCZOS
        )
        piece = ImageOps.expand(piece, round(target_px / 2), fill=255)
        data = pytesseract.image_to_data(
            piece,
            lang=lang,
            config=f"--psm 7 -c tessedit_char_whitelist={DIGITS}",
            output_type=pytesseract.Output.DICT,
        )
        words = [(t.strip(), float(c)) for t, c in zip(data["text"], data["conf"]) if t.strip() and float(c) >= 0]
        if not words:
            out.append(None)
            continue
        text = " ".join(t for t, _ in words)
        conf = round(min(c for _, c in words) / 100, 4)
        out.append(Reading(text, "tesseract-digits", conf))
    return out


def load_cell_reader(name: str, *, lang: str = "eng", rule_min_px: int | None = RULE_MIN_PX) -> CellReader | None:
    """The second reader called `name` ("tesseract-digits"), or None for "none"/""."""
    if name in ("", "none"):
        return None
    if name == "tesseract-digits":
        return lambda crop, boxes: read_digits(crop, boxes, lang=lang, rule_min_px=rule_min_px)
    raise ValueError(f"unknown cell reader {name!r}; known: tesseract-digits, none")
