"""The searched corpus: whole documents as units of text, one list per representation.

A document contributes its tables (from one structure source: ground truth through our
serialisers, or our own extraction in text or scan mode) and its prose: the PDF text layer
outside the ground-truth table boxes, in paragraphs of at most `PROSE_CHARS` characters, as
distractors every representation shares. The naive representation ignores structure and
cuts each page's whole text (tables included) into fixed windows.

Representations of the tables:
- `naive`: flattened page text in fixed 1,000-character windows;
- `markdown`: one unit per table, its caption then its Markdown;
- `rows`: one unit per data row, the caption then the row in `label: value` form;
- `chunks`: `worker.core.chunks` as shipped (the chunk defaults given in `ChunkOptions`);
- more named chunk layouts for comparing defaults (`LAYOUTS`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worker.core.captions import capture_context, group_lines
from worker.core.serialise import TableContext, serialisations
from worker.core.types import BBox, TableGrid, Word

WINDOW_CHARS = 1000
PROSE_CHARS = 1000


@dataclass(frozen=True, slots=True)
class Unit:
    """One searchable piece of text and where it came from (document name, pages)."""

    text: str
    doc: str
    pages: tuple[int, ...]
    kind: str  # "table" | "prose" | "window"
    boxes: tuple[tuple[int, BBox], ...] = ()  # (page, box in page pixels) of the table it is from


@dataclass(slots=True)
class SourceTable:
    """A table as a structure source gives it: grid, serialisations, pages, row -> page."""

    doc: str
    table_id: str
    grid: TableGrid
    ser: dict[str, Any]
    pages: list[int]
    row_pages: dict[int, int]
    boxes: list[tuple[int, BBox]] = field(default_factory=list)  # (page, box) of each part


@dataclass(slots=True)
class PageText:
    """One PDF page's text-layer words (page pixels at `dpi`) and the GT table boxes on it."""

    doc: str
    page: int
    size: tuple[int, int]
    words: list[Word]
    tables: list[BBox]


def page_texts(pdf: Path, gt_boxes: dict[int, list[BBox]], dpi: int) -> list[PageText]:
    """Every page of `pdf` with its text-layer words; `gt_boxes`: page -> GT table boxes."""
    from worker.inputs import open_document
    from worker.settings import Settings
    from worker.text_layer import pdf_words

    doc = open_document(pdf, settings=Settings(_env_file=None))
    return [
        PageText(pdf.stem, p, doc.page_size_px(p, dpi), pdf_words(doc, p, dpi), gt_boxes.get(p, []))
        for p in range(1, doc.page_count + 1)
    ]


def _inside(w: Word, box: BBox, pad: float = 2.0) -> bool:
    cx, cy = (w.bbox[0] + w.bbox[2]) / 2, (w.bbox[1] + w.bbox[3]) / 2
    return box[0] - pad <= cx <= box[2] + pad and box[1] - pad <= cy <= box[3] + pad


def _lines(words: list[Word]) -> list[str]:
    return [ln.text for ln in group_lines(words)]


def _windows(lines: list[str], size: int) -> list[str]:
    """Lines joined and cut into pieces of at most `size` characters (at line ends where one fits)."""
    out: list[str] = []
    cur = ""
    for line in lines:
        while len(line) > size:  # a line longer than a window: cut at the size
            if cur:
                out.append(cur)
                cur = ""
            out.append(line[:size])
            line = line[size:]
        if cur and len(cur) + 1 + len(line) > size:
            out.append(cur)
            cur = ""
        cur = f"{cur}\n{line}" if cur else line
    if cur:
        out.append(cur)
    return out


def naive_windows(page: PageText) -> list[Unit]:
    """The page's whole text flattened and cut every `WINDOW_CHARS` characters, as a naive
    pipeline would (no respect for lines, rows or tables)."""
    text = " ".join(_lines(page.words))
    return [
        Unit(text[i : i + WINDOW_CHARS], page.doc, (page.page,), "window") for i in range(0, len(text), WINDOW_CHARS)
    ]


