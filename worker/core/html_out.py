"""Grid -> HTML that keeps colspan/rowspan and every row, with all text escaped."""

from __future__ import annotations

from html import escape

from worker.core.headers import header_rows_of, stub_columns, title_rows
from worker.core.types import Cell, TableGrid


def _cell_html(cell: Cell, tag: str, scope: str = "") -> str:
    attrs = f' scope="{scope}"' if scope else ""
    if cell.colspan > 1:
        attrs += f' colspan="{cell.colspan}"'
    if cell.rowspan > 1:
        attrs += f' rowspan="{cell.rowspan}"'
    return f"<{tag}{attrs}>{escape(cell.text, quote=True)}</{tag}>"


def grid_to_html(grid: TableGrid) -> str:
    """One `<tr>` per grid row, even a row whose every slot is covered by a span from above.

    The header rows (`header_rows_of`: the model's, else inferred, the same decision the
    serialisations use) go to `<thead>` as `<th scope="col">` (`colgroup` when spanning
    columns); the stub's body cells (row labels) are `<th scope="row">`; header cells further
    down (a repeated header) stay in `<tbody>` but keep `<th>`; a title caught in the table's
    box as its first row (`title_rows`) is the `<caption>`. Spans never cross the
    thead/tbody boundary, so the HTML table model reproduces the grid exactly.
    """
    header_rows = header_rows_of(grid)[0]
    titles = title_rows(grid, header_rows)
    stub = stub_columns(grid, header_rows)
    starts: dict[int, list[Cell]] = {}
    for cell in grid.cells:
        starts.setdefault(cell.row, []).append(cell)
    rows = []
    for r in range(grid.n_rows):
        cells = sorted(starts.get(r, []), key=lambda c: c.col)
        tags = []
        for c in cells:
            if r < header_rows:
                tags.append(_cell_html(c, "th", "colgroup" if c.colspan > 1 else "col"))
            elif c.col < stub and c.text.strip() and c.col + c.colspan <= stub:
                tags.append(_cell_html(c, "th", "row"))
            else:
                tags.append(_cell_html(c, "th" if c.is_header else "td"))
        rows.append(f"<tr>{''.join(tags)}</tr>")
    head = "".join(rows[titles:header_rows])
    body = "".join(rows[header_rows:])
    out = "<table>"
    if titles:
        caption = " ".join(c.text for c in grid.cells if c.row < titles)
        out += f"<caption>{escape(caption, quote=True)}</caption>"
    if header_rows > titles:
        out += f"<thead>{head}</thead>"
    out += f"<tbody>{body}</tbody></table>"
    return out
