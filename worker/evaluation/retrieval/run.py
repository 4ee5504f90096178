"""`tablesight eval retrieval`: find x read over whole documents, per source, representation,
retriever and question kind.

For each structure source (`oracle`: the ground truth through our serialisers; `text`, `scan`:
our own extraction, `extraction.py`) and each representation (`corpus.py`), the corpus is every
document's table units plus its prose; every question (`questions.py`) is searched over all of
it. Per question, with the top `K` units:
- find@1 / find@5: a unit among the top 1 / 5 is on the question's page and states the value
  beside the row label;
- the reader (`reader.py`) goes down the top 5 in rank order and stops at the first unit it
  can read the question's labels from: `answer` when that unit is on the question's page and
  the value read is the cell's, `wrong` when it is on that page but the value differs,
  `other` when the unit is from another page or document (read from another table), and
  `none` when no unit of the top 5 reads at all. A unit is of the question's table when it
  is on the question's page and, if it comes from a table, that table's page box overlaps
  the GT table's (`corpus.same_table`); so two tables on one page with the same labels
  (eu-004, eu-018) give `other`, not `wrong`, for every source alike. A value read with the doubt mark
  (`worker.core.doubt`) on the question's page is `unsure`: stated as doubtful, so neither
  a confident answer nor a confident wrong one.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worker.core.chunks import approx_tokens
from worker.core.doubt import UNSURE_MARK
from worker.core.types import BBox
from worker.evaluation.dataset import GtTable, load_tables
from worker.evaluation.pages_eval import GtPageTable, load_page_tables
from worker.evaluation.probes import gt_grid, gt_header_rows
from worker.evaluation.retrieval.corpus import (
    PageText,
    SourceTable,
    Unit,
    chunk_units,
    gt_context,
    markdown_units,
    naive_windows,
    oracle_table,
    page_texts,
    prose_units,
    row_units,
    same_table,
    stored_tables,
    table_units,
)
from worker.evaluation.retrieval.questions import KINDS, PHRASINGS, Question, questions_for
from worker.evaluation.retrieval.reader import READERS, holds, read, same_value
from worker.evaluation.retrieval.retrievers import make_retriever
from worker.retrieval.chunks import LAYOUT, PREAMBLE

K = 5
SOURCES = ("oracle", "text", "scan")
REPRESENTATIONS = ("naive", "markdown", "rows", "chunks")
RETRIEVERS = ("bm25", "hashing")
OUTCOMES = ("answer", "wrong", "unsure", "other", "none")
DOCUMENTS_VERSION = 2  # bump when questions or the corpus change: the cached documents are rebuilt


@dataclass(slots=True)
class Documents:
    """The evaluation documents: pages with words, GT tables and the questions about them."""

    pages: dict[str, list[PageText]] = field(default_factory=dict)
    gt: dict[str, list[SourceTable]] = field(default_factory=dict)
    questions: list[Question] = field(default_factory=list)
    pdfs: dict[str, Path] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    boxes: dict[str, tuple[int, BBox]] = field(default_factory=dict)  # GT table key -> (page, box)
    dpi: dict[str, int] = field(default_factory=dict)  # document -> the pixels of its boxes


def _gt_box(t: GtPageTable, height: float) -> tuple[float, float, float, float]:
    return t.page_boxes(height)[-1]  # the cells' union when known, else the crop box


def load_documents(data_dir: Path, docs: int | None = None) -> Documents:
    """The documents of `data_dir` that hold GT tables with a page (ICDAR), the first `docs`."""
    tables, _ = load_tables(data_dir)
    by_id: dict[str, GtTable] = {t.table_id: t for t in tables}
    placed = [t for t in load_page_tables(data_dir) if t.table_id in by_id]
    by_pdf: dict[Path, list[GtPageTable]] = defaultdict(list)
    for t in placed:
        by_pdf[t.pdf].append(t)
    out = Documents()
    for pdf in sorted(by_pdf)[:docs]:
        gts = by_pdf[pdf]
        dpi = gts[0].dpi
        heights: dict[int, float] = {}
        pages_probe = page_texts(pdf, {}, dpi)
        for p in pages_probe:
            heights[p.page] = float(p.size[1])
        boxes: dict[int, list[tuple[float, float, float, float]]] = defaultdict(list)
        for t in gts:
            boxes[t.page].append(_gt_box(t, heights[t.page]))
        for p in pages_probe:
            p.tables = boxes.get(p.page, [])
        doc = pdf.stem
        out.pdfs[doc] = pdf
        out.dpi[doc] = dpi
        out.pages[doc] = pages_probe
        out.gt[doc] = []
        for t in gts:
            table = by_id[t.table_id]
            page = pages_probe[t.page - 1]
            grid = gt_grid(table, gt_header_rows(table))
            box = _gt_box(t, heights[t.page])
            src = oracle_table(doc, t.table_id, grid, gt_context(page, box), (t.page, box))
            out.gt[doc].append(src)
            out.boxes[f"{table.source}/{table.table_id}"] = (t.page, box)
            out.questions += questions_for(
                table, doc, t.page, str(src.ser.get("caption") or ""), src.ser["units"], out.skipped
            )
    return out


# --- chunkers ---------------------------------------------------------------------------


def shipped_chunker(
    max_tokens: int, max_rows: int, layout: str = "labelled", preamble: str = "full"
) -> Callable[[SourceTable], list[dict[str, Any]]]:
    """The chunks `tablesight chunks` gives (`worker.retrieval.chunks.document_chunks`)."""
    from worker.retrieval.chunks import table_chunks
    from worker.retrieval.descriptions import describe
    from worker.retrieval.logical_tables import LogicalTable

    def chunk(t: SourceTable) -> list[dict[str, Any]]:
        lt = LogicalTable(t.table_id, [t.table_id], t.pages, t.grid, t.ser, t.row_pages)
        return table_chunks(lt, max_tokens, approx_tokens, max_rows, describe, layout=layout, preamble=preamble)

    return chunk


def variant_chunker(spec: str, max_rows: int) -> Callable[[SourceTable], list[dict[str, Any]]]:
    """A chunk layout to compare, `LAYOUT/PREAMBLE/BUDGET` (e.g. `table/lean/512`)."""
    try:
        layout, preamble, budget = spec.split("/")
        return shipped_chunker(int(budget), max_rows, layout, preamble)
    except ValueError:
        raise ValueError(f"chunk variant {spec!r}: want LAYOUT/PREAMBLE/BUDGET, e.g. table/lean/512") from None


def representation_units(rep: str, tables: list[SourceTable], chunker: Callable[..., Any]) -> list[Unit]:
    out: list[Unit] = []
    for t in tables:
        if rep == "markdown":
            out += table_units(t, markdown_units)
        elif rep == "rows":
            out += table_units(t, row_units)
        else:
            out += chunk_units(t, chunker)
    return out


# --- scoring ----------------------------------------------------------------------------


def score_question(
    q: Question, units: list[Unit], ranked: list[int], fold: bool = True, box: BBox | None = None
) -> dict[str, Any]:
    def on_page(u: Unit) -> bool:
        if u.doc != q.doc or q.page not in u.pages:
            return False
        boxes = [b for p, b in u.boxes if p == q.page]
        return box is None or not boxes or any(same_table(b, box) for b in boxes)

    top = [units[i] for i in ranked[:K]]
    found = [on_page(u) and holds(u.text, q.probe, fold) for u in top]
    outcome, value, where = "none", None, None
    for u in top:
        value = read(u.text, q.probe, fold)
        if value is None:
            continue
        if not on_page(u):
            outcome = "other"
        elif value.endswith(UNSURE_MARK.strip()):
            outcome = "unsure"  # stated as doubtful (`worker.core.doubt`): not a confident answer
        else:
            outcome = "answer" if same_value(value, q.probe.value, fold) else "wrong"
        where = f"{u.doc} p{','.join(map(str, u.pages))}"
        break
    return {
        "find1": bool(found[:1] and found[0]),
        "find5": any(found),
        "outcome": outcome,
        "read": value,
        "from": where,
    }


EXAMPLES = 8


def examples(rows: list[tuple[Question, dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """A few questions per failing outcome (labels phrasing), to read what went wrong."""
    out: dict[str, list[dict[str, Any]]] = {"wrong": [], "unsure": [], "other": [], "none": []}
    for q, r in rows:
        if q.kind == "labels" and r["outcome"] in out and len(out[r["outcome"]]) < EXAMPLES:
            out[r["outcome"]].append(
                {
                    "doc": q.doc,
                    "page": q.page,
                    "question": q.text,
                    "value": q.probe.value,
                    "read": r["read"],
                    "from": r["from"],
                }
            )
    return out


def summarise(rows: list[tuple[Question, dict[str, Any]]]) -> dict[str, dict[str, float | int]]:
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q, r in rows:
        by_kind[q.kind].append(r)
    out: dict[str, dict[str, float | int]] = {}
    for kind in (*KINDS, "all"):
        rs = [r for q, r in rows if q.kind in PHRASINGS] if kind == "all" else by_kind[kind]
        if not rs:
            continue
        n = len(rs)
        block: dict[str, float | int] = {
            "n": n,
            "find@1": round(sum(r["find1"] for r in rs) / n, 3),
            "find@5": round(sum(r["find5"] for r in rs) / n, 3),
        }
        counts = Counter(r["outcome"] for r in rs)
        block |= {o: round(counts[o] / n, 3) for o in OUTCOMES}
        out[kind] = block
    return out


def record(q: Question, r: dict[str, Any], **where: str) -> dict[str, Any]:
    """One question's outcome as a flat JSON record (`--records`), to break misses down by cause."""
    p = q.probe
    return {
        **where,
        "kind": q.kind,
        "doc": q.doc,
        "page": q.page,
        "table": q.table,
        "row": p.row,
        "col": p.col,
        "question": q.text,
        "value": p.value,
        "row_labels": list(p.row_labels),
        "stub_labels": list(p.stub_labels),
        "col_labels": list(p.col_labels),
        **r,
    }


