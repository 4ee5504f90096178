"""`tablesight eval ...`: quality measurement on ground-truth tables (e.g. ../shared/eval/dev)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


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
    o.add_argument("--no-refine", action="store_true", help="turn the word/line corrections of the bands off")
    o.set_defaults(func=run_oracle)
    add_probes_parser(esub)
    add_sql_parser(esub)


def run_oracle(args: argparse.Namespace) -> int:
    from worker.evaluation.noise import LEVEL_NAMES
    from worker.evaluation.oracle_eval import format_table, run_oracle_eval

    if not args.data.is_dir():
        print(f"error: {args.data}: no such folder", file=sys.stderr)
        return 1
    levels = args.levels.split(",") if args.levels else list(LEVEL_NAMES)
    try:
        from worker.core.refine import RefineRules

        off = RefineRules(lines=False, gaps=False, split=False, slivers=False)
        results = run_oracle_eval(
            args.data, levels, args.seed, limit=args.limit, words=args.words, refine=off if args.no_refine else None
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_table(results))
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=1))
    return 0


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
    from worker.evaluation.noise import LEVEL_NAMES
    from worker.evaluation.probes import format_table, run_probes_eval

    if not args.data.is_dir():
        print(f"error: {args.data}: no such folder", file=sys.stderr)
        return 1
    if args.max_tokens < 16:
        print("error: --max-tokens must be at least 16", file=sys.stderr)
        return 2
    levels = args.levels.split(",") if args.levels else list(LEVEL_NAMES)
    try:
        results = run_probes_eval(args.data, levels, args.seed, args.max_tokens, limit=args.limit)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_table(results))
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=1, ensure_ascii=False))
    return 0


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
    from worker.evaluation.noise import LEVEL_NAMES
    from worker.evaluation.sql_eval import format_table, run_sql_eval

    if not args.data.is_dir():
        print(f"error: {args.data}: no such folder", file=sys.stderr)
        return 1
    levels = args.levels.split(",") if args.levels else list(LEVEL_NAMES)
    try:
        results = run_sql_eval(args.data, levels, args.seed, limit=args.limit)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_table(results))
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=1, ensure_ascii=False))
    return 0
