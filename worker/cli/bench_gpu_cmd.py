"""`tablesight bench --device cuda --engine embedded,tatr`: options and entry of worker.devtools.bench_gpu."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_gpu_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--gpu-sweep",
        action="store_true",
        help="pages/s and GPU memory per batch size for each --engine (what --device cuda runs by default; "
        "with --device cpu: the same on the CPU, to check the script); batch sizes from --batch-sizes "
        "(default 1,8,32)",
    )


def run_gpu(args: argparse.Namespace, engines: tuple[str, ...]) -> int:
    from worker.devtools.bench_gpu import (
        DEFAULT_BATCH_SIZES,
        DeviceUnavailable,
        GpuBenchOptions,
        format_gpu_report,
        run_gpu_bench,
    )
    from worker.settings import get_settings

    try:
        sizes = tuple(int(b) for b in args.batch_sizes.split(",") if b.strip()) or DEFAULT_BATCH_SIZES
    except ValueError:
        print("error: --batch-sizes takes comma-separated integers", file=sys.stderr)
        return 2
    pages = 4 if args.pages is None else args.pages
    if min(sizes) < 1 or pages < 1:
        print("error: batch sizes and --pages must be at least 1", file=sys.stderr)
        return 2
    options = GpuBenchOptions(
        engines=engines,
        device=args.device or "cuda",
        batch_sizes=sizes,
        pages=pages,
        data_dir=args.data,
        models=args.models,
        size=args.size,
    )
    try:
        report = run_gpu_bench(options, get_settings(), log=lambda m: print(f"bench: {m}", file=sys.stderr))
    except DeviceUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json and args.json != "-":
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2) if args.json == "-" else format_gpu_report(report))
    return 0
