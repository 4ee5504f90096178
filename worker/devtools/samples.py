"""Realistic sample material with known ground truth: tables with merged cells and two-level
headers, drawn as images, placed on pages, saved as scanned (image-only) or born-digital PDFs.

Tests use it to check every stage against truth; `tablesight demo` uses `write_sample`.
Coordinates in the ground truth are (x0, y0, x1, y1) with the origin at the top left.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFilter, ImageFont

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont
_DEJAVU_DIR = Path("/usr/share/fonts/truetype/dejavu")
_WORDS = (
    "the results below cover all regions and products figures are unaudited and rounded "
    "to the nearest thousand revenue grew in every quarter while costs rose more slowly "
    "see notes for the definitions used in this report"
).split()


@dataclass(frozen=True)
class CellSpec:
    text: str
    rowspan: int = 1
    colspan: int = 1


@dataclass(frozen=True)
class TableSpec:
    """Rows in HTML order: each row lists, left to right, the cells that start in it."""

    rows: tuple[tuple[CellSpec, ...], ...]
    header_rows: int = 0

    def layout(self) -> list[dict[str, Any]]:
        """Place cells on the grid as HTML does; raises if the grid is not rectangular."""
        taken: set[tuple[int, int]] = set()
        cells = []
        for r, row in enumerate(self.rows):
            c = 0
            for spec in row:
                while (r, c) in taken:
                    c += 1
                slots = {(r + i, c + j) for i in range(spec.rowspan) for j in range(spec.colspan)}
                if slots & taken:
                    raise ValueError(f"cell {spec.text!r} overlaps another cell")
                taken |= slots
                cells.append(
                    {
                        "row": r,
                        "col": c,
                        "rowspan": spec.rowspan,
                        "colspan": spec.colspan,
                        "text": spec.text,
                        "is_header": r < self.header_rows,
                    }
                )
                c += spec.colspan
        n_rows = max(r for r, _ in taken) + 1
        n_cols = max(c for _, c in taken) + 1
        if len(taken) != n_rows * n_cols or n_rows != len(self.rows):
            raise ValueError("table is not rectangular")
        return cells

    @property
    def shape(self) -> tuple[int, int]:
        cells = self.layout()
        return (max(c["row"] + c["rowspan"] for c in cells), max(c["col"] + c["colspan"] for c in cells))


def _spec(rows: Sequence[Sequence[str | tuple[str, int, int]]], header_rows: int) -> TableSpec:
    """Rows of 'text' or ('text', rowspan, colspan)."""
    return TableSpec(
        tuple(tuple(CellSpec(c) if isinstance(c, str) else CellSpec(*c) for c in row) for row in rows), header_rows
    )


def financial_table() -> TableSpec:
    """Two-level header (a year over Revenue/Cost) and row-group labels spanning two rows."""
    return _spec(
        [
            [("Region", 2, 1), ("Product", 2, 1), ("2023", 1, 2), ("2024", 1, 2)],
            ["Revenue", "Cost", "Revenue", "Cost"],
            [("North", 2, 1), "Widgets", "1,200", "800", "1,350", "870"],
            ["Gadgets", "640", "410", "700", "455"],
            [("South", 2, 1), "Widgets", "980", "615", "1,010", "650"],
            ["Gadgets", "520", "330", "575", "360"],
            [("Total", 1, 2), "3,340", "2,155", "3,635", "2,335"],
        ],
        header_rows=2,
    )


def staffing_table() -> TableSpec:
    """Spans inside the body: a row label over two rows and text across two and four columns."""
    return _spec(
        [
            ["Site", "Staff", "Q1", "Q2", "Q3", "Q4"],
            [("Lyon", 2, 1), "Full-time", "42", "44", "45", "47"],
            ["Part-time", "8", "9", ("Closed for repairs", 1, 2)],
            ["Oslo", "Full-time", "30", "31", "31", "33"],
            [("Notes", 1, 2), ("Headcount at the end of each quarter", 1, 4)],
        ],
        header_rows=1,
    )


def key_figures_table() -> TableSpec:
    """A plain grid with no merged cells."""
    return _spec(
        [
            ["Metric", "2023", "2024"],
            ["Margin", "35.5%", "35.8%"],
            ["Employees", "1,204", "1,262"],
            ["Sites", "12", "14"],
        ],
        header_rows=1,
    )


def year_groups_table() -> TableSpec:
    """Multi-level year headers: the same sub-columns under two years, under one group label."""
    return _spec(
        [
            [("Region", 3, 1), ("Unhealthy housing units", 1, 4)],
            [("2007", 1, 2), ("2009", 1, 2)],
            ["no.", "%", "no.", "%"],
            ["Northeast", "1,204", "3.1", "1,250", "2.9"],
            ["Midwest", "2,085", "4.4", "2,101", "4.3"],
            ["South", "3,310", "5.0", "3,402", "5.1"],
        ],
        header_rows=3,
    )


def stub_head_table() -> TableSpec:
    """A stub head two rows tall beside a group label that spans the numeric columns, and a
    margin-of-error column two rows tall under the first group."""
    return _spec(
        [
            [("Region and state", 2, 1), ("Actual", 1, 2), ("Difference", 2, 1), ("Forecast", 1, 2)],
            ["Number", "Margin of error (±)", "Number", "Margin of error (±)"],
            ["Maine", "88", "0.7", "-3", "91", "0.8"],
            ["Vermont", "41", "0.4", "2", "39", "0.5"],
            ["New Hampshire", "97", "0.9", "5", "92", "1.0"],
        ],
        header_rows=2,
    )


def dates_table() -> TableSpec:
    """A header row of dates, each spanning two columns (an amount and a percent)."""
    return _spec(
        [
            ["Item", ("Jan. 1, 2009", 1, 2), ("Jan. 1, 2010", 1, 2), ("Jan. 1, 2011", 1, 2)],
            ["", "Amount", "Percent", "Amount", "Percent", "Amount", "Percent"],
            ["Deposits", "4,120", "61.2", "4,380", "62.0", "4,610", "62.9"],
            ["Loans", "1,870", "27.8", "1,905", "27.0", "1,960", "26.7"],
            ["Other", "740", "11.0", "780", "11.0", "760", "10.4"],
        ],
        header_rows=2,
    )


TABLE_STYLES = {
    "financial": financial_table,
    "staffing": staffing_table,
    "year-groups": year_groups_table,
    "stub-head": stub_head_table,
    "dates": dates_table,
}


@lru_cache(maxsize=64)
def load_font(size: int, bold: bool = False) -> Font:
    """DejaVu Sans (bold for headers) by name or from fonts-dejavu; PIL's own font otherwise."""
    for name in (["DejaVuSans-Bold.ttf"] if bold else []) + ["DejaVuSans.ttf"]:
        for candidate in (name, str(_DEJAVU_DIR / name)):
            try:
                return ImageFont.truetype(candidate, size)
            except OSError:
                continue
    return ImageFont.load_default(size=size)


