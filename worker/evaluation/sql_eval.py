"""SQL lookups and aggregates on the store: can a query built from labels give back the value?

Each ground-truth table is rebuilt from oracle structure objects (optionally with model-like
noise, as `eval oracle` and `eval probes` do), exported to Parquet exactly as extraction
exports it (`worker.retrieval.exports`) into a scratch store, and opened with the same read-only
DuckDB catalog as `tablesight sql`. Then:

- lookup: for every labelled, unambiguous body cell (the cells `eval probes` asks about),
  a query built only from labels (the column whose header path is the cell's column path,
  rows where the row-label column equals the cell's row label, within its row group, and
  the first columns' texts where they are needed to tell rows apart) must return exactly one
  row whose typed value equals the ground truth parsed (`worker.core.numbers`) and whose text
  equals the ground truth's text;
- aggregates: for every numeric column of the ground truth (typed the same way), `count`
  and `sum` over the column found by its header path must equal those computed from the
  ground truth's parsed values.
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from worker.contract.manifest import PageRecord
from worker.core.columns import ROW_GROUP, TEXT_SUFFIX, TypedTable, typed_table
from worker.core.headers import PATH_SEP, BodyRow, body_rows, column_paths
from worker.core.numbers import parse_number
from worker.core.reconstruct import reconstruct
from worker.core.types import TableGrid
from worker.evaluation.dataset import GtTable, load_tables
from worker.evaluation.noise import add_noise, get_level, make_rng
from worker.evaluation.oracle import oracle_from_cells
from worker.evaluation.oracle_eval import table_key
from worker.evaluation.probes import gt_grid, gt_header_rows, make_probes
from worker.outputs import build_manifest, manifest_key, store_grid, table_id
from worker.sqlstore.catalog import StoreError, open_sql_store, quote_ident
from worker.storage import LocalStorage


def _label(path: Sequence[str]) -> str:
    return PATH_SEP.join(path)


def _stub_columns(row: BodyRow, data: list[BodyRow], col: int) -> list[int] | None:
    """Columns after the first, left of `col`, whose texts tell this row from the others with
    the same row label and group (as `probes._stub_labels` picks them); None when they cannot."""
    extra: list[int] = []
    key = (tuple(row.group), row.cells[0])
    same = [r for r in data if r is not row and (tuple(r.group), r.cells[0]) == key]
    for k in range(1, col):
        if not same:
            break
        text = row.cells[k]
        if text and text not in [row.cells[j] for j in extra]:
            extra.append(k)
            same = [r for r in same if r.cells[k] == text]
    return None if same else extra


def lookups(table: GtTable, header_rows: int, skipped: Counter[str]) -> list[dict[str, Any]]:
    """The lookup questions of one ground-truth table, in labels only."""
    grid = gt_grid(table, header_rows)
    paths = column_paths(grid, header_rows)
    labels = [_label(p) for p in paths]
    rows = {r.row: r for r in body_rows(grid, header_rows)}
    data = [r for r in rows.values() if r.kind == "data"]
    out = []
    for probe in make_probes(table, header_rows, skipped):
        row = rows[probe.row]
        if labels.count(labels[probe.col]) > 1:
            skipped["ambiguous column path"] += 1
            continue
        stubs = _stub_columns(row, data, probe.col)
        if stubs is None or any(labels.count(labels[k]) > 1 or not labels[k] for k in stubs):
            skipped["ambiguous row label"] += 1
            continue
        out.append(
            {
                "row": probe.row,
                "col": probe.col,
                "value": probe.value,
                "column": labels[probe.col],
                "row_label": row.cells[0],
                "group": _label(row.group) or None,
                "stubs": [(labels[k], row.cells[k]) for k in stubs],
            }
        )
    return out


def aggregates(gt_typed: TypedTable) -> list[dict[str, Any]]:
    """count and sum of every numeric ground-truth column with a unique header path."""
    labels = [c.to_dict().get("label") for c in gt_typed.columns if c.role in ("value", "label")]
    out = []
    for c in gt_typed.columns:
        if c.role != "value" or c.kind == "text":
            continue
        label = _label(c.path)
        if not label or labels.count(label) > 1:
            continue
        values = [v for v in gt_typed.values(c.name) if v is not None]
        out.append({"column": label, "count": len(values), "sum": sum(values)})
    return out


def _find(columns: list[dict[str, Any]], label: str) -> dict[str, Any] | None:
    hits = [c for c in columns if c.get("role") in ("value", "label") and c.get("label") == label]
    return hits[0] if len(hits) == 1 else None


def _same_value(got: Any, text: str) -> bool:
    p = parse_number(text)
    if p.kind == "number":
        return isinstance(got, (int, float)) and not isinstance(got, bool) and float(got) == float(p.value or 0)
    return got is None or got == text


def ask_lookup(store: Any, view: str, columns: list[dict[str, Any]], q: dict[str, Any]) -> tuple[bool, bool, str]:
    """(answered: exactly one row, exact: its value and text are the ground truth's, why not)."""
    col = _find(columns, q["column"])
    label = next((c for c in columns if c.get("role") == "label"), None)
    if col is None or label is None:
        return False, False, "no column with that header path" if col is None else "no row-label column"
    where = [f"{quote_ident(label['name'])} = ?"]
    params: list[Any] = [q["row_label"]]
    names = {c["name"] for c in columns}
    if ROW_GROUP in names:
        where.append(f"{quote_ident(ROW_GROUP)} IS NOT DISTINCT FROM ?")
        params.append(q["group"])
    for path, text in q["stubs"]:
        stub = _find(columns, path)
        if stub is None:
            return False, False, "no column for a row-label part"
        name = stub["name"] + TEXT_SUFFIX if stub["type"] != "text" else stub["name"]
        where.append(f"{quote_ident(name)} = ?")
        params.append(text)
    numeric = col["type"] != "text"
    select = quote_ident(col["name"]) + (f", {quote_ident(col['name'] + TEXT_SUFFIX)}" if numeric else "")
    sql = f"SELECT {select} FROM {view} WHERE {' AND '.join(where)}"
    try:
        rows = store.query(sql, params).rows
    except StoreError as exc:
        return False, False, f"query failed: {exc}"
    if len(rows) != 1:
        return False, False, f"{len(rows)} rows"
    got = rows[0]
    text = got[1] if numeric else got[0]
    exact = text == q["value"] and (_same_value(got[0], q["value"]) if numeric else True)
    return True, exact, "" if exact else f"got {got!r}"


def ask_aggregate(store: Any, view: str, columns: list[dict[str, Any]], a: dict[str, Any]) -> bool:
    col = _find(columns, a["column"])
    if col is None or col["type"] == "text":
        return False
    name = quote_ident(col["name"])
    try:
        count, total = store.query(f"SELECT count({name}), sum({name}) FROM {view}").rows[0]
    except StoreError:
        return False
    if count != a["count"]:
        return False
    return math.isclose(float(total or 0), float(a["sum"]), rel_tol=1e-9, abs_tol=1e-9)


def _rebuild(table: GtTable, level: str, seed: int, header_rows: int) -> TableGrid:
    oracle = oracle_from_cells(table.cells, table.n_rows, table.n_cols, table.image_size, header_rows=header_rows)
    lv = get_level(level)
    objects = add_noise(oracle.objects, lv, make_rng(seed, table_key(table), lv))
    return reconstruct(objects, oracle.words, image_size=oracle.image_size)


def evaluate_level(tables: list[GtTable], level: str, seed: int, bar: Any = None) -> tuple[list[dict[str, Any]], dict]:
    """Every table at one noise level, exported and queried in one scratch store."""
    skipped: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="tablesight-sql-eval-") as tmp:
        storage = LocalStorage(tmp)
        doc = "eval-" + level.replace(":", "-")  # a store key: no colons
        entries = []
        prepared = []
        for i, table in enumerate(tables):
            tid = table_id(1, i + 1)
            header_rows = gt_header_rows(table)
            questions = lookups(table, header_rows, skipped)
            gt_typed = typed_table(gt_grid(table, header_rows), header_rows=header_rows)
            sums = aggregates(gt_typed)
            error = None
            try:
                grid = _rebuild(table, level, seed, header_rows)
                entries.append(store_grid(storage, doc, grid, index=i + 1))
            except Exception as exc:  # a crash is counted (its questions fail), the run goes on
                error = f"{type(exc).__name__}: {exc}"
            prepared.append((table, tid, questions, sums, error))
        manifest = build_manifest(
            doc_id=doc,
            source=f"sql-eval:{level}",
            sha256=None,
            kind="eval",
            page_count=1,
            pages=[1],
            page_records=[PageRecord(page=1, tables=entries)],
            errors=[],
            models={},
            options={},
            started=time.time(),
        )
        storage.put_json(manifest_key(doc), manifest.dump())
        rows = []
        with open_sql_store(storage, [doc]) as store:
            schemas = {v.table_id: v.columns for v in store.views}
            for table, tid, questions, sums, error in prepared:
                row: dict[str, Any] = {
                    "source": table.source,
                    "id": table.table_id,
                    "level": level,
                    "lookups": len(questions),
                    "answered": 0,
                    "exact": 0,
                    "aggregates": len(sums),
                    "aggregates_exact": 0,
                    "failures": [],
                }
                if error or tid not in schemas:
                    row["error"] = error or "not exported"
                else:
                    view = quote_ident(tid)
                    for q in questions:
                        answered, exact, why = ask_lookup(store, view, schemas[tid], q)
                        row["answered"] += answered
                        row["exact"] += exact
                        if not exact and len(row["failures"]) < 5:
                            row["failures"].append({"row": q["row"], "col": q["col"], "value": q["value"], "why": why})
                    row["aggregates_exact"] = sum(ask_aggregate(store, view, schemas[tid], a) for a in sums)
                rows.append(row)
                if bar is not None:
                    bar.update(1)
    return rows, dict(skipped)


