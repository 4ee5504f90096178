"""Tables continued across pages: which parts belong together, and the merged logical table.

A page break cuts a table into parts that retrieval would otherwise treat as strangers:
the second part loses its header (or carries a repeated one that looks like boilerplate).
Part B on page p+1 continues part A on page p when A is the last table of its page and B
the first of the next, both have the same number of columns at compatible x positions,
no other text flows between them, B has no caption of its own (or one saying "continued",
or naming the same table), and B's header, if it has one, repeats A's. The repeated header
is then recognised as a header (it confirms the link and labels B), not merged as data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from worker.core.captions import is_continued_caption
from worker.core.types import BBox, Cell, TableGrid

_TABLE_NO = re.compile(r"^\s*(?:table|tab\.|tabelle|tableau|exhibit)\s*([\dA-Z][\w.\-]*)", re.IGNORECASE)
_TOKEN = re.compile(r"\w+")


@dataclass(slots=True)
class Part:
    """What linking needs to know of one stored table (built from its JSON by `part_from_record`)."""

    table_id: str
    page: int
    bbox: BBox
    page_size: tuple[float, float]
    col_edges: list[tuple[float, float] | None]
    header_labels: list[str]
    header_rows: int
    caption: str = ""
    above_clear: bool | None = None
    below_clear: bool | None = None
    rotated: bool = False
    first_on_page: bool = True
    last_on_page: bool = True

    @property
    def n_cols(self) -> int:
        return len(self.col_edges)


@dataclass(slots=True)
class Link:
    """B continues A; why, and whether B repeats A's header (its header rows then skipped)."""

    a: str
    b: str
    repeated_header: bool
    reasons: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.a, "to": self.b, "repeated_header": self.repeated_header, "reasons": self.reasons}


def column_edges(grid: dict[str, Any], offset_x: float = 0.0) -> list[tuple[float, float] | None]:
    """(left, right) of each column in page pixels, from the cell boxes of a stored grid."""
    lo: dict[int, float] = {}
    hi: dict[int, float] = {}
    for c in grid.get("cells", []):
        if not c.get("bbox"):
            continue
        lo.setdefault(int(c["col"]), float(c["bbox"][0]) + offset_x)
        hi.setdefault(int(c["col"]) + int(c.get("colspan", 1)) - 1, float(c["bbox"][2]) + offset_x)
    n = int(grid.get("n_cols", 0))
    return [(lo[i], hi[i]) if i in lo and i in hi else None for i in range(n)]


def part_from_record(record: dict[str, Any], *, first_on_page: bool, last_on_page: bool) -> Part:
    """A Part from a table's stored JSON (page, bbox, crop_box, page_size, grid, context, serialisations)."""
    ser = record.get("serialisations") or {}
    ctx = record.get("context") or {}
    crop = record.get("crop_box") or [0, 0, 0, 0]
    size = record.get("page_size") or [0, 0]
    x0, y0, x1, y1 = (float(v) for v in record["bbox"])
    return Part(
        table_id=str(record["table_id"]),
        page=int(record["page"]),
        bbox=(x0, y0, x1, y1),
        page_size=(float(size[0]), float(size[1])),
        col_edges=column_edges(record.get("grid") or {}, float(crop[0])),
        header_labels=list(ser.get("column_labels") or []) if ser.get("header_rows") else [],
        header_rows=int(ser.get("header_rows") or 0),
        caption=str(ctx.get("caption") or ""),
        above_clear=ctx.get("above_clear"),
        below_clear=ctx.get("below_clear"),
        rotated=bool(record.get("rotated")),
        first_on_page=first_on_page,
        last_on_page=last_on_page,
    )


def similarity(a: list[str], b: list[str]) -> float:
    """Token overlap (Jaccard) of two label lists: OCR noise aside, a repeated header scores ~1."""
    ta = set(_TOKEN.findall(" ".join(a).lower()))
    tb = set(_TOKEN.findall(" ".join(b).lower()))
    if not ta and not tb:
        return 1.0
    return len(ta & tb) / len(ta | tb)


def _columns_match(a: Part, b: Part, tolerance: float) -> tuple[bool, str]:
    width = max(a.page_size[0], b.page_size[0], 1.0)
    if None in a.col_edges or None in b.col_edges:
        return False, "column positions unknown"
    ea = [e for e in a.col_edges if e is not None]
    eb = [e for e in b.col_edges if e is not None]
    inner = [(ea[i][1] + ea[i + 1][0]) / 2 - (eb[i][1] + eb[i + 1][0]) / 2 for i in range(len(ea) - 1)]
    outer = [ea[0][0] - eb[0][0], ea[-1][1] - eb[-1][1]]
    worst = max([abs(d) for d in inner] + [abs(d) / 2 for d in outer]) / width
    return worst <= tolerance, f"columns {worst:.3f} of page width apart (limit {tolerance:g})"