def ttf_path() -> str | None:
    """Path of the regular TrueType font load_font uses, if there is one (for reportlab)."""
    font = load_font(12)
    return getattr(font, "path", None)


def _is_number(text: str) -> bool:
    return any(ch.isdigit() for ch in text) and all(ch.isdigit() or ch in ",.%-+() " for ch in text)


def _sizes(cells: list[dict], n: int, key: str, span: str, need: list[float]) -> list[float]:
    """Track sizes (column widths or row heights): each cell's need met by the tracks it spans."""
    sizes = [0.0] * n
    for cell, want in sorted(zip(cells, need), key=lambda cw: cw[0][span]):
        first, count = cell[key], cell[span]
        have = sum(sizes[first : first + count])
        if want > have:
            for i in range(first, first + count):
                sizes[i] += (want - have) / count
    return sizes


def render_table(
    spec: TableSpec,
    *,
    scale: float = 1.0,
    font_size: int = 22,
    padding: int = 12,
    line_width: int = 2,
    margin: int = 20,
    rules: str = "all",
    shade_header: bool = False,
) -> tuple[Image.Image, list[dict[str, Any]]]:
    """Draw the table; returns the image and ground-truth cells.

    Each cell: row, col, rowspan, colspan, text, is_header, bbox (the cell between its ruling
    lines, image px) and text_bbox (the ink of its text). `rules` is "all" (every cell ruled)
    or "horizontal" (top, under the header, bottom, and under spanning header cells).
    """
    if rules not in ("all", "horizontal"):
        raise ValueError("rules must be 'all' or 'horizontal'")
    fs, pad = max(6, round(font_size * scale)), max(2, round(padding * scale))
    lw, mg = max(1, round(line_width * scale)), round(margin * scale)
    cells = spec.layout()
    n_rows, n_cols = spec.shape
    draw0 = ImageDraw.Draw(Image.new("L", (1, 1)))
    fonts = [load_font(fs, bold=c["is_header"]) for c in cells]
    ink = [draw0.multiline_textbbox((0, 0), c["text"], font=f, spacing=pad // 2) for c, f in zip(cells, fonts)]
    regular = load_font(fs)
    line_h = sum(regular.getmetrics()) if isinstance(regular, ImageFont.FreeTypeFont) else fs
    widths = _sizes(cells, n_cols, "col", "colspan", [b[2] - b[0] + 2 * pad + lw for b in ink])
    heights = _sizes(cells, n_rows, "row", "rowspan", [max(b[3] - b[1], line_h) + 2 * pad + lw for b in ink])
    xs = [mg + round(sum(widths[:i])) for i in range(n_cols + 1)]
    ys = [mg + round(sum(heights[:i])) for i in range(n_rows + 1)]
    image = Image.new("RGB", (xs[-1] + mg + lw, ys[-1] + mg + lw), "white")
    draw = ImageDraw.Draw(image)
    out = []
    for cell, font, (left, t, r, b) in zip(cells, fonts, ink):
        box = (xs[cell["col"]], ys[cell["row"]], xs[cell["col"] + cell["colspan"]], ys[cell["row"] + cell["rowspan"]])
        if shade_header and cell["is_header"]:
            draw.rectangle(box, fill=(225, 225, 225))
        if rules == "all":
            draw.rectangle(box, outline="black", width=lw)
        tw, th = r - left, b - t
        if cell["is_header"]:
            x = (box[0] + box[2] - tw) / 2
        elif _is_number(cell["text"]):
            x = box[2] - pad - lw - tw
        else:
            x = box[0] + pad + lw
        y = (box[1] + box[3] - th) / 2
        draw.multiline_text((round(x - left), round(y - t)), cell["text"], font=font, fill="black", spacing=pad // 2)
        text_box = (round(x), round(y), round(x) + tw, round(y) + th)
        out.append({**cell, "bbox": tuple(float(v) for v in box), "text_bbox": tuple(float(v) for v in text_box)})
    if rules == "horizontal":
        for y in (ys[0], ys[spec.header_rows], ys[-1]):
            draw.line((xs[0], y, xs[-1], y), fill="black", width=lw)
        for c in out:
            if c["is_header"] and c["colspan"] > 1:
                x0, _, x1, y1 = c["bbox"]
                draw.line((x0 + pad, y1, x1 - pad, y1), fill="black", width=max(1, lw // 2))
    return image, out


@dataclass
class SamplePage:
    """A page image, its tables' boxes, and each table's ground-truth cells in page px."""

    image: Image.Image
    table_boxes: list[tuple[float, float, float, float]] = field(default_factory=list)
    tables: list[list[dict[str, Any]]] = field(default_factory=list)


def _paragraph(
    draw: ImageDraw.ImageDraw, x: int, y: int, width: int, font: Font, rng: random.Random, lines: int
) -> int:
    """Write `lines` lines of filler prose; returns the y below them."""
    line_h = round(font.size * 1.4) if hasattr(font, "size") else 20
    for _ in range(lines):
        words: list[str] = []
        while True:
            candidate = " ".join(words + [rng.choice(_WORDS)])
            if draw.textlength(candidate, font=font) > width:
                break
            words = candidate.split()
        draw.text((x, y), " ".join(words), font=font, fill="black")
        y += line_h
    return y


def make_page(
    specs: Sequence[TableSpec],
    page_size_px: tuple[int, int] = (1700, 2200),
    *,
    title: str = "Quarterly results by region",
    font_size: int = 28,
    table_font_size: int = 24,
    rules: str = "all",
    seed: int = 0,
) -> SamplePage:
    """A page (Letter at 200 dpi by default) with a title, prose, and the tables stacked in order.

    A table wider than the text column is scaled down to fit; raises ValueError if they do not
    all fit vertically.
    """
    rng = random.Random(seed)
    width, height = page_size_px
    page = Image.new("RGB", page_size_px, "white")
    draw = ImageDraw.Draw(page)
    margin = round(width * 0.08)
    text_w = width - 2 * margin
    body = load_font(font_size)
    draw.text((margin, margin), title, font=load_font(round(font_size * 1.4), bold=True), fill="black")
    y = _paragraph(draw, margin, margin + round(font_size * 3), text_w, body, rng, lines=3) + font_size
    result = SamplePage(page)
    for spec in specs:
        table, cells = render_table(spec, font_size=table_font_size, margin=0, rules=rules)
        if table.width > text_w:
            table, cells = render_table(
                spec, scale=text_w / table.width, font_size=table_font_size, margin=0, rules=rules
            )
        if y + table.height > height - margin:
            raise ValueError("the tables do not fit on the page")
        page.paste(table, (margin, y))
        result.table_boxes.append((float(margin), float(y), float(margin + table.width), float(y + table.height)))
        result.tables.append([_shift(c, margin, y) for c in cells])
        y += table.height + font_size
        if y + 3 * font_size * 1.4 < height - margin:
            y = _paragraph(draw, margin, y, text_w, body, rng, lines=2) + font_size
    return result


def _shift(cell: dict[str, Any], dx: float, dy: float) -> dict[str, Any]:
    out = dict(cell)
    for key in ("bbox", "text_bbox"):
        x0, y0, x1, y1 = cell[key]
        out[key] = (x0 + dx, y0 + dy, x1 + dx, y1 + dy)
    return out


def scan_noise(image: Image.Image, seed: int) -> Image.Image:
    """A mild scanner look: grey, a skew under 0.5 degrees, slight blur and Gaussian noise."""
    import numpy as np

    rng = random.Random(seed)
    grey = image.convert("L").rotate(rng.uniform(-0.45, 0.45), resample=Image.Resampling.BICUBIC, fillcolor=255)
    grey = grey.filter(ImageFilter.GaussianBlur(0.6))
    pixels = np.asarray(grey, dtype=np.float32)
    pixels += np.random.default_rng(seed).normal(0.0, 8.0, pixels.shape)
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def make_scanned_pdf(
    path: Path | str, pages: Sequence[Image.Image], dpi: int = 200, *, noise: bool = False, seed: int = 0
) -> Path:
    """An image-only PDF, one page per image, sized so that rendering at `dpi` gives the images
    back pixel for pixel. `noise` adds `scan_noise` (deterministic for a seed); its skew moves
    ground-truth boxes by up to ~0.8% of the page size."""
    if not pages:
        raise ValueError("no pages")
    path = Path(path)
    images = [scan_noise(p, seed + i) if noise else p.convert("RGB") for i, p in enumerate(pages)]
    images[0].save(path, "PDF", resolution=float(dpi), save_all=True, append_images=images[1:])
    return path


@dataclass
class BornDigitalTable:
    """Ground truth of `make_born_digital_pdf`, in points from the page's top-left corner
    (so pixels at D dpi are points * D / 72)."""

    page_size_pt: tuple[float, float]
    cells: list[dict[str, Any]]
    words: list[dict[str, Any]]


def make_born_digital_pdf(
    path: Path | str,
    spec: TableSpec | None = None,
    *,
    page_size_pt: tuple[float, float] = (612.0, 792.0),
    origin_pt: tuple[float, float] = (72.0, 120.0),
    font_size: float = 10.0,
    padding: float = 4.0,
    title: str = "Results by region",
) -> BornDigitalTable:
    """A one-page PDF with the table as real text and ruling lines (reportlab, test-only).

    The font is DejaVu Sans embedded when available (its metrics then match what PDF readers
    report), Helvetica otherwise. `origin_pt` is the table's top-left corner.
    """
    try:
        from reportlab.pdfbase import pdfmetrics
        from reportlab.pdfbase.ttfonts import TTFont
        from reportlab.pdfgen import canvas
    except ImportError as exc:  # pragma: no cover - reportlab is a test dependency
        raise RuntimeError("make_born_digital_pdf needs reportlab (pip install reportlab)") from exc

    spec = spec or financial_table()
    font = "Helvetica"
    if (ttf := ttf_path()) is not None:
        if "DejaVuSans" not in pdfmetrics.getRegisteredFontNames():
            pdfmetrics.registerFont(TTFont("DejaVuSans", ttf))
        font = "DejaVuSans"
    ascent, descent = pdfmetrics.getAscentDescent(font, font_size)
    line_h = ascent - descent
    cells = spec.layout()
    n_rows, n_cols = spec.shape
    lines = [c["text"].split("\n") for c in cells]
    widths = _sizes(
        cells,
        n_cols,
        "col",
        "colspan",
        [max(pdfmetrics.stringWidth(t, font, font_size) for t in ls) + 2 * padding for ls in lines],
    )
    heights = _sizes(cells, n_rows, "row", "rowspan", [len(ls) * line_h + 2 * padding for ls in lines])
    xs = [origin_pt[0] + sum(widths[:i]) for i in range(n_cols + 1)]
    ys = [origin_pt[1] + sum(heights[:i]) for i in range(n_rows + 1)]
    page_w, page_h = page_size_pt
    pdf = canvas.Canvas(str(path), pagesize=page_size_pt)
    pdf.setFont(font, font_size * 1.4)
    pdf.drawString(origin_pt[0], page_h - origin_pt[1] + 3 * font_size, title)
    pdf.setFont(font, font_size)
    pdf.setLineWidth(0.6)
    out_cells, words = [], []
    for cell, ls in zip(cells, lines):
        x0, y0 = xs[cell["col"]], ys[cell["row"]]
        x1, y1 = xs[cell["col"] + cell["colspan"]], ys[cell["row"] + cell["rowspan"]]
        pdf.rect(x0, page_h - y1, x1 - x0, y1 - y0)
        top = (y0 + y1) / 2 - len(ls) * line_h / 2
        for i, text in enumerate(ls):
            tw = pdfmetrics.stringWidth(text, font, font_size)
            tx = x1 - padding - tw if _is_number(text) and not cell["is_header"] else x0 + padding
            baseline = top + i * line_h + ascent
            pdf.drawString(tx, page_h - baseline, text)
            start = 0
            for word in text.split(" "):
                if word:
                    wx = tx + pdfmetrics.stringWidth(text[:start], font, font_size)
                    words.append(
                        {
                            "text": word,
                            "bbox": (
                                wx,
                                baseline - ascent,
                                wx + pdfmetrics.stringWidth(word, font, font_size),
                                baseline - descent,
                            ),
                        }
                    )
                start += len(word) + 1
        out_cells.append({**cell, "bbox": (x0, y0, x1, y1)})
    pdf.showPage()
    pdf.save()
    return BornDigitalTable((page_w, page_h), out_cells, words)


def write_sample(path: Path | str, *, noise: bool = True) -> list[SamplePage]:
    """The bundled demo: a two-page scanned PDF (200 dpi) with merged-cell tables.

    Returns the pages' ground truth (boxes in pixels at 200 dpi, before the scan skew).
    """
    pages = [
        make_page([financial_table()], title="Annual report 2024: revenue and cost by region", seed=1),
        make_page([staffing_table(), key_figures_table()], title="Staffing and key figures", seed=2),
    ]
    make_scanned_pdf(path, [p.image for p in pages], dpi=200, noise=noise, seed=7)
    return pages
