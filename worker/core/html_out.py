"""Grid -> HTML that keeps colspan/rowspan and every row, with all text escaped."""

from __future__ import annotations

from html import escape

from worker.core.types import Cell, TableGrid


def _cell_html(cell: Cell, tag: str) -> str:
    attrs = ""
    if cell.colspan > 1:
        attrs += f' colspan="{cell.colspan}"'
    if cell.rowspan > 1:
        attrs += f' rowspan="{cell.rowspan}"'
    return f"<{tag}{attrs}>{escape(cell.text, quote=True)}</{tag}>"


def grid_to_html(grid: TableGrid) -> str:
    """One `<tr>` per grid row, even a row whose every slot is covered by a span from above.

    Leading header rows go to `<thead>` as `<th>`; header cells further down (a repeated
    header) stay in `<tbody>` but keep `<th>`. Spans never cross the thead/tbody boundary
    (reconstruction clips them), so the HTML table model reproduces the grid exactly.
    """
    starts: dict[int, list[Cell]] = {}
    for cell in grid.cells:
        starts.setdefault(cell.row, []).append(cell)
    rows = []
    for r in range(grid.n_rows):
        cells = sorted(starts.get(r, []), key=lambda c: c.col)
        tags = "".join(_cell_html(c, "th" if c.is_header or r < grid.header_rows else "td") for c in cells)
        rows.append(f"<tr>{tags}</tr>")
    head = "".join(rows[: grid.header_rows])
    body = "".join(rows[grid.header_rows :])
    out = "<table>"
    if grid.header_rows:
        out += f"<thead>{head}</thead>"
    out += f"<tbody>{body}</tbody></table>"
    return out