def evaluate(
    units: list[Unit],
    questions: list[Question],
    retriever: str,
    embedder: Path | None = None,
    fold: bool = True,
    boxes: dict[str, tuple[int, BBox]] | None = None,
) -> tuple[dict[str, dict[str, float | int]], dict[str, list[dict[str, Any]]], list[tuple[Question, dict[str, Any]]]]:
    """Per-kind rates of one retriever over one corpus, a few failures to read, and every
    question's outcome."""
    boxes = boxes or {}
    r = make_retriever(retriever, [u.text for u in units], embedder)
    ranked = r.search([q.text for q in questions], K)
    rows = [
        (q, score_question(q, units, rk, fold, boxes[q.table][1] if q.table in boxes else None))
        for q, rk in zip(questions, ranked)
    ]
    return summarise(rows), examples(rows), rows


@dataclass
class Options:
    data: Path
    work: Path
    sources: Sequence[str] = SOURCES
    representations: Sequence[str] = REPRESENTATIONS
    retrievers: Sequence[str] = RETRIEVERS
    docs: int | None = None
    embedder: Path | None = None
    max_tokens: int | None = None
    max_rows: int | None = None
    engine: str = "embedded"
    variants: Sequence[str] = ()  # further chunk layouts, LAYOUT/PREAMBLE/BUDGET
    records: Path | None = None  # every question's outcome, one JSON line each
    reader: str = "folded"  # `reader.READERS`: case and whitespace aside, or the exact characters