def continues(
    a: Part, b: Part, *, tolerance: float = 0.03, header_similarity: float = 0.6
) -> tuple[Link | None, list[str]]:
    """The link when `b` continues `a`, else None; the reasons either way (for the manifest)."""
    why: list[str] = []
    if b.page != a.page + 1:
        return None, ["not on consecutive pages"]
    if not (a.last_on_page and b.first_on_page):
        return None, ["not the last table of one page and the first of the next"]
    if a.rotated or b.rotated:
        return None, ["rotated table"]
    if a.n_cols != b.n_cols or a.n_cols == 0:
        return None, [f"{a.n_cols} vs {b.n_cols} columns"]
    ok, note = _columns_match(a, b, tolerance)
    if not ok:
        return None, [note]
    why.append(note)
    if b.caption and not is_continued_caption(b.caption):
        na, nb = _TABLE_NO.match(a.caption), _TABLE_NO.match(b.caption)
        if not (na and nb and na.group(1).rstrip(".:") == nb.group(1).rstrip(".:")):
            return None, [f"the second part has a caption of its own: {b.caption[:60]!r}"]
        why.append("same table number in both captions")
    elif b.caption:
        why.append("caption says continued")
    if a.below_clear is False or b.above_clear is False:
        return None, ["other text between the parts"]
    for part, edge, clear in ((a, "bottom", a.below_clear), (b, "top", b.above_clear)):
        if clear is None:  # that part of the page was not seen: judge by where the table sits
            y = part.bbox[3] if edge == "bottom" else part.bbox[1]
            h = max(part.page_size[1], 1.0)
            if (edge == "bottom" and y < 0.55 * h) or (edge == "top" and y > 0.45 * h):
                return None, [f"table {part.table_id} does not reach the page {edge}"]
    repeated = False
    if b.header_rows:
        s = similarity(a.header_labels, b.header_labels)
        if a.header_labels and s < header_similarity:
            return None, [f"different header (similarity {s:.2f})"]
        repeated = bool(a.header_labels)
        why.append(f"header repeated (similarity {s:.2f})" if repeated else "header only on the second part")
    else:
        why.append("header not repeated")
    return Link(a.table_id, b.table_id, repeated, why), why


def link_parts(parts: list[Part], **kw: Any) -> tuple[list[list[str]], list[Link]]:
    """Chains of table ids that form one logical table (length >= 2), and the links found."""
    ordered = sorted(parts, key=lambda p: (p.page, p.table_id))
    links: list[Link] = []
    for a in ordered:
        for b in ordered:
            if b.page == a.page + 1:
                link, _ = continues(a, b, **kw)
                if link:
                    links.append(link)
    nxt = {ln.a: ln.b for ln in links}
    has_prev = {ln.b for ln in links}
    chains = []
    for p in ordered:
        if p.table_id in nxt and p.table_id not in has_prev:
            chain = [p.table_id]
            while chain[-1] in nxt:
                chain.append(nxt[chain[-1]])
            chains.append(chain)
    return chains, links


def merge_grids(grids: list[TableGrid], skip_rows: list[int]) -> tuple[TableGrid, list[tuple[int, int]]]:
    """One grid from parts stacked in order; part i loses its first skip_rows[i] rows (a repeated
    header). Returns the grid and, per merged row, (part index, row in that part).

    Cell boxes are dropped: each part's boxes are in its own crop, which a merged grid has not.
    """
    cells: list[Cell] = []
    sources: list[tuple[int, int]] = []
    offset = 0
    for i, (grid, skip) in enumerate(zip(grids, skip_rows)):
        skip = min(skip, grid.n_rows)
        for cell in grid.cells:
            r0 = max(cell.row, skip)
            r1 = cell.row + cell.rowspan
            if r1 <= r0:
                continue
            cells.append(
                Cell(
                    r0 - skip + offset,
                    cell.col,
                    r1 - r0,
                    cell.colspan,
                    cell.text,
                    None,
                    cell.is_header,
                    cell.is_projected_row_header,
                    cell.confidence,
                )
            )
        sources += [(i, r) for r in range(skip, grid.n_rows)]
        offset += grid.n_rows - skip
    first = grids[0]
    repairs = [f"part {i + 1}: {r}" for i, g in enumerate(grids) for r in g.repairs]
    merged = TableGrid(
        offset,
        first.n_cols,
        cells,
        header_rows=min(first.header_rows, offset),
        confidence=min(g.confidence for g in grids),
        repairs=repairs,
    )
    return merged, sources
