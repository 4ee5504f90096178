"""`tablesight eval ...`: quality measurement on ground-truth tables (the dev set: `--data DIR`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="measure quality on ground-truth tables")
    esub = p.add_subparsers(dest="eval_command", required=True)
    o = esub.add_parser(
        "oracle",
        help="oracle (+ noisy) structure objects -> rebuild -> TEDS",
        description="Derive structure objects from ground-truth cell boxes, add noise at "
        "several levels, rebuild, and report TEDS and TEDS-struct.",
    )
    o.add_argument("--data", type=Path, required=True, help="folder holding <set>/gt.jsonl")
    o.add_argument("--levels", default=None, help="comma-separated noise levels (default: all)")
    o.add_argument("--seed", type=int, default=0)
    o.add_argument("--limit", type=int, help="at most this many tables (for a quick look)")
    o.add_argument("--json", type=Path, dest="json_out", help="also write the full results here")
    o.add_argument(
        "--words",
        default="oracle",
        choices=["oracle", "ocr", "ocr-keep-rules"],
        help="cell words from the ground truth (default) or OCR of the table image (OCR mode)",
    )
    o.add_argument(
        "--ocr",
        default="tesseract",
        choices=["tesseract", "ppocr"],
        help="the OCR engine of --words ocr / ocr-keep-rules (default: tesseract)",
    )
    o.add_argument("--no-refine", action="store_true", help="turn the word/line corrections of the bands off")
    o.set_defaults(func=run_oracle)
    add_probes_parser(esub)
    add_sql_parser(esub)
    add_pages_parser(esub)
    from worker.cli.eval_retrieval import add_retrieval_parser

    add_retrieval_parser(esub)
    add_totals_parser(esub)


def run_oracle(args: argparse.Namespace) -> int:
    from worker.core.refine import RefineRules
    from worker.evaluation.oracle_eval import format_table, run_oracle_eval

    off = RefineRules(lines=False, gaps=False, split=False, slivers=False)
    refine = off if args.no_refine else None
    return _run_levels(
        args,
        lambda levels: run_oracle_eval(
            args.data, levels, args.seed, limit=args.limit, words=args.words, refine=refine, ocr_engine=args.ocr
        ),
        format_table,
    )


def add_probes_parser(esub: argparse._SubParsersAction) -> None:
    p = esub.add_parser(
        "probes",
        help="cell probes: find and bind rates on serialised rows and chunks",
        description="Ask for each ground-truth body cell by its row and column labels and check "
        "that the serialised rows and the chunks give its value bound to them; with "
        "oracle structure (level none) and noisy structure.",
    )
    p.add_argument("--data", type=Path, required=True, help="folder holding <set>/gt.jsonl")
    p.add_argument("--levels", default=None, help="comma-separated noise levels (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-tokens", type=int, default=256, help="chunk budget (approximate tokens)")
    p.add_argument("--limit", type=int, help="at most this many tables (for a quick look)")
    p.add_argument("--json", type=Path, dest="json_out", help="also write the full results here")
    p.set_defaults(func=run_probes)


def run_probes(args: argparse.Namespace) -> int:
    from worker.evaluation.probes import format_table, run_probes_eval

    if args.max_tokens < 16:
        print("error: --max-tokens must be at least 16", file=sys.stderr)
        return 2
    return _run_levels(
        args,
        lambda levels: run_probes_eval(args.data, levels, args.seed, args.max_tokens, limit=args.limit),
        format_table,
    )


def add_sql_parser(esub: argparse._SubParsersAction) -> None:
    p = esub.add_parser(
        "sql",
        help="SQL lookups and aggregates on the store: exact answers from labels",
        description="Export each rebuilt ground-truth table to Parquet, open the read-only SQL store, "
        "ask for each body cell by its row label and column header path, and compare count and sum "
        "of each numeric column with the ground truth's; with oracle and noisy structure.",
    )
    p.add_argument("--data", type=Path, required=True, help="folder holding <set>/gt.jsonl")
    p.add_argument("--levels", default=None, help="comma-separated noise levels (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, help="at most this many tables (for a quick look)")
    p.add_argument("--json", type=Path, dest="json_out", help="also write the full results here")
    p.set_defaults(func=run_sql)


def run_sql(args: argparse.Namespace) -> int:
    from worker.evaluation.sql_eval import format_table, run_sql_eval

    return _run_levels(args, lambda levels: run_sql_eval(args.data, levels, args.seed, limit=args.limit), format_table)


def add_pages_parser(esub: argparse._SubParsersAction) -> None:
    p = esub.add_parser(
        "pages",
        help="end to end on real pages: detection, structure and text against GT tables",
        description="Render each GT table's PDF page at the GT's dpi and run the whole pipeline: "
        "in scan mode without the text layer, in text mode with it; --mode crop scores the GT "
        "crops alone. Detection precision/recall by page IoU, TEDS and TEDS-struct over all GT "
        "tables (a missed table scores 0) and over matched ones, label binding (GT values found "
        "under a similar row label and column path; column path only; row label only), pages/s.",
    )
    p.add_argument("--data", type=Path, required=True, help="folder holding <set>/gt.jsonl (ICDAR records with pdf)")
    p.add_argument("--mode", default="scan,text", help="comma-separated: scan, text, crop (default: scan,text)")
    p.add_argument(
        "--tool",
        default="embedded",
        help="comma-separated: tatr, embedded (tablesight engines), img2table, rapid-table (peers, each in "
        "its own venv under ~/.cache/tablesight/peers, set up on first use)",
    )
    p.add_argument("--limit", type=int, help="only the pages of the first N tables (for a quick look)")
    p.add_argument("--device", default="cpu", help="tablesight engines: cpu, cuda or auto")
    p.add_argument("--json", type=Path, dest="json_out", help="also write the full results here")
    p.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="keep every run's pages and outputs in DIR/<tool>-<mode>[-<kind>] (to look at the tables)",
    )
    add_degrade_arguments(p)
    p.set_defaults(func=run_pages)


def add_degrade_arguments(p: argparse.ArgumentParser) -> None:
    """--degrade/--strength/--seed: the scan simulator (worker.evaluation.degrade), shared with bench."""
    from worker.evaluation.degrade import KINDS, STRENGTHS

    p.add_argument(
        "--degrade",
        default=None,
        metavar="KIND[,KIND...]",
        help=f"scan mode on simulated scans, one report row per kind: {', '.join(KINDS)}",
    )
    p.add_argument("--strength", default="moderate", choices=STRENGTHS, help="degradation strength")
    p.add_argument("--seed", type=int, default=0, help="simulator seed (each page draws its own from it)")


def run_pages(args: argparse.Namespace) -> int:
    from worker.evaluation.binding import format_lost
    from worker.evaluation.degrade import parse_kinds
    from worker.evaluation.pages_eval import (
        MODES,
        Degradation,
        evaluate,
        format_rows,
        load_page_tables,
        tablesight_tool,
    )
    from worker.evaluation.peers import PEERS, peer_tool

    if not args.data.is_dir():
        print(f"error: {args.data}: no such folder", file=sys.stderr)
        return 1
    modes = [m.strip() for m in args.mode.split(",") if m.strip()]
    tools = [t.strip() for t in args.tool.split(",") if t.strip()]
    from worker.engines import engine_names

    known = (*engine_names(), *PEERS)
    bad = [m for m in modes if m not in MODES] + [t for t in tools if t not in known]
    if bad or not modes or not tools:
        print(f"error: unknown mode or tool {bad}; modes: {list(MODES)}, tools: {', '.join(known)}")
        return 2
    degradations: list[Degradation | None] = [None]
    if args.degrade:
        try:
            kinds = parse_kinds(args.degrade)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if "scan" not in modes:
            print("note: --degrade runs scan mode only (a degraded page has no text layer)", file=sys.stderr)
        modes = ["scan"]
        degradations = [None if k == "clean" else Degradation(k, args.strength, args.seed) for k in kinds]
    tables = load_page_tables(args.data, args.limit)
    if not tables:
        print(f"error: {args.data}: no GT tables with a source PDF page", file=sys.stderr)
        return 1
    rows, full = [], {}
    for name in tools:
        tool = peer_tool(name) if name in PEERS else tablesight_tool(name, args.device)
        label = name if name in PEERS else f"tablesight {name}"
        for mode in modes:
            for degradation in degradations:
                kind = "clean" if degradation is None else degradation.kind
                keep = args.keep / (f"{name}-{mode}" + (f"-{kind}" if args.degrade else "")) if args.keep else None
                if keep is not None:
                    keep.mkdir(parents=True, exist_ok=True)
                result = evaluate(tool, tables, mode, workdir=keep, degradation=degradation)
                if args.degrade:
                    result["summary"].setdefault("degrade", kind)
                rows.append((label, result["summary"]))
                full[f"{name}/{mode}" + (f"/{kind}" if args.degrade else "")] = result
                for failure in result["summary"]["failures"]:
                    print(f"warning: {label} {mode}: {failure}", file=sys.stderr)
                print(format_rows(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    print(format_rows(rows))
    print("\nWhere the unbound values went (shares of all GT values; docs/evaluation.md):\n")
    print(format_lost(rows))
    if args.json_out:
        args.json_out.write_text(json.dumps(full, indent=1))
    return 0


def add_totals_parser(esub: argparse._SubParsersAction) -> None:
    p = esub.add_parser(
        "totals",
        help="the totals check on ground-truth text and on OCR words, with the second reading",
        description="Check every labelled total against its members on the ground-truth text (a "
        "mismatch there is a rule bug or a table that does not add up) and, with --words ocr, on "
        "tesseract's words (oracle structure): mismatches that are real OCR errors, false alarms, "
        "and what the second reading fixes (docs/numbers.md).",
    )
    p.add_argument("--data", type=Path, required=True, help="folder holding <set>/gt.jsonl")
    p.add_argument("--words", default="gt", choices=["gt", "ocr"], help="ground truth only, or OCR words too")
    p.add_argument("--scan-noise", type=int, default=None, metavar="SEED", help="OCR a scan-noised image (seeded)")
    p.add_argument("--reader", default="tesseract-digits", help="second cell reader (OCR__CELL_READER)")
    p.add_argument("--limit", type=int, help="at most this many tables")
    p.add_argument("--json", type=Path, dest="json_out", help="also write the full results here")
    p.set_defaults(func=run_totals)


def run_totals(args: argparse.Namespace) -> int:
    from worker.evaluation.totals_eval import format_table, run_totals_eval

    if not args.data.is_dir():
        print(f"error: {args.data}: no such folder", file=sys.stderr)
        return 1
    results = run_totals_eval(args.data, args.words, args.limit, args.scan_noise, args.reader)
    print(format_table(results))
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=1, ensure_ascii=False))
    return 0


def _run_levels(
    args: argparse.Namespace, evaluate: Callable[[list[str]], dict[str, Any]], format_table: Callable[..., str]
) -> int:
    """The shape every per-noise-level evaluation shares: check --data, run the levels asked
    for (default: all), print the table, write --json."""
    from worker.evaluation.noise import LEVEL_NAMES

    if not args.data.is_dir():
        print(f"error: {args.data}: no such folder", file=sys.stderr)
        return 1
    levels = args.levels.split(",") if args.levels else list(LEVEL_NAMES)
    try:
        results = evaluate(levels)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_table(results))
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=1, ensure_ascii=False))
    return 0
