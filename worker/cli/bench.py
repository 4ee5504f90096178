"""`tablesight bench`: pages per second of the pipeline against the naive loop (worker.devtools.bench)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from worker.cli.bench_gpu_cmd import add_gpu_arguments
from worker.cli.bench_peers_cmd import add_peer_arguments
from worker.cli.report_out import emit_report
from worker.engines import QUEUE_DEFAULT, engine_names


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="measure pages/s of the pipeline against the naive loop (or of the queue: bench queue)",
        description="Run the pipeline and the naive loop (page by page, batch 1, fp32, no overlap) "
        "on the same pages and models, interleaved, and report pages/s, seconds per "
        "stage, peak memory and whether their outputs are identical (exit 1 if any HTML "
        "differs, JSON differs beyond raw-model-number noise, or the raw model outputs differ by more "
        "than 1e-4 in score or 0.5 px in box; on GPU, HALF_PRECISION's bf16 may do that with real weights). "
        "`tablesight bench queue` instead measures the queue "
        "itself: a real redis-server and 1..W real worker processes with stand-in pages (no model "
        "work): pages/s, enqueue-to-done latency, Redis commands, bytes and memory per page and job, "
        "and counts of lost pages and duplicate finalisations (exit 1 if any).",
    )
    p.add_argument(
        "mode",
        nargs="?",
        choices=("pipeline", "queue", "api", "memory"),
        default="pipeline",
        help="pipeline (default): the pipeline against the naive loop; queue: the queue's own cost; "
        "api: bounded load on `tablesight serve` over loopback, with a worker and the API killed mid-run; "
        "memory: peak RSS of one worker process for --page-counts pages (generated scans)",
    )
    p.add_argument("--page-counts", default="2,50", metavar="N,...", help="memory: page counts, one fresh process each")
    p.add_argument(
        "--pages",
        type=int,
        default=None,
        help="pipeline: generated scanned pages, 1-2 tables each, or with --data the densest real pages taken, "
        "0: all (default 6); queue: pages per document (default 4)",
    )
    p.add_argument("--docs", type=int, default=50, help="queue: documents per worker count (default 50)")
    p.add_argument(
        "--workers", default="1,2,4,8", metavar="W,...", help="queue: worker process counts to run (default 1,2,4,8)"
    )
    p.add_argument(
        "--split-state",
        action="store_true",
        help="queue: job state on a second redis-server (TABLESIGHT_JOB_STATE_URL), measured apart from the broker",
    )
    p.add_argument(
        "--no-expiry",
        dest="expiry",
        action="store_false",
        help="queue: do not wait out the bench's 60 s job TTL to measure the memory left after expiry",
    )
    p.add_argument("--input", type=Path, metavar="DIR", help="a folder of PDFs to use instead of generated pages")
    p.add_argument(
        "--data",
        type=Path,
        metavar="DIR",
        help="an evaluation set (e.g. the dev set): its PDF pages rasterised without a text layer, as scans",
    )
    p.add_argument(
        "--process",
        action="store_true",
        help="also run each variant as a fresh process per round (imports and model load included, as a "
        "CLI user pays): the naive loop without caption capture against `tablesight extract`",
    )
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
    p.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="timed runs of each variant, interleaved (median reported; default 1; --peers: best of, default 2)",
    )
    p.add_argument(
        "--variants",
        default=None,
        help="comma-separated: naive, fast, embedded, embedded-tesseract, embedded-ppocr (the embedded engine with "
        "that OCR engine) (default: naive,fast)",
    )
    p.add_argument(
        "--engine",
        default=QUEUE_DEFAULT,
        metavar="ENGINE[,ENGINE]",
        help=f"one of {', '.join(engine_names())}. embedded: time the embedded engine beside the Table "
        "Transformer pipeline (variants fast,embedded unless --variants says otherwise) and report the ratio; "
        "with --peers: our engine against the peers; with --device cuda: the engines to sweep (embedded,tatr)",
    )
    add_peer_arguments(p)
    add_gpu_arguments(p)
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
    p.add_argument("--seed", type=int, default=0, help="seed of the generated pages and of --degrade")
    from worker.evaluation.degrade import KINDS, STRENGTHS

    p.add_argument(
        "--degrade",
        default=None,
        metavar="KIND",
        choices=tuple(KINDS),
        help="pipeline: every page made a simulated scan of this kind first (worker.evaluation.degrade); "
        "--peers: the rendered GT pages degraded first (office only, for now): " + ", ".join(KINDS),
    )
    p.add_argument("--strength", default="moderate", choices=STRENGTHS, help="strength of --degrade")
    from worker.cli.bench_api import add_api_arguments

    add_api_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.mode == "queue":
        return run_queue(args)
    if args.mode == "api":
        from worker.cli.bench_api import run_api

        return run_api(args)
    if args.mode == "memory":
        return run_memory_mode(args)
    engines = tuple(e.strip() for e in args.engine.split(",") if e.strip())
    if not engines or set(engines) - set(engine_names()):
        print(f"error: --engine takes {', '.join(engine_names())} (comma-separated)", file=sys.stderr)
        return 2
    if args.peers is not None:
        from worker.cli.bench_peers_cmd import run_peers

        args.rounds = 2 if args.rounds is None else args.rounds
        return run_peers(args, engines)
    args.rounds = 1 if args.rounds is None else args.rounds
    cuda = bool(args.device) and args.device.strip().lower().startswith("cuda")
    if args.gpu_sweep or (cuda and not args.batch_sizes and args.variants is None):
        from worker.cli.bench_gpu_cmd import run_gpu

        return run_gpu(args, engines)
    if len(engines) > 1:
        print("error: several engines only with --device cuda (or --gpu-sweep)", file=sys.stderr)
        return 2
    args.engine = engines[0]
    if args.pages is None:
        args.pages = 6
    from worker.devtools.bench import VARIANTS, BenchOptions, run_bench
    from worker.devtools.bench_report import format_report
    from worker.settings import get_settings

    default = "naive,fast" if args.engine == QUEUE_DEFAULT else f"fast,{args.engine}"  # a variant per engine
    variants = tuple(v.strip() for v in (args.variants or default).split(",") if v.strip())
    if not variants or set(variants) - set(VARIANTS):
        print(f"error: --variants takes a comma-separated subset of {', '.join(VARIANTS)}", file=sys.stderr)
        return 2
    try:
        batch_sizes = tuple(int(b) for b in args.batch_sizes.split(",") if b.strip())
    except ValueError:
        print("error: --batch-sizes takes comma-separated integers", file=sys.stderr)
        return 2
    if args.pages < (0 if args.data else 1) or args.rounds < 1 or any(b < 1 for b in batch_sizes):
        print("error: --pages, --rounds and batch sizes must be at least 1 (--pages 0 with --data)", file=sys.stderr)
        return 2
    if args.data and args.input:
        print("error: --data and --input exclude each other", file=sys.stderr)
        return 2
    options = BenchOptions(
        pages=args.pages,
        input_dir=args.input,
        data_dir=args.data,
        process=args.process,
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
        degrade=args.degrade,
        strength=args.strength,
    )
    report = run_bench(options, get_settings(), log=lambda m: print(f"bench: {m}", file=sys.stderr))
    emit_report(args.json, report, format_report)
    agree = all(v["within_tolerance"] for v in report.get("model_agreement", {}).values())
    return 0 if report.get("outputs", {}).get("equivalent", True) and agree else 1


def run_queue(args: argparse.Namespace) -> int:
    from worker.devtools.queue_bench import QueueBenchOptions, format_queue_report, run_queue_bench

    try:
        workers = tuple(int(w) for w in args.workers.split(",") if w.strip())
    except ValueError:
        print("error: --workers takes comma-separated integers, e.g. 1,2,4,8", file=sys.stderr)
        return 2
    pages = 4 if args.pages is None else args.pages
    if not workers or min(workers) < 1 or args.docs < 1 or pages < 1:
        print("error: --docs, --pages and every --workers count must be at least 1", file=sys.stderr)
        return 2
    options = QueueBenchOptions(
        docs=args.docs, pages=pages, workers=workers, expiry=args.expiry, split_state=args.split_state, keep=args.keep
    )
    try:
        report = run_queue_bench(options, log=lambda m: print(f"bench: {m}", file=sys.stderr))
    except (FileNotFoundError, TimeoutError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    emit_report(args.json, report, format_queue_report)
    bad = [r for r in report["runs"] if r["counts"]["pages_lost"] or r["counts"]["duplicate_finalisations"]]
    return 1 if bad else 0


def run_memory_mode(args: argparse.Namespace) -> int:
    from worker.devtools.bench_memory import format_memory_report, run_memory

    engine = args.engine if args.engine in engine_names() else ""
    try:
        counts = tuple(sorted(int(n) for n in args.page_counts.split(",") if n.strip()))
    except ValueError:
        counts = ()
    if not engine or not counts or counts[0] < 1:
        print("error: memory takes one --engine and --page-counts of positive integers, e.g. 2,50", file=sys.stderr)
        return 2
    try:
        report = run_memory(engine, counts, args.seed)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json and args.json != "-":
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2) if args.json == "-" else format_memory_report(report))
    return 0
