"""Second readers of single cells: a different look at the few numbers a total doubts.

The first OCR pass reads the whole table crop at its own scale. Where a printed total does not
add up, the cells involved are read again by a reader that sees them differently:
`tesseract-digits` cuts each cell's text out of the crop (ruling lines erased), brings it to a
text height tesseract reads well, and reads digits, signs and separators only. The cut-outs are
stacked into one image, one per line with white space between, and read by one tesseract
process (psm 6, a block of lines): most of a tesseract call is its start (about 0.25 s of CPU
per call measured, whatever the image), so twenty cells cost about one call. The core then
keeps whichever readings make the sums agree (`worker.core.totals.choose_readings`). The reader
is an OCR engine of the registry (worker.engines.ocr) chosen by name (`OCR__CELL_READER`), so
another engine with `read_cells` (PP-OCR) takes its place without touching the pipeline.

Plain data out: per box, a `Reading` (text, source, confidence) or None when nothing was read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PIL import Image

from models.ocr import _tesseract_tsv, erase_rules
from models.rules import RULE_MIN_PX, rule_length
from worker.core.totals import Reading
from worker.core.types import BBox, Word

if TYPE_CHECKING:
    from worker.settings import ModelSettings, OcrSettings

CellReader = Callable[[Image.Image, Sequence[BBox]], list[Reading | None]]

# Text height (px) each cell is scaled to. Measured on the demo sample's numbers (19-21 px tall
# at 200 dpi): read whole-crop at native size, one '3' of 22 numbers reads as '5'; cut out,
# stacked and scaled to 40 or 56 px, all 22 read right (48 px: one misread); at 56 px the
# staffing table's counts read right too (40 px drops a digit of one).
TARGET_TEXT_PX = 56
MARGIN_SHARE = 0.3  # of the text height, around the text box before scaling
DIGITS = "0123456789.,-()%+"
NAME = "tesseract-digits"


def _cut(grey: Image.Image, box: BBox, target_px: float) -> Image.Image | None:
    x0, y0, x1, y1 = box
    h = max(1.0, y1 - y0)
    pad = MARGIN_SHARE * h
    area = (
        max(0, round(x0 - pad)),
        max(0, round(y0 - pad)),
        min(grey.width, round(x1 + pad)),
        min(grey.height, round(y1 + pad)),
    )
    if area[2] - area[0] < 2 or area[3] - area[1] < 2:
        return None
    piece = grey.crop(area)
    scale = target_px / h
    return piece.resize(
        (max(1, round(piece.width * scale)), max(1, round(piece.height * scale))), Image.Resampling.LANCZOS
    )


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
    pieces = [_cut(grey, box, target_px) for box in boxes]
    present = [p for p in pieces if p is not None]
    if not present:
        return [None] * len(boxes)
    gap = round(target_px)
    width = max(p.width for p in present) + 2 * gap
    height = gap + sum(p.height + gap for p in present)
    sheet = Image.new("L", (width, height), 255)
    spans: list[tuple[int, int] | None] = []
    y = gap
    for p in pieces:
        if p is None:
            spans.append(None)
            continue
        sheet.paste(p, (gap, y))
        spans.append((y, y + p.height))
        y += p.height + gap
    # one OpenMP thread: the same reading for about a third of the CPU (see models.ocr)
    data = _tesseract_tsv(sheet, lang, ["--psm", "6", "-c", f"tessedit_char_whitelist={DIGITS}"], threads=1)
    found: list[list[tuple[float, str, float]]] = [[] for _ in boxes]
    for text, conf, left, top, h in zip(data["text"], data["conf"], data["left"], data["top"], data["height"]):
        text, conf = str(text).strip(), float(conf)
        if not text or conf < 0:
            continue
        mid = top + h / 2
        for i, span in enumerate(spans):
            if span is not None and span[0] - gap / 2 <= mid < span[1] + gap / 2:
                found[i].append((float(left), text, conf))
                break
    out: list[Reading | None] = []
    for words in found:
        if not words:
            out.append(None)
            continue
        words.sort()
        out.append(Reading(" ".join(t for _, t, _ in words), NAME, round(min(c for _, _, c in words) / 100, 4)))
    return out


class TesseractDigits:
    """The `tesseract-digits` OCR engine of the registry: `read_cells` is its purpose; `read`
    reads a whole image as digits (one box), for the OcrEngine protocol."""

    name = NAME

    def __init__(self, settings: OcrSettings, dpi: int) -> None:
        self.lang = settings.lang
        self.rule_min_px = rule_length(dpi)

    @property
    def version(self) -> str:
        from worker.engines.tesseract import _tesseract_version

        return _tesseract_version()

    def read_cells(self, image: Image.Image, boxes: Sequence[BBox]) -> list[Reading | None]:
        return read_digits(image, boxes, lang=self.lang, rule_min_px=self.rule_min_px)

    def read(self, image: Image.Image) -> list[Word]:
        (got,) = self.read_cells(image, [(0.0, 0.0, float(image.width), float(image.height))])
        if got is None:
            return []
        return [Word(got.text, (0.0, 0.0, float(image.width), float(image.height)), got.confidence)]


def load(settings: OcrSettings, dpi: int, models: ModelSettings | None = None) -> TesseractDigits:
    return TesseractDigits(settings, dpi)
