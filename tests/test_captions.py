"""Caption above and notes below a table, from rendered pages (OCR strips), text layers and the
ICDAR-2013 dev PDFs (read at test time from the dev set, helpers.DEV_DATA; skipped when absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import DEV_DATA
from PIL import Image, ImageDraw

from worker.core.captions import capture_context, group_lines, is_continued_caption, is_rule
from worker.core.types import Word
from worker.devtools.samples import financial_table, load_font, make_born_digital_pdf, render_table
from worker.settings import Settings

DEV = DEV_DATA / "icdar2013-eu"
KNOWN = {
    "eu-001": (1, 2, 3),
    "eu-002": (1,),
    "eu-004": (2, 3, 6, 9, 10, 11),
    "eu-010": (1,),
    "eu-012": (3, 4, 5),
    "eu-020": (2, 3),
    "eu-025": (2, 3),
    "eu-026": (4, 5, 6),
}


def w(text: str, x: float, y: float, h: float = 10.0) -> list[Word]:
    """One line of words starting at (x, y), 7 px per character."""
    out, pos = [], x
    for token in text.split():
        out.append(Word(token, (pos, y, pos + 7 * len(token), y + h)))
        pos += 7 * len(token) + 7
    return out


def test_caption_notes_and_what_belongs_to_the_next_table():
    table, nxt = (100, 200, 500, 400), (100, 520, 500, 700)
    words = (
        w("Some body text that runs across the page and goes on", 50, 100)
        + w("and finishes here.", 50, 114)
        + w("Table 4: Sales by region", 100, 170)
        + w("Note: unaudited.", 100, 410)
        + w("Source: accounts", 100, 424)
        + w("Table 5: Costs", 100, 498)
    )
    ctx = capture_context(words, table, (600, 800), other_tables=[table, nxt])
    assert ctx.caption == "Table 4: Sales by region"
    assert ctx.notes == ["Note: unaudited.", "Source: accounts"]
    assert ctx.above_clear is False and ctx.below_clear is False
    ctx2 = capture_context(words, nxt, (600, 800), other_tables=[table, nxt])
    assert ctx2.caption == "Table 5: Costs" and ctx2.notes == []
    # a long paragraph right above is no caption; one starting like a caption inside it is
    para = [x for i in range(6) for x in w(f"line {i} of a long paragraph of body text", 100, 110 + 14 * i)]
    assert capture_context(para, table, (600, 800)).caption == ""
    para += w("Table 9 (continued)", 100, 110 + 14 * 6)
    assert capture_context(para, table, (600, 800)).caption == "Table 9 (continued)"
    assert is_continued_caption("Table 9 (continued)") and not is_continued_caption("Table 9")
    assert is_rule("_______") and not is_rule("Total")


def test_lines_are_cut_at_wide_gaps_between_text_columns():
    words = w("left column text", 10, 10) + w("right column", 400, 10)
    assert [ln.text for ln in group_lines(words)] == ["left column text", "right column"]


def scanned_page() -> tuple[Image.Image, tuple[float, float, float, float]]:
    """A page with prose, a caption, a rendered table and two notes, as a scan would show it."""
    page = Image.new("RGB", (1700, 1400), "white")
    draw = ImageDraw.Draw(page)
    body, small = load_font(30), load_font(26)
    draw.text((140, 120), "The results below cover all regions and products in the year.", font=body, fill="black")
    draw.text((140, 170), "Figures are rounded to the nearest thousand throughout.", font=body, fill="black")
    draw.text((140, 300), "Table 3: Revenue and cost by region", font=load_font(32, bold=True), fill="black")
    table, _ = render_table(financial_table(), margin=0)
    page.paste(table, (140, 360))
    box = (140.0, 360.0, 140.0 + table.width, 360.0 + table.height)
    y = int(box[3]) + 25
    draw.text((140, y), "Note: all figures in thousands of euros.", font=small, fill="black")
    draw.text((140, y + 40), "Source: company accounts.", font=small, fill="black")
    return page, box


def test_caption_and_notes_by_ocr_of_strips_on_a_scanned_page():
    pytest.importorskip("pytesseract")
    from models.ocr import ocr_words
    from worker.pipeline import Run, Stages
    from worker.pipeline.context import table_context

    page, box = scanned_page()
    stages = Stages(structure=None, detector=None, ocr=lambda im: ocr_words(im))  # type: ignore[arg-type]
    run = Run(doc=None, doc_id="0" * 16, stages=stages, storage=None, settings=Settings(), dpi=200)  # type: ignore[arg-type]
    ctx = table_context(run, box, page, [], [box])
    assert ctx.caption == "Table 3: Revenue and cost by region"
    assert ctx.notes == ["Note: all figures in thousands of euros.", "Source: company accounts."]
    assert ctx.above_clear is False  # the prose above was read too
    assert ctx.below_clear is None  # the strip ended before the page foot: not seen, not assumed


def test_caption_from_a_born_digital_text_layer(tmp_path):
    from worker.inputs import open_document
    from worker.text_layer import pdf_words

    pdf = tmp_path / "t.pdf"
    truth = make_born_digital_pdf(pdf, financial_table(), title="Table 2: Results by region")
    dpi = 100
    doc = open_document(pdf, settings=Settings())
    words = pdf_words(doc, 1, dpi)
    s = dpi / 72
    box = tuple(
        v * s
        for v in (
            min(c["bbox"][0] for c in truth.cells),
            min(c["bbox"][1] for c in truth.cells),
            max(c["bbox"][2] for c in truth.cells),
            max(c["bbox"][3] for c in truth.cells),
        )
    )
    ctx = capture_context(words, box, doc.page_size_px(1, dpi))
    assert ctx.caption == "Table 2: Results by region"
    assert ctx.notes == [] and ctx.below_clear is True


@pytest.mark.skipif(not (DEV / "gt.jsonl").is_file(), reason="no dev data (TABLESIGHT_DEV_DATA)")
def test_captions_and_notes_on_the_icdar_dev_pdfs():
    from worker.inputs import open_document
    from worker.text_layer import pdf_words

    recs = [json.loads(line) for line in (DEV / "gt.jsonl").read_text().splitlines() if line.strip()]
    # a spread of layouts (captions with and without numbers, notes, stacked tables), kept small:
    # reading a page's text layer costs ~60 ms
    recs = [r for r in recs if Path(r["pdf"]).stem in KNOWN and r["page"] in KNOWN[Path(r["pdf"]).stem]]
    found: dict[tuple[str, int], tuple[str, list[str]]] = {}
    docs, page_words = {}, {}
    for r in recs:
        pdf = DEV.parent / r["pdf"]
        if pdf not in docs:
            docs[pdf] = open_document(pdf, settings=Settings())
        doc = docs[pdf]
        dpi = int(r["render_dpi"])
        pad = 8 * dpi / 72  # the crops carry 8 pt of padding

        def tight(rec: dict, pad: float = pad) -> tuple[float, float, float, float]:
            x0, y0, x1, y1 = rec["crop_px_in_page"]
            return (x0 + pad, y0 + pad, x1 - pad, y1 - pad)

        others = [tight(o) for o in recs if o["pdf"] == r["pdf"] and o["page"] == r["page"]]
        if (pdf, r["page"]) not in page_words:
            page_words[(pdf, r["page"])] = pdf_words(doc, r["page"], dpi)
        ctx = capture_context(
            page_words[(pdf, r["page"])], tight(r), doc.page_size_px(r["page"], dpi), other_tables=others
        )
        found[(Path(r["pdf"]).stem, int(r["table_id"]))] = (ctx.caption, ctx.notes)
    assert found[("eu-020", 2)] == (
        "Table 2.3: Number of female students categorized by faculty cluster",
        ["χ 2 = 5.281, v = 3, p = 0.152"],
    )
    assert found[("eu-004", 1)][0] == "Table 6.1: Size of the market across the member states"
    assert found[("eu-004", 1)][1][0].startswith("Sources: for GNP and population, World Bank")
    assert found[("eu-001", 2)] == ("Other gases", [])  # between two tables: the lower one's caption
    assert found[("eu-001", 1)] == ("Greenhouse gases", [])
    assert found[("eu-010", 1)][0] == (
        "Allocation of TA operations in terms of volume (financed from the budgets 2003 – 2006)"
    )  # wider than its table
    with_caption = sum(1 for caption, _ in found.values() if caption)
    assert with_caption >= 0.9 * len(found), f"{with_caption} of {len(found)} tables got a caption"
