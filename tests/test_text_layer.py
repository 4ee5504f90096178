"""Words from a PDF text layer land on the rendered page, whatever its crop box and rotation."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageOps
from pypdf import PdfWriter
from pypdf.generic import RectangleObject

from worker.core.types import Word
from worker.devtools.samples import BornDigitalTable, make_born_digital_pdf, make_scanned_pdf
from worker.inputs import open_document
from worker.settings import Settings
from worker.text_layer import has_text_layer, pdf_words

SETTINGS = Settings(_env_file=None)


@pytest.fixture(scope="module")
def born_digital(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BornDigitalTable]:
    path = tmp_path_factory.mktemp("bd") / "table.pdf"
    return path, make_born_digital_pdf(path)


def _match(words: list[Word], truth: list[dict], scale: float, shift=(0.0, 0.0)) -> float:
    """Largest coordinate error (px) between each true word and the text-layer word of the same
    text nearest to it; fails if a true word has no counterpart."""
    worst = 0.0
    for t in truth:
        box = [v * scale for v in t["bbox"]]
        box = [box[0] + shift[0], box[1] + shift[1], box[2] + shift[0], box[3] + shift[1]]
        same = [w for w in words if w.text == t["text"]]
        assert same, f"{t['text']!r} not in the text layer"
        err = min(max(abs(a - b) for a, b in zip(w.bbox, box)) for w in same)
        worst = max(worst, err)
    return worst


@pytest.mark.parametrize("dpi", [72, 150, 200])
def test_words_and_boxes_match_the_truth(born_digital: tuple[Path, BornDigitalTable], dpi: int) -> None:
    path, truth = born_digital
    doc = open_document(path, settings=SETTINGS)
    words = pdf_words(doc, 1, dpi)
    assert has_text_layer(words)
    texts = [w.text for w in words]
    assert texts[:3] == ["Results", "by", "region"]  # the title, then the table in drawing order
    assert sorted(texts[3:]) == sorted(t["text"] for t in truth.words)
    assert "1,200" in texts and "2,335" in texts  # punctuation stays inside its word
    assert _match(words, truth.words, dpi / 72) < 1.5
    assert all(w.confidence is None for w in words)


def test_every_word_lies_in_its_cell(born_digital: tuple[Path, BornDigitalTable]) -> None:
    path, truth = born_digital
    s = 200 / 72
    words = pdf_words(open_document(path, settings=SETTINGS), 1, 200)
    for cell in truth.cells:
        x0, y0, x1, y1 = (v * s for v in cell["bbox"])
        inside = [
            w.text for w in words if x0 <= (w.bbox[0] + w.bbox[2]) / 2 <= x1 and y0 <= (w.bbox[1] + w.bbox[3]) / 2 <= y1
        ]
        assert inside == cell["text"].split()


def _ink_box(image: Image.Image) -> tuple[int, int, int, int]:
    return ImageOps.invert(image.convert("L")).point(lambda v: 255 if v > 80 else 0).getbbox()


@pytest.mark.parametrize("rotate", [0, 90, 180, 270])
@pytest.mark.parametrize("crop", [False, True])
def test_boxes_follow_rotation_and_crop_box(tmp_path: Path, rotate: int, crop: bool) -> None:
    """Checked against the pixels poppler renders, not against our own arithmetic."""
    from reportlab.pdfgen import canvas

    plain = tmp_path / "line.pdf"
    pdf = canvas.Canvas(str(plain), pagesize=(612, 792))
    pdf.setFont("Helvetica", 14)
    pdf.drawString(100, 600, "Net margin 35.5% (2024)")
    pdf.showPage()
    pdf.save()
    writer = PdfWriter()
    writer.append(str(plain))
    if crop:
        writer.pages[0].cropbox = RectangleObject((30, 40, 580, 760))
    if rotate:
        writer.pages[0].rotate(rotate)
    path = tmp_path / "turned.pdf"
    writer.write(path)

    doc = open_document(path, settings=SETTINGS)
    words = pdf_words(doc, 1, 150)
    assert [w.text for w in words] == ["Net", "margin", "35.5%", "(2024)"]
    image = doc.render(1, 150)
    assert image.size == doc.page_size_px(1, 150)
    ink = _ink_box(image)
    union = (
        min(w.bbox[0] for w in words),
        min(w.bbox[1] for w in words),
        max(w.bbox[2] for w in words),
        max(w.bbox[3] for w in words),
    )
    # Word boxes span the font's ascent..descent, a little beyond the ink; never off it.
    assert all(u <= i + 1 for u, i in zip(union[:2], ink[:2]))
    assert all(u >= i - 1 for u, i in zip(union[2:], ink[2:]))
    assert all(abs(u - i) < 12 for u, i in zip(union, ink))
    for w in words:  # every box holds ink of its own
        assert _ink_box(image.crop(tuple(round(v) for v in w.bbox))) is not None


def test_scanned_pdf_and_images_have_no_text_layer(tmp_path: Path) -> None:
    page = Image.new("RGB", (300, 200), "white")
    scan = make_scanned_pdf(tmp_path / "scan.pdf", [page], dpi=100)
    words = pdf_words(open_document(scan, settings=SETTINGS), 1, 100)
    assert words == [] and not has_text_layer(words)
    page.save(tmp_path / "page.png")
    assert pdf_words(open_document(tmp_path / "page.png", settings=SETTINGS), 1, 100) == []


def test_has_text_layer_rejects_unmapped_glyphs() -> None:
    box = (0.0, 0.0, 10.0, 10.0)
    assert has_text_layer([Word("Total", box)])
    assert not has_text_layer([Word("ab", box)])  # a page number or stray mark is not a text layer
    assert not has_text_layer([Word("\ufffd\ufffd\ufffd\ufffd", box), Word("ab", box)])
    assert not has_text_layer([Word("\ue001\ue002\ue003", box)])


def test_rotated_text_is_grouped_along_its_own_direction(tmp_path: Path) -> None:
    """Sideways column headers read as words, not one word per letter."""
    from reportlab.pdfgen import canvas

    path = tmp_path / "vertical.pdf"
    pdf = canvas.Canvas(str(path), pagesize=(612, 792))
    pdf.setFont("Helvetica", 14)
    pdf.drawString(100, 700, "Plain words here")
    pdf.translate(300, 300)
    pdf.rotate(90)
    pdf.drawString(0, 0, "Rotated header 2024")
    pdf.showPage()
    pdf.save()
    words = pdf_words(open_document(path, settings=SETTINGS), 1, 72)
    assert [w.text for w in words] == ["Plain", "words", "here", "Rotated", "header", "2024"]
    rotated = words[3:]
    assert all(w.bbox[3] - w.bbox[1] > w.bbox[2] - w.bbox[0] for w in rotated)  # tall boxes
    assert rotated[0].bbox[1] > rotated[1].bbox[3]  # reads bottom-up
