"""TEDS and TEDS-struct (`table-recognition-metric`) after normalising both sides.

Ground truth and predictions differ in markup that is not structure: PubTabNet keeps
`<thead>/<tbody>` and inline `<b>/<i>/<sup>/<sub>`, ICDAR has neither, our HTML has
`<thead>/<th>`. Scored raw, those differences cost points that say nothing about the table.
Both sides are therefore rewritten to `<table><tr><td>` with colspan/rowspan, plain text
(inline tags dropped, their text kept), whitespace collapsed and escaping redone, so identical
grids score exactly 1.0 whatever their markup. A run of cells outside any `<tr>` (Table
Transformer's reference writes header rows as `<thead><th>…</thead>`) counts as one row: a
header-markup slip, not a structure error, and comparisons should not hinge on it.
"""

from __future__ import annotations

import html as htmllib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from lxml import etree
from lxml import html as lxml_html

from worker.core.html_parse import parse_span

_SECTIONS = ("thead", "tbody", "tfoot")
EMPTY = "<html><body><table></table></body></html>"  # normal form of markup without table rows
_CELLS = ("td", "th")


@dataclass(frozen=True, slots=True)
class NormCell:
    """One cell of a normalised table."""

    text: str
    rowspan: int = 1
    colspan: int = 1


def parse_rows(markup: str) -> list[list[NormCell]]:
    """The rows of the first `<table>` in `markup` as plain cells (empty list without a table)."""
    if not markup or not markup.strip():
        return []
    try:
        root = lxml_html.fromstring(markup)
    except (etree.ParserError, ValueError):
        return []
    table = root if root.tag == "table" else next(root.iter("table"), None)
    if table is None:
        return []
    rows: list[list[NormCell]] = []
    _collect(table, rows, nested=True)
    return rows


def normalize_html(markup: str) -> str:
    """`<html><body><table><tr><td>…` form of a table, as the metric expects it."""
    parts = ["<html><body><table>"]
    for row in parse_rows(markup):
        parts.append("<tr>")
        for c in row:
            attrs = ""
            if c.colspan > 1:
                attrs += f' colspan="{c.colspan}"'
            if c.rowspan > 1:
                attrs += f' rowspan="{c.rowspan}"'
            parts.append(f"<td{attrs}>{htmllib.escape(c.text, quote=False)}</td>")
        parts.append("</tr>")
    parts.append("</table></body></html>")
    return "".join(parts)


def is_rectangular(markup: str) -> bool:
    """True when the table's cells tile a full rectangle (no hole, overlap, or ragged row)."""
    rows = parse_rows(markup)
    if not rows:
        return False
    taken: set[tuple[int, int]] = set()
    for r, row in enumerate(rows):
        c = 0
        for cell in row:
            while (r, c) in taken:
                c += 1
            for i in range(r, r + cell.rowspan):
                for j in range(c, c + cell.colspan):
                    taken.add((i, j))
            c += cell.colspan
    n_rows = max(i for i, _ in taken) + 1
    n_cols = max(j for _, j in taken) + 1
    return n_rows == len(rows) and len(taken) == n_rows * n_cols


def teds(pred_html: str, gt_html: str, structure_only: bool = False) -> float:
    """TEDS (or TEDS-struct) of a prediction against ground truth, both normalised first."""
    return teds_normalized(normalize_html(pred_html), normalize_html(gt_html), structure_only)


def teds_normalized(pred_norm: str, gt_norm: str, structure_only: bool = False) -> float:
    """TEDS of two already-normalised tables (lets callers normalise the ground truth once)."""
    if pred_norm == gt_norm:
        return 1.0
    if pred_norm == EMPTY or gt_norm == EMPTY:  # no table at all: nothing matched, as the metric
        return 0.0
    return float(_metric(structure_only)(pred_norm, gt_norm))


@lru_cache(maxsize=2)
def _metric(structure_only: bool) -> Any:
    from table_recognition_metric import TEDS

    return TEDS(structure_only=structure_only)


def _collect(parent: etree._Element, rows: list[list[NormCell]], nested: bool) -> None:
    """Rows under `parent`: each `<tr>`, plus each run of cells standing outside any `<tr>`."""
    loose: list[NormCell] = []
    for child in parent:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag in _CELLS:
            loose.append(_cell(child))
            continue
        if loose:
            rows.append(loose)
            loose = []
        if tag == "tr":
            rows.append(_cells_of(child))
        elif tag in _SECTIONS and nested:
            _collect(child, rows, nested=False)
    if loose:
        rows.append(loose)


def _cells_of(tr: etree._Element) -> list[NormCell]:
    return [_cell(c) for c in tr if c.tag in _CELLS]


def _cell(el: etree._Element) -> NormCell:
    for br in el.iter("br"):  # a line break separates words, like the newline it stands for
        br.tail = " " + (br.tail or "")
    text = " ".join(el.text_content().split())
    return NormCell(text, parse_span(el.get("rowspan")) or 1, parse_span(el.get("colspan")) or 1)
