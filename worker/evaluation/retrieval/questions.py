"""Questions: every unambiguous ground-truth value cell, asked in several phrasings.

A cell qualifies when its (row label, column path) names it alone in its table (the probes'
rule, `worker.evaluation.probes.make_probes`). Each cell is asked as:
- `labels`: the row label and the column path as words;
- `sentence`: "What was the <column path> for <row label>?" (the upper column levels as "in ...");
- `caption`: the labels plus the caption's topic (the caption found on the page);
- `unit`: the labels plus "in <unit>", only for cells whose column states a unit.
Two subsets of the `labels` phrasing are reported apart as their own kinds:
- `tail`: cells in the last quarter of the body of a table with at least `LONG_ROWS` body rows;
- `multilevel`: cells under more than one header level, or under a header cell spanning columns.
The reader (`reader.py`) is given the same structured labels whatever the phrasing: the
phrasing changes what is retrieved, not what counts as a right reading.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from worker.core.headers import column_paths
from worker.evaluation.dataset import GtTable
from worker.evaluation.probes import Probe, gt_grid, gt_header_rows, make_probes

LONG_ROWS = 20
PHRASINGS = ("labels", "sentence", "caption", "unit")
SUBSETS = ("tail", "multilevel")
KINDS = PHRASINGS + SUBSETS
_TABLE_NO = re.compile(r"^\s*(table|tab\.?)\s*[\w.-]*\s*[:.\-–—]*\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Question:
    """One question about one GT cell, in one phrasing (`kind`)."""

    kind: str
    text: str
    doc: str  # the PDF's name without suffix
    page: int
    table: str  # GT table key
    probe: Probe


def topic(caption: str) -> str:
    """A caption without its `Table 3.` number: what the table is about."""
    return _TABLE_NO.sub("", caption).strip()


def _unit_of(ser_units: list[dict[str, object]], col: int) -> str:
    for u in ser_units:
        if u.get("col") == col and u.get("unit"):
            return str(u["unit"])
    return ""


def questions_for(
    table: GtTable, doc: str, page: int, caption: str, units: list[dict[str, object]], skipped: Counter[str]
) -> list[Question]:
    """All questions about one GT table; `units`: its serialisations' units (per column)."""
    header_rows = gt_header_rows(table)
    probes = make_probes(table, header_rows, skipped)
    grid = gt_grid(table, header_rows)
    paths = column_paths(grid, header_rows)
    spanning = {k for c in grid.cells if c.row < header_rows and c.colspan > 1 for k in range(c.col, c.col + c.colspan)}
    body = sorted({c.row for c in grid.cells if c.row >= header_rows})
    tail_from = body[len(body) - max(1, len(body) // 4)] if len(body) >= LONG_ROWS else None
    about = topic(caption)
    out: list[Question] = []
    key = f"{table.source}/{table.table_id}"
    for p in probes:
        row = " ".join(p.row_labels + p.stub_labels)
        cols = " ".join(p.col_labels)
        base = f"{row} {cols}"

        def q(kind: str, text: str, p: Probe = p) -> Question:
            return Question(kind, " ".join(text.split()), doc, page, key, p)

        out.append(q("labels", base))
        top, last = p.col_labels[:-1], p.col_labels[-1]
        where = f" in {' '.join(top)}" if top else ""
        out.append(q("sentence", f"What was the {last} for {row}{where}?"))
        if about:
            out.append(q("caption", f"{about} {base}"))
        unit = _unit_of(units, p.col)
        if unit:
            out.append(q("unit", f"{base} in {unit}"))
        if tail_from is not None and p.row >= tail_from:
            out.append(q("tail", base))
        if len(paths[p.col]) > 1 or p.col in spanning:
            out.append(q("multilevel", base))
    return out
