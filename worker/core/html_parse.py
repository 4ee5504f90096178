"""HTML table -> grid, following the HTML table model, repairing what does not fit.

The vision reader returns HTML written by a language model: ragged rows, spans running
past the table, overlapping cells. This parser places cells slot by slot the way a
browser does, then repairs the result into a rectangular partition and lists each repair.
Only the first top-level table is read; text of nested tables joins its cell's text.
"""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from worker.core.types import Cell, TableGrid

MAX_COLSPAN = 1000  # the HTML standard's own limits
MAX_ROWSPAN = 65534
_BREAKS = {"table", "tr", "td", "th", "br", "p", "div", "li", "ul", "ol"}


def parse_span(value: str | None) -> int | None:
    """A `colspan`/`rowspan` attribute as a count of at least 1; None when it is not a number.

    The one reading of span attributes: the parser, the vision answer's sanitiser and the
    TEDS normaliser all use it (each decides what a non-number means for it).
    """
    try:
        return max(1, int(str(value).strip()))
    except (TypeError, ValueError):
        return None


def _span(value: str | None, limit: int) -> int:
    return min(parse_span(value) or 1, limit)


class _TableParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0  # nesting depth of <table>
        self.done = False
        self.rows: list[list[dict[str, Any]]] = []  # cells in source order per row
        self.row_is_head: list[bool] = []
        self.section = "body"
        self.current: dict[str, Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.done:
            return
        if self.current is not None and tag in _BREAKS:
            self.current["text"].append(" ")  # block content inside a cell reads as separate words
        if tag == "table":
            self.depth += 1
            return
        if self.depth != 1:
            return
        if tag == "thead":
            self.section = "head"
        elif tag in ("tbody", "tfoot"):
            self.section = "body"
        elif tag == "tr":
            self._close_cell()
            self.rows.append([])
            self.row_is_head.append(self.section == "head")
        elif tag in ("td", "th"):
            self._close_cell()
            if not self.rows:
                self.rows.append([])
                self.row_is_head.append(self.section == "head")
            a = dict(attrs)
            self.current = {
                "tag": "td" if a.get("scope") in ("row", "rowgroup") else tag,  # a row label, not a column header
                "colspan": _span(a.get("colspan"), MAX_COLSPAN),
                "rowspan": _span(a.get("rowspan"), MAX_ROWSPAN),
                "text": [],
            }
            self.rows[-1].append(self.current)

    def handle_endtag(self, tag: str) -> None:
        if self.done:
            return
        if tag == "table":
            self.depth -= 1
            if self.depth == 0:
                self._close_cell()
                self.done = True
        elif self.depth == 1 and tag in ("td", "th", "tr"):
            self._close_cell()
        elif self.depth == 1 and tag == "thead":
            self.section = "body"

    def handle_data(self, data: str) -> None:
        if self.current is not None and not self.done:
            self.current["text"].append(data)

    def _close_cell(self) -> None:
        self.current = None


def html_to_grid(html: str) -> TableGrid:
    """Parse the first `<table>` of `html`; raises ValueError when there is none."""
    parser = _TableParser()
    parser.feed(html)
    parser.close()
    if parser.depth == 0 and not parser.done and not parser.rows:
        raise ValueError("no <table> found")
    repairs: list[str] = []
    occupied: dict[tuple[int, int], int] = {}
    cells: list[Cell] = []
    n_rows = len(parser.rows)
    for r, row in enumerate(parser.rows):
        c = 0
        for spec in row:
            while (r, c) in occupied:
                c += 1
            rowspan = min(spec["rowspan"], n_rows - r)
            if rowspan < spec["rowspan"]:
                repairs.append(f"rowspan at row {r} ran past the table; clipped")
            colspan = spec["colspan"]
            # a colspan running into a slot held by a rowspan from above is cut short
            for k in range(colspan):
                if any((rr, c + k) in occupied for rr in range(r, r + rowspan)):
                    repairs.append(f"cell at row {r} overlapped another; colspan {colspan} cut to {k}")
                    colspan = k
                    break
            text = " ".join("".join(spec["text"]).split())
            cell = Cell(
                r, c, rowspan, max(colspan, 1), text=text, is_header=spec["tag"] == "th" or parser.row_is_head[r]
            )
            for rr in range(r, r + rowspan):
                for cc in range(c, c + cell.colspan):
                    occupied[(rr, cc)] = len(cells)
            cells.append(cell)
            c += cell.colspan
    n_cols = max((cc + 1 for _, cc in occupied), default=0)
    missing = 0
    for r in range(n_rows):
        for c in range(n_cols):
            if (r, c) not in occupied:
                occupied[(r, c)] = len(cells)
                cells.append(Cell(r, c))
                missing += 1
    if missing:
        repairs.append(f"{missing} empty cell(s) added to make the grid rectangular")
    header_rows = 0
    while header_rows < n_rows and parser.row_is_head[header_rows]:
        header_rows += 1
    # a header cell's span must not reach into the body: clip it
    for cell in cells:
        if cell.row < header_rows < cell.row + cell.rowspan:
            repairs.append(f"header cell at row {cell.row} spanned into the body; clipped")
            for rr in range(header_rows, cell.row + cell.rowspan):
                for cc in range(cell.col, cell.col + cell.colspan):
                    occupied[(rr, cc)] = len(cells)
                    cells.append(Cell(rr, cc))
            cell.rowspan = header_rows - cell.row
    return TableGrid(n_rows, n_cols, cells, header_rows=header_rows, repairs=repairs)
