"""Words from a PDF's own text layer, in pixels of the page as rendered at a given dpi.

A born-digital page (or a scan that already carries an OCR layer) has exact text: reading
it beats OCR in speed and accuracy. Boxes are mapped through the page's crop box and
/Rotate so that they land on the image `Document.render(page_no, dpi)` returns.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from worker.core.types import BBox, Word
from worker.errors import InputError
from worker.inputs import Document

log = logging.getLogger(__name__)

_LIGATURES = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",
    "\ufb06": "st",
}
_GAP = 0.25  # a gap wider than this many em between glyphs starts a new word
_OVERLAP = 0.5  # glyphs on one line overlap across the reading direction by at least this much


@dataclass(slots=True)
class _Glyph:
    text: str
    box: BBox  # device pixels
    vertical: bool  # reads top-down or bottom-up on the rendered page


def pdf_words(document: Document, page_no: int, dpi: int) -> list[Word]:
    """Words on page `page_no` (1-based) in render pixels at `dpi`; [] without a text layer."""
    if document.kind != "pdf":
        return []
    width_px, height_px = document.page_size_px(page_no, dpi)
    try:
        pdf = pdfium.PdfDocument(document.path)
    except pdfium.PdfiumError as exc:  # the file changed since open_document checked it
        raise InputError(str(document.path), f"corrupt or unreadable PDF: {exc}") from exc
    try:
        page = pdf[page_no - 1]
        textpage = page.get_textpage()
        try:
            glyphs = _glyphs(page, textpage, dpi / 72)
        finally:
            textpage.close()
            page.close()
    finally:
        pdf.close()
    words = []
    for word in _group(glyphs):
        x0, y0, x1, y1 = word.bbox
        if x1 <= 0 or y1 <= 0 or x0 >= width_px or y0 >= height_px:
            continue  # outside the crop box: not visible, not rendered
        words.append(word)
    log.debug("%s page %d: %d text-layer words", document.path.name, page_no, len(words))
    return words


def has_text_layer(words: Sequence[Word], *, min_chars: int = 3) -> bool:
    """True when the words hold real text: enough characters, mostly not unmapped glyphs.

    Fonts without a Unicode map yield U+FFFD or private-use code points; such a "text layer"
    is worse than OCR.
    """
    chars = [ch for w in words for ch in w.text if not ch.isspace()]
    readable = sum(1 for ch in chars if ch != "\ufffd" and not 0xE000 <= ord(ch) <= 0xF8FF)
    return readable >= min_chars and readable >= 0.5 * len(chars)


def _page_transform(page: pdfium.PdfPage, scale: float):
    """Map PDF user space (origin bottom-left) to render pixels (origin top-left)."""
    ml, mb, mr, mt = page.get_mediabox()
    cl, cb, cr, ct = page.get_cropbox()
    left, b, r, t = max(cl, ml), max(cb, mb), min(cr, mr), min(ct, mt)  # poppler and pdfium clip too
    w0, h0 = r - left, t - b
    rotation = page.get_rotation() % 360

    def to_px(x: float, y: float) -> tuple[float, float]:
        u, v = x - left, t - y  # unrotated, origin top-left
        if rotation == 90:
            u, v = h0 - v, u
        elif rotation == 180:
            u, v = w0 - u, h0 - v
        elif rotation == 270:
            u, v = v, w0 - u
        return u * scale, v * scale

    return to_px, rotation


def _glyphs(page: pdfium.PdfPage, textpage: pdfium.PdfTextPage, scale: float) -> list[_Glyph | None]:
    """One entry per character; None where a word must end (space, generated break, bad box)."""
    to_px, rotation = _page_transform(page, scale)
    out: list[_Glyph | None] = []
    for i in range(textpage.count_chars()):
        code = pdfium_c.FPDFText_GetUnicode(textpage, i)
        ch = chr(code) if 0 < code < 0x110000 else ""
        if pdfium_c.FPDFText_IsHyphen(textpage, i) == 1:
            ch = "-"
        if not ch or ch.isspace() or ch == "\u200b" or pdfium_c.FPDFText_IsGenerated(textpage, i) == 1:
            out.append(None)
            continue
        if ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0:
            continue  # control characters carry no text
        box = _char_box(textpage, i)
        if box is None:
            out.append(None)
            continue
        (ax, ay), (bx, by) = to_px(box[0], box[1]), to_px(box[2], box[3])
        angle = pdfium_c.FPDFText_GetCharAngle(textpage, i)
        vertical = angle >= 0 and abs(math.sin(angle - math.radians(rotation))) > 0.7
        out.append(_Glyph(_LIGATURES.get(ch, ch), (min(ax, bx), min(ay, by), max(ax, bx), max(ay, by)), vertical))
    return out


def _char_box(textpage: pdfium.PdfTextPage, i: int) -> BBox | None:
    """The loose box (advance width x font ascent..descent): the same height for every glyph of
    a line, which keeps words of one row aligned and punctuation in its word. The tight ink box
    when the font's metrics are unusable (empty box, or not around the ink)."""
    try:
        loose = textpage.get_charbox(i, loose=True)
        tight = textpage.get_charbox(i)
    except pdfium.PdfiumError:
        return None
    cx, cy = (tight[0] + tight[2]) / 2, (tight[1] + tight[3]) / 2
    if loose[2] > loose[0] and loose[3] > loose[1] and loose[0] <= cx <= loose[2] and loose[1] <= cy <= loose[3]:
        return loose
    if tight[2] > tight[0] and tight[3] > tight[1]:
        return tight
    return None


def _group(glyphs: Sequence[_Glyph | None]) -> list[Word]:
    words: list[Word] = []
    current: list[_Glyph] = []
    for g in [*glyphs, None]:
        if g is not None and current and _continues(current[-1], g):
            current.append(g)
            continue
        if current:
            words.append(_word(current))
        current = [g] if g is not None else []
    return words


def _continues(a: _Glyph, b: _Glyph) -> bool:
    """Does glyph b follow glyph a within one word?"""
    if a.vertical != b.vertical:
        return False
    ax0, ay0, ax1, ay1 = a.box
    bx0, by0, bx1, by1 = b.box
    if a.vertical:  # swap axes so "along the line" is x
        ax0, ay0, ax1, ay1 = ay0, ax0, ay1, ax1
        bx0, by0, bx1, by1 = by0, bx0, by1, bx1
    across = min(ay1, by1) - max(ay0, by0)
    em = max(min(ay1 - ay0, by1 - by0), 1e-6)
    if across < _OVERLAP * em:
        return False  # another line
    gap = max(bx0 - ax1, ax0 - bx1)
    return gap <= _GAP * em


def _word(glyphs: list[_Glyph]) -> Word:
    box = (
        min(g.box[0] for g in glyphs),
        min(g.box[1] for g in glyphs),
        max(g.box[2] for g in glyphs),
        max(g.box[3] for g in glyphs),
    )
    x0, y0, x1, y1 = (round(v, 2) for v in box)
    return Word("".join(g.text for g in glyphs), (x0, y0, x1, y1))
