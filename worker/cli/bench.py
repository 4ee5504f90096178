"""`tablesight bench`: pages per second of the pipeline against the naive loop (worker.devtools.bench)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="measure pages/s of the pipeline against the naive loop",
        description="Run the pipeline and the naive loop (page by page, batch 1, fp32, no overlap) "
        "on the same pages and models, interleaved, and report pages/s, seconds per "
        "stage, peak memory and whether their outputs are identical (exit 1 if any HTML "
        "differs or JSON differs beyond raw-model-number noise; on GPU, HALF_PRECISION's "
        "bf16 may do that with real weights).",
    )
    p.add_argument("--pages", type=int, default=6, help="generated scanned pages, 1-2 tables each (default 6)")
    p.add_argument("--input", type=Path, metavar="DIR", help="a folder of PDFs to use instead of generated pages")
    p.add_argument(
        "--models",
        choices=("auto", "random", "real"),
        default="auto",
        help="random: full-size random-weight models (cached); real: the model settings; "
        "auto: real when the model settings resolve to local folders",
    )
    p.add_argument("--size", choices=("full", "tiny"), default="full", help="random models' size (tiny: tests, CI)")
    p.add_argument(
        "--answers",
        choices=("auto", "oracle", "model"),
        default="auto",
        help="oracle: models run, then the ground truth stands in for their answers (random weights "
        "on generated pages, the default there); model: the models' own answers",
    )
    p.add_argument("--rounds", type=int, default=1, help="timed runs of each variant, interleaved (median reported)")
    p.add_argument("--variants", default=None, help="comma-separated: naive, fast, embedded (default: naive,fast)")
    p.add_argument(
        "--engine",
        choices=("tatr", "embedded"),
        default="tatr",
        help="embedded: time the embedded engine beside the Table Transformer pipeline (variants "
        "fast,embedded unless --variants says otherwise) and report the ratio",
    )
    p.add_argument("--rss", action="store_true", help="also run each variant alone in a fresh process for its peak RSS")
    p.add_argument(
        "--batch-sizes",
        default="",
        metavar="B,...",
        help="also run the pipeline with these detection/structure batch sizes (GPU: e.g. 1,8,32 "
        "with --pages >= 2 x the largest, so each of the 2 lanes fills a batch)",
    )
    p.add_argument("--device", help="auto, cpu, cuda or cuda:N (default: TABLESIGHT_DEVICE)")
    p.add_argument("--json", metavar="OUT", help="write the report as JSON to OUT ('-': stdout, instead of the table)")
    p.add_argument("--keep", type=Path, metavar="DIR", help="copy the inputs and every run's outputs to DIR")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated pages")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from worker.devtools.bench import VARIANTS, BenchOptions, run_bench
    from worker.devtools.bench_report import format_report
    from worker.settings import get_settings

    default = "fast,embedded" if args.engine == "embedded" else "naive,fast"
    variants = tuple(v.strip() for v in (args.variants or default).split(",") if v.strip())
    if not variants or set(variants) - set(VARIANTS):
        print(f"error: --variants takes a comma-separated subset of {', '.join(VARIANTS)}", file=sys.stderr)
        return 2
    try:
        batch_sizes = tuple(int(b) for b in args.batch_sizes.split(",") if b.strip())
    except ValueError:
        print("error: --batch-sizes takes comma-separated integers", file=sys.stderr)
        return 2
    if args.pages < 1 or args.rounds < 1 or any(b < 1 for b in batch_sizes):
        print("error: --pages, --rounds and batch sizes must be at least 1", file=sys.stderr)
        return 2
    options = BenchOptions(
        pages=args.pages,
        input_dir=args.input,
        models=args.models,
        size=args.size,
        answers=args.answers,
        rounds=args.rounds,
        variants=variants,
        rss=args.rss,
        batch_sizes=batch_sizes,
        device=args.device,
        keep=args.keep,
        seed=args.seed,
    )
    report = run_bench(options, get_settings(), log=lambda m: print(f"bench: {m}", file=sys.stderr))
    if args.json and args.json != "-":
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if args.json == "-":
        print(json.dumps(report, indent=2))
    else:
        print(format_report(report))
    return 0 if report.get("outputs", {}).get("equivalent", True) else 1
