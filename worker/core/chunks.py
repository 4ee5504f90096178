"""Chunks to embed: a table whole up to a token budget, above it split by rows only.

Every chunk repeats the table's description (caption, pages, flattened column labels,
units, notes) so that no value is orphaned from its labels; rows are never split, rows
tied by a cell spanning them stay together, and a section (the rows under one group
label) starts a fresh chunk rather than straddling two when it fits in one. What cannot
be kept (a single row or row block larger than the budget) is flagged, never cut.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from worker.core.doubt import unsure_slots
from worker.core.headers import PATH_SEP
from worker.core.html_out import grid_to_html
from worker.core.types import Cell, TableGrid

TokenCounter = Callable[[str], int]

_WORD = re.compile(r"[^\W\d_]+|\d+|[^\w\s]", re.UNICODE)


def approx_tokens(text: str) -> int:
    """Token count without a tokenizer: letters in pieces of up to 6, digits in pieces of up to
    3 (as BPE vocabularies split numbers), every other symbol one. An approximation meant to
    err on the high side for English prose and tables; pass `--tokenizer` for exact counts."""
    total = 0
    for piece in _WORD.findall(text):
        if piece.isdigit():
            total += math.ceil(len(piece) / 3)
        elif piece[0].isalpha():
            total += math.ceil(len(piece) / 6)
        else:
            total += 1
    return total


@dataclass(slots=True)
class _Span:
    rows: list[int] = field(default_factory=list)  # indices into ser["rows"]
    tokens: int = 0
    flags: set[str] = field(default_factory=set)


def _groups(items: list[dict[str, Any]], key: str, idx: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for i in idx:
        if out and items[out[-1][-1]][key] == items[i][key]:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def _glued(rows: list[dict[str, Any]], blocks: list[list[int]]) -> list[list[int]]:
    """Blocks with no data row (a group label, an empty row) joined to the block after them:
    a section label must open the chunk of its rows, not close the chunk before."""
    out: list[list[int]] = []
    waiting: list[int] = []
    for block in blocks:
        if all(rows[i]["kind"] != "data" for i in block):
            waiting += block
            continue
        out.append(waiting + block)
        waiting = []
    if waiting:
        out.append(waiting)
    return out


def plan(rows: list[dict[str, Any]], row_tokens: list[int], room: int) -> list[_Span]:
    """Row ranges (indices into `rows`) whose tokens fit `room`, by sections, then blocks, then rows."""
    spans: list[_Span] = []
    cur = _Span()

    def close() -> None:
        nonlocal cur
        if cur.rows:
            spans.append(cur)
        cur = _Span()

    def add(i: int) -> None:
        cur.rows.append(i)
        cur.tokens += row_tokens[i]

    for section in _groups(rows, "section", list(range(len(rows)))):
        sec_tokens = sum(row_tokens[i] for i in section)
        if cur.rows and cur.tokens + sec_tokens > room and sec_tokens <= room:
            close()  # the whole section fits a chunk of its own: do not straddle two
        for block in _glued(rows, _groups(rows, "block", section)):
            b_tokens = sum(row_tokens[i] for i in block)
            if cur.rows and cur.tokens + b_tokens > room:
                close()
            if b_tokens <= room:
                for i in block:
                    add(i)
                continue
            for i in block:  # a row block larger than a whole chunk: the only split allowed
                if cur.rows and cur.tokens + row_tokens[i] > room:
                    cur.flags.add("split_row_block")
                    close()
                    cur.flags.add("split_row_block")
                add(i)
                if row_tokens[i] > room:
                    cur.flags.add("row_over_budget")
    close()
    return spans


def grid_slice(grid: TableGrid, header_rows: int, first: int, last: int) -> TableGrid:
    """The header rows plus grid rows first..last; cells crossing the cut are clipped to it
    (their text kept), so the HTML of a chunk is a valid table of its own."""
    keep = list(range(min(header_rows, grid.n_rows))) + [r for r in range(first, last + 1) if r >= header_rows]
    new_index = {r: i for i, r in enumerate(keep)}
    cells = []
    for cell in grid.cells:
        covered = [new_index[r] for r in range(cell.row, cell.row + cell.rowspan) if r in new_index]
        if covered:
            cells.append(
                Cell(
                    covered[0],
                    cell.col,
                    len(covered),
                    cell.colspan,
                    cell.text,
                    cell.bbox,
                    cell.is_header or cell.row < header_rows,
                    cell.is_projected_row_header,
                    cell.confidence,
                )
            )
    return TableGrid(len(keep), grid.n_cols, cells, header_rows=min(header_rows, len(keep)))


PREAMBLES = ("full", "lean")
LAYOUTS = ("labelled", "table")


def chunk_preamble(ser: dict[str, Any], preamble: str = "full") -> str:
    """What every chunk of a table starts with. `full`: the table's description (caption, pages,
    every column path, units, notes). `lean`: the caption, pages and notes only: the rows say
    each column label and unit themselves (labelled rows), or the chunk's own header row does
    (table layout), so listing them again only crowds out rows. The caption is never cut."""
    if preamble not in PREAMBLES:
        raise ValueError(f"preamble must be one of {PREAMBLES}, not {preamble!r}")
    text = str(ser["description"])
    if preamble == "full":
        return text
    return "\n".join(ln for ln in text.split("\n") if not ln.startswith(("Columns: ", "Units: ")))


def _md_group_line(group: list[str], n_cols: int) -> str:
    """A section row in pipe form, repeated at the top of a chunk that starts inside its section."""
    label = PATH_SEP.join(group).replace("\\", "\\\\").replace("|", "\\|")
    return "| " + label + " |" + " |" * (n_cols - 1)


def _layout(ser: dict[str, Any], preamble: str, layout: str) -> tuple[str, list[str], str]:
    """(text before the rows, each row's text or "" for none, the separator after the head)."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, not {layout!r}")
    head = chunk_preamble(ser, preamble)
    rows = ser["rows"]
    md = str(ser.get("markdown") or "").split("\n")
    if layout == "labelled" or len(md) != len(rows) + 2:  # no Markdown for it: labelled rows
        return head, [str(r["line"]) for r in rows], "\n\n"
    lines = [md[2 + i] if r["kind"] == "group" or r["line"] else "" for i, r in enumerate(rows)]
    return head + "\n\n" + md[0] + "\n" + md[1], lines, "\n"


def chunk_table(
    grid: TableGrid,
    ser: dict[str, Any],
    max_tokens: int,
    count: TokenCounter = approx_tokens,
    *,
    table_id: str = "",
    pages: list[int] | None = None,
    row_pages: dict[int, int] | None = None,
    preamble: str = "full",
    layout: str = "labelled",
) -> list[dict[str, Any]]:
    """Chunks of one (possibly merged) table from its grid and `serialisations` output.

    Each chunk: table id, pages, grid row range (inclusive; header rows are in every chunk
    and in no range), the text to embed (preamble + rows), the HTML to show, its token count
    and flags. The ranges cover every body row exactly once, in order.

    layout `labelled`: each row as its `Row label; Column path: value; ...` line, so every
    value carries its labels wherever the chunk goes. layout `table`: the chunk's rows as a
    Markdown table under the flattened column paths, said once per chunk (a chunk that opens
    inside a section repeats the section's label row, so no row loses its section).
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be positive")
    rows = ser["rows"]
    pages = list(pages if pages is not None else ser.get("pages") or [])
    header, lines, sep = _layout(ser, preamble, layout)
    head_tokens = count(header)
    row_tokens = [count(x) + 1 if x else 0 for x in lines]
    whole = header + sep + "\n".join(x for x in lines if x)
    whole_tokens = count(whole)
    if not rows or whole_tokens <= max_tokens:
        spans = [_Span(list(range(len(rows))), whole_tokens - head_tokens)]
    else:
        spans = plan(rows, row_tokens, max_tokens - head_tokens)
    doubted = {r for r, c in unsure_slots(grid, int(ser.get("header_rows", 0))) if c > 0}
    out = []
    for k, span in enumerate(spans):
        chosen = [rows[i] for i in span.rows]
        body = [lines[i] for i in span.rows if lines[i]]
        if sep == "\n" and chosen and chosen[0]["kind"] != "group" and chosen[0]["group"]:
            body.insert(0, _md_group_line(list(chosen[0]["group"]), grid.n_cols))
        text = header + sep + "\n".join(body)
        tokens = count(text)
        flags = sorted(
            span.flags
            | ({"over_budget"} if tokens > max_tokens else set())
            | ({"unsure_values"} if any(r["row"] in doubted for r in chosen) else set())
        )
        if head_tokens >= max_tokens:
            flags = sorted(set(flags) | {"header_over_budget"})
        if chosen:
            first, last = chosen[0]["row"], chosen[-1]["row"]
            html = grid_to_html(grid_slice(grid, ser["header_rows"], first, last))
            chunk_pages = sorted({row_pages[r["row"]] for r in chosen if r["row"] in row_pages}) if row_pages else pages
        else:  # a table with no body rows: the header is all there is
            first = last = -1
            html = grid_to_html(grid)
            chunk_pages = pages
        out.append(
            {
                "table_id": table_id,
                "chunk": k,
                "n_chunks": len(spans),
                "page": chunk_pages[0] if chunk_pages else None,
                "pages": chunk_pages,
                "row_range": [first, last],
                "n_rows": len(chosen),
                "tokens": tokens,
                "flags": flags,
                "text": text,
                "html": html,
            }
        )
    return out


def description_chunk(
    grid: TableGrid,
    ser: dict[str, Any],
    description: str,
    count: TokenCounter = approx_tokens,
    *,
    table_id: str = "",
    pages: list[int] | None = None,
    view: str = "",
) -> dict[str, Any]:
    """The one chunk of a dataset-sized table: its description (what it holds, which rows,
    which columns) to embed, pointing to the store view that answers questions on it; the
    HTML is the header alone. Same fields as `chunk_table`'s chunks, plus `kind` and `view`."""
    pages = list(pages if pages is not None else ser.get("pages") or [])
    body = [r for r in ser["rows"] if r["kind"] != "header"]
    first, last = (body[0]["row"], body[-1]["row"]) if body else (-1, -1)
    header_rows = int(ser.get("header_rows", 0))
    tokens = count(description)
    return {
        "table_id": table_id,
        "chunk": 0,
        "n_chunks": 1,
        "page": pages[0] if pages else None,
        "pages": pages,
        "row_range": [first, last],
        "n_rows": sum(1 for r in ser["rows"] if r["kind"] == "data"),
        "tokens": tokens,
        "flags": ["table_description"],
        "text": description,
        "html": grid_to_html(grid_slice(grid, header_rows, grid.n_rows, grid.n_rows - 1)),
        "kind": "table_description",
        "view": view or table_id,
    }


def data_rows(ser: dict[str, Any]) -> int:
    """Body rows holding values (what the row threshold of `tablesight chunks` counts)."""
    return sum(1 for r in ser["rows"] if r["kind"] == "data")
