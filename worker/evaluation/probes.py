"""Cell probes: can a value be found by its labels, and read bound to them?

Each probe is one ground-truth body cell: its value, its row label (first-column text, with
the section labels above it) and its column labels (the header texts over its column). The
table is rebuilt from oracle structure objects (optionally with model-like noise), then
serialised to row lines and chunked. Per probe, on the row lines and on the chunks:

- find: the first unit (line or chunk, in order) whose text holds every label of the probe
  also holds the value;
- bind: in that unit, one line holds the row labels and then a `column label: value`
  segment whose label holds every column label in order, i.e. the value is read in place.

A row label is the first column's text under its section labels; where that names several
rows, the texts of the next columns left of the value join it (`North` + `Widgets`).

ICDAR-2013 marks no header rows: its tables get the header `infer_header_rows` finds on the
ground truth, given to the oracle as a `table column header` object, as a model would emit it.
Probes whose labels still match more than one row of their table are ambiguous, left out.
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worker.core.chunks import approx_tokens, chunk_table
from worker.core.headers import BodyRow, body_rows, clean, column_paths, infer_header_rows, label_text, slot_cells
from worker.core.reconstruct import reconstruct
from worker.core.serialise import serialisations
from worker.core.types import Cell, TableGrid
from worker.evaluation.dataset import GtTable, load_tables
from worker.evaluation.noise import add_noise, get_level, make_rng
from worker.evaluation.oracle import oracle_from_cells
from worker.evaluation.oracle_eval import table_key

_TAG = re.compile(r"</?[a-zA-Z][^>]*>")


def norm(text: str) -> str:
    """Text as compared: inline markup dropped, whitespace collapsed."""
    return clean(_TAG.sub("", text))


@dataclass(frozen=True, slots=True)
class Probe:
    """One question: the value of a body cell, asked by its row and column labels."""

    table: str
    row: int
    col: int
    value: str
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    stub_labels: tuple[str, ...] = ()  # further first-columns' texts that tell the row apart

    @property
    def labels(self) -> tuple[str, ...]:
        return self.row_labels + self.stub_labels + self.col_labels


def gt_grid(table: GtTable, header_rows: int) -> TableGrid:
    cells = [Cell(c.row, c.col, c.rowspan, c.colspan, norm(c.text), c.bbox, c.row < header_rows) for c in table.cells]
    return TableGrid(table.n_rows, table.n_cols, cells, header_rows=header_rows)


def gt_header_rows(table: GtTable) -> int:
    """The ground truth's own header rows, else those `infer_header_rows` finds on its grid."""
    return table.header_rows or infer_header_rows(gt_grid(table, 0))


def make_probes(table: GtTable, header_rows: int, skipped: Counter[str]) -> list[Probe]:
    """Probes for every labelled, unambiguous non-empty body cell outside the first column."""
    grid = gt_grid(table, header_rows)
    slots = slot_cells(grid)
    paths = column_paths(grid, header_rows)
    rows = {r.row: r for r in body_rows(grid, header_rows)}
    data = [r for r in rows.values() if r.kind == "data"]
    out = []
    for cell in grid.cells:
        r, c = cell.row, cell.col
        if r < header_rows or c == 0 or not cell.text or rows[r].kind != "data":
            continue
        if slots[r][0] is cell:
            continue
        row = rows[r]
        col_labels: list[str] = []
        for k in range(c, c + cell.colspan):
            col_labels += [p for p in paths[k] if p not in col_labels]
        stub = _stub_labels(row, data, c)
        if not row.cells[0]:
            skipped["no row label"] += 1
        elif not col_labels:
            skipped["no column label"] += 1
        elif stub is None:
            skipped["ambiguous row label"] += 1
        else:
            out.append(
                Probe(
                    table_key(table),
                    r,
                    c,
                    cell.text,
                    tuple([*row.group, label_text(row.cells[0])]),
                    tuple(col_labels),
                    stub,
                )
            )
    return out


def _stub_labels(row: BodyRow, data: list[BodyRow], col: int) -> tuple[str, ...] | None:
    """The texts of the columns after the first, left of `col`, needed to tell this row from
    every other one with the same row label (`North` + `Widgets`); None when they do not."""
    extra: list[str] = []
    key = (tuple(row.group), row.cells[0])
    same = [r for r in data if r is not row and (tuple(r.group), r.cells[0]) == key]
    for k in range(1, col):
        if not same:
            break
        text = row.cells[k]
        if text and row.starts[k] and text not in extra:  # a label spanning columns is said once
            extra.append(text)
            same = [r for r in same if r.cells[k] == text]
    return None if same else tuple(extra)


