"""Test helper: a grid spec with spans -> the structure objects and words a perfect model would give."""

from __future__ import annotations

from worker.core.types import Cell, StructureObject, TableGrid, Word


def oracle_objects(
    n_rows: int,
    n_cols: int,
    spans: list[tuple[int, int, int, int]],
    header_rows: int = 0,
    row_h: list[float] | None = None,
    col_w: list[float] | None = None,
    texts: dict[tuple[int, int], str] | None = None,
) -> tuple[list[StructureObject], list[Word], tuple[float, float]]:
    """Spans are (row, col, rowspan, colspan). Words: one per cell at its centre (text from `texts`)."""
    row_h = row_h or [30.0] * n_rows
    col_w = col_w or [80.0] * n_cols
    ys = [0.0]
    for h in row_h:
        ys.append(ys[-1] + h)
    xs = [0.0]
    for w in col_w:
        xs.append(xs[-1] + w)
    width, height = xs[-1], ys[-1]
    objs = [StructureObject("table", 0.99, (0, 0, width, height))]
    objs += [StructureObject("table row", 0.95, (0, ys[r], width, ys[r + 1])) for r in range(n_rows)]
    objs += [StructureObject("table column", 0.95, (xs[c], 0, xs[c + 1], height)) for c in range(n_cols)]
    if header_rows:
        objs.append(StructureObject("table column header", 0.9, (0, 0, width, ys[header_rows])))
    for r, c, rs, cs in spans:
        objs.append(StructureObject("table spanning cell", 0.9, (xs[c], ys[r], xs[c + cs], ys[r + rs])))
    covered = {(r + i, c + j): (r, c) for r, c, rs, cs in spans for i in range(rs) for j in range(cs)}
    words = []
    for r in range(n_rows):
        for c in range(n_cols):
            if covered.get((r, c), (r, c)) != (r, c):
                continue
            rs, cs = next(((s[2], s[3]) for s in spans if (s[0], s[1]) == (r, c)), (1, 1))
            text = (texts or {}).get((r, c), f"r{r}c{c}")
            if not text:
                continue
            cx, cy = (xs[c] + xs[c + cs]) / 2, (ys[r] + ys[r + rs]) / 2
            words.append(Word(text, (cx - 10, cy - 6, cx + 10, cy + 6)))
    return objs, words, (width, height)


def expected_grid(n_rows: int, n_cols: int, spans: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    covered = {(r + i, c + j) for r, c, rs, cs in spans for i in range(rs) for j in range(cs)}
    sig = [tuple(s) for s in spans]
    sig += [(r, c, 1, 1) for r in range(n_rows) for c in range(n_cols) if (r, c) not in covered]
    return sorted(sig)


def grid_from_spec(
    n_rows: int,
    n_cols: int,
    spans: list[tuple[int, int, int, int]],
    header_rows: int = 0,
    texts: dict[tuple[int, int], str] | None = None,
) -> TableGrid:
    covered = {(r + i, c + j) for r, c, rs, cs in spans for i in range(rs) for j in range(cs)}
    cells = [Cell(r, c, rs, cs) for r, c, rs, cs in spans]
    cells += [Cell(r, c) for r in range(n_rows) for c in range(n_cols) if (r, c) not in covered]
    for cell in cells:
        cell.text = (texts or {}).get((cell.row, cell.col), f"r{cell.row}c{cell.col}")
        cell.is_header = cell.row + cell.rowspan <= header_rows
    return TableGrid(n_rows, n_cols, cells, header_rows=header_rows)