def source_tables(opts: Options, docs: Documents, source: str) -> dict[str, list[SourceTable]]:
    """Every document's tables from one source (extraction runs once into the work folder)."""
    if source == "oracle":
        return docs.gt
    from worker.evaluation.retrieval.extraction import DPI as EXTRACT_DPI
    from worker.evaluation.retrieval.extraction import extract_all
    from worker.storage import LocalStorage

    index = extract_all(list(docs.pdfs.values()), opts.work, source, engine=opts.engine)
    store = LocalStorage(opts.work / source)
    return {
        doc: stored_tables(store, index[pdf.name], doc, docs.dpi.get(doc, EXTRACT_DPI) / EXTRACT_DPI)
        for doc, pdf in docs.pdfs.items()
    }


def cached_documents(data: Path, work: Path, docs: int | None) -> Documents:
    """`load_documents`, kept in `<work>/documents-<n>.pickle` (reading every page's words and
    finding the captions is the slow part after extraction); rebuilt when gt.jsonl is newer."""
    import pickle

    path = work / f"documents-v{DOCUMENTS_VERSION}-{docs or 'all'}.pickle"
    newest = max((p.stat().st_mtime for p in Path(data).glob("*/gt.jsonl")), default=0.0)
    if path.exists() and path.stat().st_mtime > newest:
        with path.open("rb") as fh:
            loaded = pickle.load(fh)
        if isinstance(loaded, Documents):
            return loaded
    out = load_documents(data, docs)
    work.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        pickle.dump(out, fh)
    return out