def run_sql_eval(
    data_dir: Path, levels: Sequence[str], seed: int = 0, limit: int | None = None, progress: bool = True
) -> dict[str, Any]:
    """Lookups and aggregates at each noise level; summary shares and per-table rows."""
    from tqdm import tqdm

    started = time.perf_counter()
    names = [get_level(lv).name for lv in levels]
    tables, skipped_tables = load_tables(Path(data_dir), limit=limit)
    rows: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    with tqdm(total=len(tables) * len(names), file=sys.stderr, disable=not progress, desc="sql", unit="table") as bar:
        for i, level in enumerate(names):
            level_rows, level_skipped = evaluate_level(tables, level, seed, bar)
            rows += level_rows
            if i == 0:
                skipped = level_skipped
    return {
        "data_dir": str(data_dir),
        "seed": seed,
        "levels": names,
        "n_tables": len(tables),
        "skipped_tables": skipped_tables,
        "skipped_lookups": skipped,
        "summary": {lv: _summary([r for r in rows if r["level"] == lv]) for lv in names},
        "tables": rows,
        "seconds": round(time.perf_counter() - started, 2),
    }


def _rates(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = sum(r["lookups"] for r in rows)
    a = sum(r["aggregates"] for r in rows)
    return {
        "tables": len(rows),
        "lookups": n,
        "answered": round(sum(r["answered"] for r in rows) / n, 4) if n else None,
        "exact": round(sum(r["exact"] for r in rows) / n, 4) if n else None,
        "aggregates": a,
        "aggregates_exact": round(sum(r["aggregates_exact"] for r in rows) / a, 4) if a else None,
        "errors": sum(1 for r in rows if "error" in r),
    }


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    sources = sorted({r["source"] for r in rows})
    return {**_rates(rows), "by_source": {s: _rates([r for r in rows if r["source"] == s]) for s in sources}}


def format_table(results: dict[str, Any]) -> str:
    """The summary as a fixed-width text table."""
    head = (
        f"{'level / source':<20} {'tables':>6} {'lookups':>7} {'answered':>9} {'exact':>8}   "
        f"{'aggregates':>10} {'agg exact':>9}"
    )
    lines = [head, "-" * len(head)]

    def pct(v: float | None) -> str:
        return f"{v:.2%}" if v is not None else "-"

    def line(name: str, s: dict[str, Any]) -> str:
        return (
            f"{name:<20} {s['tables']:>6} {s['lookups']:>7} {pct(s['answered']):>9} {pct(s['exact']):>8}   "
            f"{s['aggregates']:>10} {pct(s['aggregates_exact']):>9}"
        )

    for level, s in results["summary"].items():
        lines.append(line(level, s) + (f"   {s['errors']} error(s)" if s["errors"] else ""))
        for source, b in s["by_source"].items():
            lines.append(line(f"  {source}", b))
    sk = results.get("skipped_lookups") or {}
    if sk:
        lines.append("cells left out: " + ", ".join(f"{n} {why}" for why, n in sorted(sk.items())))
    st = results.get("skipped_tables") or {}
    if st:
        lines.append(
            "tables skipped: "
            + "; ".join(f"{src}: " + ", ".join(f"{n} {why}" for why, n in r.items()) for src, r in st.items())
        )
    lines.append(f"seed {results['seed']}, {results['seconds']} s")
    return "\n".join(lines)
