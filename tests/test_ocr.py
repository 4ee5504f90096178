"""Real tesseract on rendered tables with known text: words read exactly, boxes in their cells."""

from __future__ import annotations

from collections import Counter

import pytesseract
import pytest
from PIL import Image, ImageDraw

from models.ocr import erase_rules, ocr_words
from worker.core.types import Word
from worker.devtools.samples import financial_table, load_font, render_table, scan_noise, staffing_table, write_sample
from worker.errors import OcrUnavailable
from worker.inputs import open_document
from worker.settings import Settings


def _centre_in(word: Word, box) -> bool:
    cx, cy = (word.bbox[0] + word.bbox[2]) / 2, (word.bbox[1] + word.bbox[3]) / 2
    return box[0] <= cx <= box[2] and box[1] <= cy <= box[3]


def _read_in_cells(cells: list[dict], words: list[Word]) -> tuple[int, int]:
    """(true words read exactly inside their own cell, true words)."""
    hits = total = 0
    for cell in cells:
        truth = Counter(cell["text"].split())
        got = Counter(w.text for w in words if _centre_in(w, cell["bbox"]))
        hits += sum((truth & got).values())
        total += sum(truth.values())
    return hits, total


@pytest.mark.parametrize(
    "spec,font_size,noisy",
    [
        (financial_table, 24, False),  # ~8.6 pt at 200 dpi
        (financial_table, 30, True),  # ~10.8 pt, scanned look (skew, blur, noise)
        (staffing_table, 24, True),
        (financial_table, 13, False),  # ~4.7 pt: read through the automatic 2x upscale
    ],
)
def test_table_words_read_exactly_in_their_cells(spec, font_size: int, noisy: bool) -> None:
    image, cells = render_table(spec(), font_size=font_size)
    if noisy:
        image = scan_noise(image, seed=font_size)
    words = ocr_words(image)
    hits, total = _read_in_cells(cells, words)
    assert hits / total >= 0.9, (hits, total, [w.text for w in words])
    assert all(0.0 <= w.confidence <= 1.0 for w in words)
    # Nothing read lies outside every cell (ruling lines are not read as "|" or "l").
    assert all(any(_centre_in(w, c["bbox"]) for c in cells) for w in words)


def test_demo_pdf_tables_read_from_the_rendered_scan(tmp_path) -> None:
    """The bundled demo end to end: scanned PDF -> poppler at 200 dpi -> table crop -> OCR."""
    pages = write_sample(tmp_path / "demo.pdf")
    doc = open_document(tmp_path / "demo.pdf", settings=Settings(_env_file=None))
    assert doc.page_count == 2
    hits = total = 0
    for page_no, page in enumerate(pages, 1):
        image = doc.render(page_no, 200)
        assert image.size == page.image.size == (1700, 2200)
        for (x0, y0, x1, y1), cells in zip(page.table_boxes, page.tables):
            pad = 30
            crop = image.crop((x0 - pad, y0 - pad, x1 + pad, y1 + pad))
            h, t = _read_in_cells(cells, ocr_words(crop, offset=(x0 - pad, y0 - pad)))
            hits, total = hits + h, total + t
    assert total == 79 and hits / total >= 0.9


def test_ruling_lines_are_why_rules_are_erased() -> None:
    """Without erasing the rules tesseract loses many words of a fully ruled table."""
    image, cells = render_table(financial_table(), font_size=24)
    kept, total = _read_in_cells(cells, ocr_words(image, rule_min_px=None))
    erased, _ = _read_in_cells(cells, ocr_words(image))
    assert erased >= 0.95 * total and erased > kept


def test_offset_puts_crop_words_on_the_page() -> None:
    image, cells = render_table(financial_table(), font_size=24)
    cell = next(c for c in cells if c["text"] == "Widgets")
    x0, y0, x1, y1 = (round(v) for v in cell["bbox"])
    words = ocr_words(image.crop((x0, y0, x1, y1)), psm=7, offset=(x0, y0))
    assert [w.text for w in words] == ["Widgets"]
    tx0, ty0, tx1, ty1 = cell["text_bbox"]
    assert all(abs(a - b) <= 3 for a, b in zip(words[0].bbox, (tx0, ty0, tx1, ty1)))


def test_erase_rules_keeps_text_and_filled_boxes() -> None:
    image = Image.new("L", (400, 200), 255)
    draw = ImageDraw.Draw(image)
    draw.rectangle((10, 10, 390, 190), outline=0, width=2)  # table frame
    draw.line((10, 100, 390, 100), fill=0, width=3)  # row rule
    draw.line((200, 10, 200, 190), fill=0, width=2)  # column rule
    draw.rectangle((220, 120, 380, 180), fill=0)  # a solid black header bar
    draw.text((30, 40), "Total", font=load_font(28), fill=0)
    out = erase_rules(image)
    assert out.getpixel((100, 100)) == 255 and out.getpixel((200, 50)) == 255
    assert out.getpixel((200, 100)) == 255 and out.getpixel((10, 10)) == 255  # crossings too
    assert out.getpixel((300, 150)) == 0  # the filled box stays
    assert out.crop((25, 35, 120, 80)).getextrema()[0] == 0  # the text stays


def test_missing_tesseract_is_ocr_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    with pytest.raises(OcrUnavailable, match="tesseract is not installed"):
        ocr_words(Image.new("RGB", (50, 50), "white"))


def test_missing_language_is_ocr_unavailable() -> None:
    with pytest.raises(OcrUnavailable, match="no data for language 'xyz'"):
        ocr_words(Image.new("RGB", (50, 50), "white"), lang="xyz")


def test_blank_image_gives_no_words() -> None:
    assert ocr_words(Image.new("RGB", (300, 100), "white")) == []