def run_retrieval_eval(opts: Options) -> dict[str, Any]:
    from worker.settings import get_settings

    if opts.reader not in READERS:
        raise ValueError(f"reader must be one of {READERS}, not {opts.reader!r}")

    settings = get_settings()
    started = time.perf_counter()
    docs = cached_documents(opts.data, opts.work, opts.docs)
    prose = [u for pages in docs.pages.values() for p in pages for u in prose_units(p)]
    naive = [u for pages in docs.pages.values() for p in pages for u in naive_windows(p)]
    max_tokens = opts.max_tokens or settings.chunks.max_tokens
    max_rows = settings.chunks.table_max_rows if opts.max_rows is None else opts.max_rows
    chunkers = {
        "chunks": shipped_chunker(max_tokens, max_rows, LAYOUT, PREAMBLE),
        **{f"chunks {v}": variant_chunker(v, max_rows) for v in opts.variants},
    }
    reps = [*opts.representations, *(f"chunks {v}" for v in opts.variants)]
    results: list[dict[str, Any]] = []
    records = opts.records.open("w", encoding="utf-8") if opts.records else None
    for source in opts.sources:
        tables = source_tables(opts, docs, source)
        all_tables = [t for ts in tables.values() for t in ts]
        for rep in reps:
            if rep == "naive" and source != opts.sources[0]:
                continue  # the naive windows ignore structure: one run says it all
            if rep == "naive":
                units = naive
            else:
                units = prose + representation_units(rep, all_tables, chunkers.get(rep, chunkers["chunks"]))
            for retriever in opts.retrievers:
                print(f"{source} {rep} {retriever}: {len(units)} units", file=sys.stderr)
                by_kind, failed, rows = evaluate(
                    units, docs.questions, retriever, opts.embedder, opts.reader == "folded", docs.boxes
                )
                if records is not None:
                    where = {"source": source, "representation": rep, "retriever": retriever}
                    for q, r in rows:
                        records.write(json.dumps(record(q, r, **where), ensure_ascii=False) + "\n")
                results.append(
                    {
                        "source": "pdf text" if rep == "naive" else source,
                        "representation": rep,
                        "retriever": retriever,
                        "units": len(units),
                        "kinds": by_kind,
                        "examples": failed,
                    }
                )
    if records is not None:
        records.close()
    cells = len({(q.table, q.probe.row, q.probe.col) for q in docs.questions})
    return {
        "documents": len(docs.pdfs),
        "tables": sum(len(v) for v in docs.gt.values()),
        "cells": cells,
        "questions": Counter(q.kind for q in docs.questions),
        "skipped_cells": dict(docs.skipped),
        "max_tokens": max_tokens,
        "max_rows": max_rows,
        "chunk_layout": LAYOUT,
        "chunk_preamble": PREAMBLE,
        "reader": opts.reader,
        "seconds": round(time.perf_counter() - started, 1),
        "results": results,
    }


def format_results(res: dict[str, Any], kinds: Sequence[str] = ("all",)) -> str:
    """Markdown tables: one row per (source, representation, retriever), one table per kind."""
    lines = [
        f"{res['documents']} documents, {res['tables']} GT tables, {res['cells']} cells asked, "
        f"questions by kind: {json.dumps(dict(res['questions']))}; chunks: budget {res['max_tokens']}, "
        f"layout {res['chunk_layout']}, preamble {res['chunk_preamble']}, description chunk above "
        f"{res['max_rows']} rows; reader {res.get('reader', 'exact')}",
    ]
    for kind in kinds:
        lines += [
            "",
            f"kind: {kind}",
            "",
            "| source | representation | retriever | units | n | find@1 | find@5 | answer | wrong (right page) "
            "| unsure | other table | none |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in res["results"]:
            b = r["kinds"].get(kind)
            if not b:
                continue
            lines.append(
                f"| {r['source']} | {r['representation']} | {r['retriever']} | {r['units']} | {b['n']} "
                f"| {b['find@1']:.3f} | {b['find@5']:.3f} | {b['answer']:.3f} | {b['wrong']:.3f} "
                f"| {b.get('unsure', 0.0):.3f} | {b['other']:.3f} | {b['none']:.3f} |"
            )
    return "\n".join(lines)
