"""`tablesight bench --peers`: the options and the entry of the peer bench (worker.devtools.bench_peers)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_peer_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--peers",
        nargs="?",
        const="img2table,rapid-table",
        metavar="PEER,...",
        help="with --data: our engine against img2table (tesseract) and rapid-table's own pipeline, each one "
        "fresh process over the same GT pages, wall, CPU, s/page, peak RSS and end-to-end TEDS of the same run "
        "(default peers: img2table,rapid-table; '' for ours alone)",
    )
    p.add_argument("--ocr", metavar="NAME", help="--peers: our OCR engine by name (the pipeline's OCR selection)")
    p.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="LABEL:KEY=VALUE[,KEY=VALUE]",
        help="--peers: one more run of ours with these TABLESIGHT_* settings, side by side (repeatable; "
        "KEY without the prefix is fine, e.g. base: or pool2:SUBPROCESS_THREADS=2; CHECKOUT=DIR runs ours from another "
        "checkout, e.g. before:CHECKOUT=../main)",
    )


def parse_settings(specs: list[str]) -> dict[str, dict[str, str]]:
    """`LABEL:KEY=VALUE,...` specs -> {label: {TABLESIGHT_KEY: VALUE}}; ours as is when none is given."""
    if not specs:
        return {"": {}}
    out: dict[str, dict[str, str]] = {}
    for spec in specs:
        label, sep, rest = spec.partition(":")
        if not sep or not label.strip() or label in out:
            raise ValueError(f"--setting {spec!r}: want a new LABEL:KEY=VALUE[,KEY=VALUE] (or LABEL: for as is)")
        env: dict[str, str] = {}
        for pair in filter(None, (x.strip() for x in rest.split(","))):
            key, eq, value = pair.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"--setting {spec!r}: {pair!r} is not KEY=VALUE")
            key = key.strip().upper()
            if key == "CHECKOUT":  # ours from another checkout (before/after): its code first on the path
                env["PYTHONPATH"] = value.strip()
                continue
            env[key if key.startswith("TABLESIGHT_") else f"TABLESIGHT_{key}"] = value.strip()
        out[label.strip()] = env
    return out


def run_peers(args: argparse.Namespace, engines: tuple[str, ...]) -> int:
    from worker.devtools.bench_peers import PEERS, PeerBenchOptions, format_peer_report, run_peer_bench

    peers = tuple(x.strip() for x in args.peers.split(",") if x.strip())
    problems = []
    if args.data is None:
        problems.append("--peers needs --data DIR (an evaluation set with GT pages)")
    if set(peers) - set(PEERS):
        problems.append(f"--peers takes a comma-separated subset of {', '.join(PEERS)}")
    if len(engines) != 1:
        problems.append("--peers benches one engine of ours")
    if args.pages is not None and args.pages < 0 or args.rounds < 1:
        problems.append("--pages must be >= 0 (0: all) and --rounds >= 1")
    try:
        variants = parse_settings(args.setting)
    except ValueError as exc:
        problems.append(str(exc))
    if problems:
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        return 2
    options = PeerBenchOptions(
        data_dir=args.data,
        pages=8 if args.pages is None else args.pages,
        peers=peers,
        engine=engines[0],
        rounds=args.rounds,
        degrade=args.degrade,
        seed=args.seed,
        ocr=args.ocr,
        variants=variants,
        keep=args.keep,
    )
    try:
        report = run_peer_bench(options, log=lambda m: print(f"bench: {m}", file=sys.stderr))
    except (ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json and args.json != "-":
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2) if args.json == "-" else format_peer_report(report))
    return 0