def _at(text: str, label: str, pos: int = 0) -> int:
    """Where `label` occurs in `text` from `pos` as whole words (`UK` is not in `PBUK`), else -1."""
    m = re.compile(r"(?<!\w)" + re.escape(label) + r"(?!\w)").search(text, pos)
    return m.start() if m else -1


def _in_order(text: str, parts: Sequence[str]) -> bool:
    pos = 0
    for p in parts:
        i = _at(text, p, pos)
        if i < 0:
            return False
        pos = i + len(p)
    return True


def binds(line: str, probe: Probe) -> bool:
    """The line reads `row labels ...; ... column labels ...: value` with segment boundaries:
    the row labels in its first segment (the row head), the column labels in order in the
    label of the segment holding the value."""
    needle = ": " + norm(probe.value)
    head = line.split("; ", 1)[0]
    if not _in_order(head, probe.row_labels):
        return False
    after_head = len(head)
    start = 0
    while (i := line.find(needle, start)) >= 0:
        start = i + 1
        end = i + len(needle)
        if end != len(line) and not line.startswith("; ", end):
            continue
        seg = line.rfind("; ", 0, i)
        if (
            seg >= 0
            and _in_order(line[seg + 2 : i], probe.col_labels)
            and _in_order(line[after_head:seg], probe.stub_labels)
        ):
            return True
    return False


def _exact(line: str, probe: Probe) -> bool:
    """The row head ends in the row label and each stub label is a whole segment's value."""
    if not re.search(r"(?:^|: | / )" + re.escape(probe.row_labels[-1]) + "$", line.split("; ", 1)[0]):
        return False
    return all(re.search(r"(?:^|: |; )" + re.escape(t) + "(?:;|$)", line) for t in probe.stub_labels)


def check(units: list[str], probe: Probe) -> tuple[bool, bool]:
    """(find, bind) of one probe over units in order (row lines, or chunk texts).

    The line found is, among the units holding every column label, the first line whose row
    head holds every row label, preferring a head whose last element is the row label (as
    `Q4 2009` should not find `Q1 2009 - Q4 2009`); find: that line holds the value; bind: it
    binds it (`binds`).
    """
    hits: list[str] = []
    for unit in units:
        if not all(_at(norm(unit), c) >= 0 for c in probe.col_labels):
            continue
        rows = unit.split("\n\n", 1)[-1]  # a chunk's description (its header) holds no row
        hits += [
            line
            for line in (norm(x) for x in rows.split("\n"))
            if _in_order(line.split("; ", 1)[0], probe.row_labels) and _in_order(line, probe.stub_labels)
        ]
    if not hits:
        return False, False
    line = next((h for h in hits if _exact(h, probe)), hits[0])
    found = _at(line, norm(probe.value)) >= 0
    return found, found and binds(line, probe)


def evaluate_table(table: GtTable, level: str, seed: int, max_tokens: int, skipped: Counter[str]) -> dict[str, Any]:
    """Probes of one table at one noise level, measured on its row lines and on its chunks."""
    header_rows = gt_header_rows(table)
    probes = make_probes(table, header_rows, skipped)
    oracle = oracle_from_cells(table.cells, table.n_rows, table.n_cols, table.image_size, header_rows=header_rows)
    lv = get_level(level)
    objects = add_noise(oracle.objects, lv, make_rng(seed, table_key(table), lv))
    grid = reconstruct(objects, oracle.words, image_size=oracle.image_size)
    ser = serialisations(grid, table_id=table.table_id)
    chunks = chunk_table(grid, ser, max_tokens, approx_tokens, table_id=table.table_id)
    lines = ser["row_lines"]
    texts = [c["text"] for c in chunks]
    results = [(p, check(lines, p), check(texts, p)) for p in probes]
    return {
        "source": table.source,
        "id": table.table_id,
        "level": lv.name,
        "header_rows": header_rows,
        "probes": len(probes),
        "chunks": len(chunks),
        "rows_find": sum(r[1][0] for r in results),
        "rows_bind": sum(r[1][1] for r in results),
        "chunks_find": sum(r[2][0] for r in results),
        "chunks_bind": sum(r[2][1] for r in results),
        "failures": [
            {
                "row": p.row,
                "col": p.col,
                "value": p.value,
                "labels": list(p.labels),
                "rows": list(rr),
                "chunks": list(cr),
            }
            for p, rr, cr in results
            if not (rr[1] and cr[1])
        ][:5],
    }