def prose_units(page: PageText) -> list[Unit]:
    """The page's text outside its GT tables, in paragraphs of at most `PROSE_CHARS`."""
    words = [w for w in page.words if not any(_inside(w, b) for b in page.tables)]
    return [Unit(t, page.doc, (page.page,), "prose") for t in _windows(_lines(words), PROSE_CHARS)]


def gt_context(page: PageText, box: BBox) -> TableContext:
    """Caption and notes of a GT table found the way the pipeline finds them (text layer)."""
    ctx = capture_context(page.words, box, page.size, other_tables=page.tables)
    return TableContext(ctx.caption, list(ctx.notes), [page.page])


def oracle_table(
    doc: str, table_id: str, grid: TableGrid, context: TableContext, box: tuple[int, BBox] | None = None
) -> SourceTable:
    ser = serialisations(grid, context, table_id=table_id)
    return SourceTable(doc, table_id, grid, ser, list(context.pages), {}, [box] if box else [])


def stored_tables(storage: Any, doc_id: str, doc: str, scale: float = 1.0) -> list[SourceTable]:
    """Our extraction's tables of one stored document (logical tables: merged across pages),
    with each part's page box times `scale` (extraction pixels to the questions' pixels)."""
    from worker.outputs import manifest_key
    from worker.retrieval.logical_tables import iter_logical_tables

    manifest = storage.get_json(manifest_key(doc_id))
    placed = {
        str(e["table_id"]): (int(e["page"]), tuple(float(v) * scale for v in e["bbox"]))
        for e in manifest.get("tables") or []
        if e.get("bbox")
    }
    return [
        SourceTable(
            doc,
            t.table_id,
            t.grid,
            _current(t),
            list(t.pages),
            dict(t.row_pages),
            [placed[p] for p in t.parts if p in placed],  # type: ignore[misc]
        )
        for t in iter_logical_tables(storage, manifest)
    ]


def _current(t: Any) -> dict[str, Any]:
    """A stored table's serialisations made again from its grid and context with today's code,
    so a cached extraction measures the serialiser under test, not the one it was stored by."""
    ser = t.serialisations
    context = TableContext(str(ser.get("caption") or ""), [str(n) for n in ser.get("notes") or []], list(t.pages))
    return serialisations(t.grid, context, table_id=t.table_id)


# --- table representations -------------------------------------------------------------

TableUnits = Callable[[SourceTable], list[str]]


def _title(t: SourceTable) -> str:
    return f"Table: {t.ser.get('caption') or 'Table ' + t.table_id}"


def markdown_units(t: SourceTable) -> list[str]:
    return [_title(t) + "\n\n" + str(t.ser.get("markdown") or "")]


def row_units(t: SourceTable) -> list[str]:
    return [_title(t) + "\n\n" + line for line in t.ser["row_lines"]] or [_title(t)]


def table_units(t: SourceTable, make: TableUnits) -> Iterator[Unit]:
    pages = tuple(t.pages)
    for text in make(t):
        yield Unit(text, t.doc, pages, "table", tuple(t.boxes))


def chunk_units(t: SourceTable, chunker: Callable[[SourceTable], list[dict[str, Any]]]) -> Iterator[Unit]:
    """Chunks (dicts as `tablesight chunks` gives them) with the pages of the rows they hold."""
    for c in chunker(t):
        pages = tuple(c.get("pages") or t.pages)
        yield Unit(str(c["text"]), t.doc, pages, "table", tuple(b for b in t.boxes if b[0] in pages))


def same_table(a: BBox, b: BBox, share: float = 0.5) -> bool:
    """Two page boxes of one table: their overlap is at least `share` of the smaller box (a
    table the extraction cut in two, or read with its neighbour, still counts as that table)."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return False
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return smaller > 0 and w * h >= share * smaller
