"""Cell text paths on real rendered tables with oracle structure: OCR (real poppler + tesseract)
and the PDF text layer both put the known text into the right cells."""

from __future__ import annotations

from models.ocr import ocr_words
from worker.core.detections import padded_box, words_in_crop
from worker.core.reconstruct import reconstruct
from worker.devtools.samples import financial_table, make_born_digital_pdf, make_page, make_scanned_pdf
from worker.evaluation.dataset import cells_in_crop
from worker.evaluation.oracle import oracle_from_cells
from worker.inputs import open_document
from worker.settings import Settings
from worker.text_layer import pdf_words


def _texts(grid) -> dict[tuple[int, int], str]:
    return {(c.row, c.col): c.text for c in grid.cells}


def test_ocr_path_with_oracle_structure(tmp_path):
    spec = financial_table()
    page = make_page([spec], seed=5)
    pdf = make_scanned_pdf(tmp_path / "scan.pdf", [page.image], dpi=200)
    doc = open_document(pdf, settings=Settings())
    image = doc.render(1, 200)  # real poppler
    crop_box = padded_box(page.table_boxes[0], image.size, 0.05, 30)
    crop = image.crop(crop_box)
    cells = cells_in_crop(page.tables[0], (crop_box[0], crop_box[1]))
    n_rows, n_cols = spec.shape
    oracle = oracle_from_cells(cells, n_rows, n_cols, crop.size, header_rows=spec.header_rows)
    grid = reconstruct(oracle.objects, ocr_words(crop, rule_min_px=40), crop.size)
    got, want = _texts(grid), {(c.row, c.col): c.text for c in cells}
    assert grid.shape_signature() == sorted((c.row, c.col, c.rowspan, c.colspan) for c in cells)
    exact = [k for k in want if got[k] == want[k]]
    assert len(exact) >= 0.95 * len(want), {k: (got[k], want[k]) for k in want if got[k] != want[k]}


def test_text_layer_path_with_oracle_structure(tmp_path):
    spec = financial_table()
    truth = make_born_digital_pdf(tmp_path / "digital.pdf", spec)
    doc = open_document(tmp_path / "digital.pdf", settings=Settings())
    dpi = 150
    scale = dpi / 72
    words = pdf_words(doc, 1, dpi)
    boxes = [c["bbox"] for c in truth.cells]
    table = (
        min(b[0] for b in boxes) * scale,
        min(b[1] for b in boxes) * scale,
        max(b[2] for b in boxes) * scale,
        max(b[3] for b in boxes) * scale,
    )
    size = doc.page_size_px(1, dpi)
    crop_box = padded_box(table, size, 0.05, 30)
    inside = words_in_crop(words, crop_box)
    cells = cells_in_crop(truth.cells, (crop_box[0], crop_box[1]), scale=scale, key="bbox")
    n_rows, n_cols = spec.shape
    crop_size = (crop_box[2] - crop_box[0], crop_box[3] - crop_box[1])
    oracle = oracle_from_cells(cells, n_rows, n_cols, crop_size, header_rows=spec.header_rows)
    grid = reconstruct(oracle.objects, inside, crop_size)
    assert _texts(grid) == {(c.row, c.col): c.text for c in cells}
