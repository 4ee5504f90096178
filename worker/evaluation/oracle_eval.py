"""Oracle evaluation: ground-truth structure (+ noise) -> reconstruct -> HTML -> TEDS.

Scores the part of the pipeline we own without model weights: at level `none`
anything below 1.0 is a reconstruction or HTML bug; the noisy levels show how gracefully the
reconstruction copes with the kinds of error a real model makes.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from worker.core.html_out import grid_to_html
from worker.core.reconstruct import reconstruct
from worker.core.refine import RefineRules
from worker.core.types import RulingLines, StructureObject, Word
from worker.evaluation.binding import bind, rates
from worker.evaluation.dataset import GtTable, load_tables
from worker.evaluation.noise import NoiseLevel, add_noise, get_level, make_rng
from worker.evaluation.oracle import oracle_for
from worker.metrics.teds import is_rectangular, normalize_html, teds_normalized

WORD_SOURCES = ("oracle", "ocr", "ocr-keep-rules")


def oracle_inputs(
    table: GtTable, level: str | NoiseLevel, seed: int
) -> tuple[list[StructureObject], list[Word], tuple[float, float]]:
    """The objects, words and image size one table is rebuilt from at one noise level.

    Shared with comparison harnesses so that every post-processing sees the same input.
    """
    oracle = oracle_for(table)
    lv = get_level(level)
    objects = add_noise(oracle.objects, lv, make_rng(seed, table_key(table), lv))
    return objects, oracle.words, oracle.image_size


def ocr_inputs(table: GtTable, keep_rules: bool = False, ocr: Any = None) -> tuple[list[Word], RulingLines]:
    """OCR mode: the words tesseract (or the engine `ocr`, a callable image -> words, see
    `ocr_reader`) reads on the table image (ruling lines erased first, as the pipeline does,
    unless `keep_rules`) and the ruling lines found on it, as `rebuild` does for a payload
    without words."""
    from PIL import Image

    from models.ocr import ocr_words
    from models.rules import find_ruling_lines, rule_length

    dpi = 144  # the evaluation images' render resolution (see the data README)
    min_len = rule_length(dpi)
    with Image.open(table.image_path) as im:
        rgb = im.convert("RGB")
    if ocr is not None:
        words = ocr(rgb)
    else:
        words = ocr_words(rgb, rule_min_px=None if keep_rules else min_len, threads=1)
    return words, find_ruling_lines(rgb, min_len)


def ocr_reader(engine: str, keep_rules: bool = False) -> Any:
    """The OCR engine `engine` set up for the evaluation images (144 dpi, one thread), or None
    for tesseract, which `ocr_inputs` calls itself."""
    if engine == "tesseract":
        return None
    if engine != "ppocr":
        raise ValueError(f"unknown OCR engine {engine!r}; known: tesseract, ppocr")
    import models.ppocr as ppocr

    return ppocr.load(threads=1, rule_min_px=None if keep_rules else max(10, 144 // 5))


def table_key(table: GtTable) -> str:
    return f"{table.source}/{table.table_id}"


def rebuild_html(
    table: GtTable,
    level: str | NoiseLevel,
    seed: int,
    ocr: tuple[list[Word], RulingLines] | None = None,
    refine: RefineRules | None = None,
) -> tuple[str, bool]:
    """Our HTML for the table at this level, and whether the grid came out valid; `ocr` gives
    OCR'd words and ruling lines in place of the oracle's words."""
    objects, words, size = oracle_inputs(table, level, seed)
    lines = None
    if ocr is not None:
        words, lines = ocr
    grid = reconstruct(objects, words, image_size=size, lines=lines, refine=refine)
    try:
        grid.owner_map()
        valid = True
    except ValueError:
        valid = False
    html = grid_to_html(grid)
    return html, valid and is_rectangular(html)


def score_html(pred_html: str, gt_norm: str) -> tuple[float, float]:
    """(TEDS, TEDS-struct) of a prediction against an already-normalised ground truth."""
    pred_norm = normalize_html(pred_html)
    return teds_normalized(pred_norm, gt_norm), teds_normalized(pred_norm, gt_norm, structure_only=True)


def run_oracle_eval(
    data_dir: Path,
    levels: Sequence[str | NoiseLevel],
    seed: int,
    limit: int | None = None,
    progress: bool = True,
    words: str = "oracle",
    refine: RefineRules | None = None,
    ocr_engine: str = "tesseract",
) -> dict[str, Any]:
    """Rebuild every usable table of `data_dir` at each noise level and score it.

    `words`: "oracle" (laid out from the ground truth), "ocr" (tesseract on the table image,
    rules erased) or "ocr-keep-rules", read by `ocr_engine` (tesseract or ppocr); `refine`: the
    word/line corrections (default all).
    Returns summary means (overall, tables with spans, per source) per level, counts of
    invalid outputs and crashes (both should be 0), the skipped tables, and per-table rows.
    """
    if words not in WORD_SOURCES:
        raise ValueError(f"unknown word source {words!r}; known: {', '.join(WORD_SOURCES)}")
    from tqdm import tqdm

    started = time.perf_counter()
    lvs = [get_level(lv) for lv in levels]
    tables, skipped = load_tables(Path(data_dir), limit=limit)
    keep = words == "ocr-keep-rules"
    reader = ocr_reader(ocr_engine, keep) if words != "oracle" else None
    rows: list[dict[str, Any]] = []
    bar = tqdm(total=len(tables) * len(lvs), file=sys.stderr, disable=not progress, desc="oracle eval", unit="table")
    for table in tables:
        gt_norm = normalize_html(table.html)
        ocr = ocr_inputs(table, keep_rules=keep, ocr=reader) if words != "oracle" else None
        for lv in lvs:
            row: dict[str, Any] = {
                "source": table.source,
                "id": table.table_id,
                "level": lv.name,
                "has_span": table.has_span,
                "n_rows": table.n_rows,
                "n_cols": table.n_cols,
            }
            try:
                html, valid = rebuild_html(table, lv, seed, ocr, refine)
                row["teds"], row["teds_struct"] = score_html(html, gt_norm)
                row["valid"] = valid
                row.update(bind(html, table.html))
            except Exception as exc:  # a crash scores 0 and is counted, the run goes on
                row.update(teds=0.0, teds_struct=0.0, valid=False, error=f"{type(exc).__name__}: {exc}")
                row.update(bind("", table.html))
            rows.append(row)
            bar.update(1)
    bar.close()
    return {
        "data_dir": str(data_dir),
        "seed": seed,
        "levels": [lv.name for lv in lvs],
        "words": words,
        "ocr_engine": ocr_engine if words != "oracle" else None,
        "refine": asdict(refine or RefineRules()),
        "noise": {lv.name: asdict(lv) for lv in lvs},
        "n_tables": len(tables),
        "skipped": skipped,
        "summary": summarise(rows, [lv.name for lv in lvs]),
        "tables": rows,
        "seconds": round(time.perf_counter() - started, 2),
    }


def summarise(rows: list[dict[str, Any]], levels: Sequence[str]) -> dict[str, Any]:
    """Mean TEDS / TEDS-struct per level: all tables, tables with spans, and per source."""
    out: dict[str, Any] = {}
    for level in levels:
        at = [r for r in rows if r["level"] == level]
        sources = sorted({r["source"] for r in at})
        out[level] = {
            **_block(at),
            "by_source": {s: _block([r for r in at if r["source"] == s]) for s in sources},
            "invalid": sum(1 for r in at if not r["valid"]),
            "errors": sum(1 for r in at if "error" in r),
        }
    return out


def _block(rows: list[dict[str, Any]]) -> dict[str, Any]:
    spans = [r for r in rows if r["has_span"]]
    return {"all": _means(rows), "span": _means(spans)}


def _means(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    if not n:
        return {"n": 0, "teds": None, "teds_struct": None, "binding": None}
    return {
        "n": n,
        "teds": round(sum(r["teds"] for r in rows) / n, 4),
        "teds_struct": round(sum(r["teds_struct"] for r in rows) / n, 4),
        **rates(rows),
    }


def format_table(results: dict[str, Any]) -> str:
    """A fixed-width table of the summary: one line per level, then one per source under it."""
    head = (
        f"{'level / source':<20} {'n':>4} {'TEDS':>7} {'TEDS-s':>7}   "
        f"{'n span':>6} {'TEDS':>7} {'TEDS-s':>7}   {'bind':>6} {'col':>6} {'row':>6}   {'invalid':>7} {'errors':>6}"
    )
    lines = [head, "-" * len(head)]
    for level, s in results["summary"].items():
        lines.append(_line(level, s, s["invalid"], s["errors"]))
        for source, b in s["by_source"].items():
            lines.append(_line(f"  {source}", b))
    skipped = results.get("skipped") or {}
    if skipped:
        parts = [f"{src}: " + ", ".join(f"{n} {why}" for why, n in reasons.items()) for src, reasons in skipped.items()]
        lines.append("skipped: " + "; ".join(parts))
    lines.append(
        f"tables: {results.get('n_tables', 0)}, seed {results.get('seed')}, words {results.get('words', 'oracle')}"
        f"{' (' + results['ocr_engine'] + ')' if results.get('ocr_engine') else ''}, "
        f"{results.get('seconds', 0)} s"
    )
    return "\n".join(lines)


def _line(name: str, b: dict[str, Any], invalid: int | None = None, errors: int | None = None) -> str:
    a, sp = b["all"], b["span"]
    tail = f"   {invalid:>7} {errors:>6}" if invalid is not None else ""
    return (
        f"{name:<20} {a['n']:>4} {_f(a['teds'])} {_f(a['teds_struct'])}   "
        f"{sp['n']:>6} {_f(sp['teds'])} {_f(sp['teds_struct'])}   "
        f"{_p(a.get('binding'))} {_p(a.get('binding_col'))} {_p(a.get('binding_row'))}{tail}"
    )


def _p(v: float | None) -> str:
    return f"{v:>6.1%}" if v is not None else f"{'-':>6}"


def _f(v: float | None) -> str:
    return f"{v:>7.4f}" if v is not None else f"{'-':>7}"