def run_probes_eval(
    data_dir: Path,
    levels: Sequence[str],
    seed: int = 0,
    max_tokens: int = 256,
    limit: int | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Probe every usable table of `data_dir` at each noise level; summary rates and per-table rows."""
    from tqdm import tqdm

    started = time.perf_counter()
    names = [get_level(lv).name for lv in levels]
    tables, skipped_tables = load_tables(Path(data_dir), limit=limit)
    rows: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    with tqdm(
        total=len(tables) * len(names), file=sys.stderr, disable=not progress, desc="probes", unit="table"
    ) as bar:
        for table in tables:
            for i, level in enumerate(names):
                counter: Counter[str] = Counter()
                try:
                    rows.append(evaluate_table(table, level, seed, max_tokens, counter))
                except Exception as exc:  # a crash is counted (its probes fail), the run goes on
                    n = len(make_probes(table, gt_header_rows(table), Counter()))
                    rows.append(
                        {
                            "source": table.source,
                            "id": table.table_id,
                            "level": level,
                            "probes": n,
                            "chunks": 0,
                            "rows_find": 0,
                            "rows_bind": 0,
                            "chunks_find": 0,
                            "chunks_bind": 0,
                            "error": f"{type(exc).__name__}: {exc}",
                            "failures": [],
                        }
                    )
                if i == 0:
                    skipped.update(counter)
                bar.update(1)
    return {
        "data_dir": str(data_dir),
        "seed": seed,
        "max_tokens": max_tokens,
        "levels": names,
        "n_tables": len(tables),
        "skipped_tables": skipped_tables,
        "skipped_probes": dict(skipped),
        "tables_without_header": sum(1 for r in rows if r["level"] == names[0] and not r.get("header_rows")),
        "summary": {lv: _summary([r for r in rows if r["level"] == lv]) for lv in names},
        "tables": rows,
        "seconds": round(time.perf_counter() - started, 2),
    }


def _rates(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = sum(r["probes"] for r in rows)
    out: dict[str, Any] = {
        "tables": len(rows),
        "probes": n,
        "chunks": sum(r["chunks"] for r in rows),
        "errors": sum(1 for r in rows if "error" in r),
    }
    for key in ("rows_find", "rows_bind", "chunks_find", "chunks_bind"):
        out[key] = round(sum(r[key] for r in rows) / n, 4) if n else None
    return out


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    sources = sorted({r["source"] for r in rows})
    return {**_rates(rows), "by_source": {s: _rates([r for r in rows if r["source"] == s]) for s in sources}}


def format_table(results: dict[str, Any]) -> str:
    """The summary as a fixed-width text table."""
    head = (
        f"{'level / source':<20} {'tables':>6} {'probes':>6} {'chunks':>6}   "
        f"{'rows find':>9} {'rows bind':>9} {'chunk find':>10} {'chunk bind':>10}"
    )
    lines = [head, "-" * len(head)]

    def line(name: str, s: dict[str, Any]) -> str:
        def pct(v: float | None) -> str:
            return f"{v:.2%}" if v is not None else "-"

        return (
            f"{name:<20} {s['tables']:>6} {s['probes']:>6} {s['chunks']:>6}   {pct(s['rows_find']):>9} "
            f"{pct(s['rows_bind']):>9} {pct(s['chunks_find']):>10} {pct(s['chunks_bind']):>10}"
        )

    for level, s in results["summary"].items():
        lines.append(line(level, s) + (f"   {s['errors']} error(s)" if s["errors"] else ""))
        for source, b in s["by_source"].items():
            lines.append(line(f"  {source}", b))
    sk = results.get("skipped_probes") or {}
    if sk:
        lines.append("probes left out: " + ", ".join(f"{n} {why}" for why, n in sorted(sk.items())))
    st = results.get("skipped_tables") or {}
    if st:
        lines.append(
            "tables skipped: "
            + "; ".join(f"{src}: " + ", ".join(f"{n} {why}" for why, n in r.items()) for src, r in st.items())
        )
    lines.append(
        f"tables without a header (no column labels): {results.get('tables_without_header', 0)}; "
        f"chunk budget {results['max_tokens']} tokens (approx), seed {results['seed']}, "
        f"{results['seconds']} s"
    )
    return "\n".join(lines)
