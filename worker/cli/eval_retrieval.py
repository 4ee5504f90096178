"""`tablesight eval retrieval --data DIR --work DIR`: find x read over whole documents.

See `worker.evaluation.retrieval.run` for the method; extraction outputs are cached in
`--work` and reused by later runs (extraction is the slow part).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_retrieval_parser(esub: argparse._SubParsersAction) -> None:
    from worker.evaluation.retrieval.run import REPRESENTATIONS, RETRIEVERS, SOURCES

    p = esub.add_parser(
        "retrieval",
        help="retrieval over whole documents: find@k and a strict reader, per representation",
        description="Ask every unambiguous ground-truth value cell in several phrasings, search all "
        "documents' table units and prose with each retriever, read the answer from the top 5 "
        "units by rule, and report find@1, find@5, answer, wrong, other-table and none per "
        "structure source (ground truth, our extraction in text and scan mode), representation "
        "and question kind.",
    )
    p.add_argument("--data", type=Path, required=True, help="folder holding <set>/gt.jsonl with source PDFs")
    p.add_argument(
        "--work",
        type=Path,
        required=True,
        help="folder caching our extraction of the documents (<work>/<mode>/), reused by later runs",
    )
    p.add_argument("--sources", default=",".join(SOURCES), help=f"comma-separated: {', '.join(SOURCES)}")
    p.add_argument(
        "--representations", default=",".join(REPRESENTATIONS), help=f"comma-separated: {', '.join(REPRESENTATIONS)}"
    )
    p.add_argument(
        "--retrievers", default=",".join(RETRIEVERS), help="comma-separated: bm25, hashing, embedder (needs --embedder)"
    )
    p.add_argument("--embedder", type=Path, help="a local sentence-transformers folder (never downloaded)")
    p.add_argument("--docs", type=int, help="only the first N documents (for a quick look)")
    p.add_argument("--max-tokens", type=int, help="chunk budget (default: TABLESIGHT_CHUNK_MAX_TOKENS)")
    p.add_argument("--max-rows", type=int, help="description chunk above this many rows (default: settings)")
    p.add_argument(
        "--variants",
        default="",
        help="further chunk layouts to compare, comma-separated LAYOUT/PREAMBLE/BUDGET (layout: labelled or "
        "table; preamble: full or lean), e.g. table/lean/512,labelled/lean/256",
    )
    p.add_argument("--engine", default="embedded", help="extraction engine for text and scan (default: embedded)")
    p.add_argument("--kinds", default="all", help="question kinds to print a table for, comma-separated, or 'every'")
    p.add_argument("--json", type=Path, dest="json_out", help="also write the full results here")
    p.add_argument(
        "--reader",
        default="folded",
        choices=("folded", "exact"),
        help="how the reader compares text: folded (default: letter case and whitespace do not count, on both "
        "sides, for every representation) or exact (the characters, whitespace collapsed)",
    )
    p.add_argument(
        "--records",
        type=Path,
        help="also write every question's outcome here, one JSON line each (source, representation, "
        "retriever, labels, value, what was read and from where)",
    )
    p.set_defaults(func=run_retrieval)


def run_retrieval(args: argparse.Namespace) -> int:
    from worker.evaluation.retrieval.questions import KINDS
    from worker.evaluation.retrieval.run import (
        REPRESENTATIONS,
        SOURCES,
        Options,
        format_results,
        run_retrieval_eval,
    )

    if not args.data.is_dir():
        print(f"error: {args.data}: no such folder", file=sys.stderr)
        return 1

    def split(s: str) -> list[str]:
        return [x.strip() for x in s.split(",") if x.strip()]

    sources, reps, retrievers = split(args.sources), split(args.representations), split(args.retrievers)
    kinds = ["all", *KINDS] if args.kinds == "every" else split(args.kinds)
    bad = (
        [s for s in sources if s not in SOURCES]
        + [r for r in reps if r not in REPRESENTATIONS]
        + [r for r in retrievers if r not in ("bm25", "hashing", "embedder")]
        + [k for k in kinds if k not in ("all", *KINDS)]
    )
    if bad or not sources or not reps or not retrievers:
        print(f"error: unknown source, representation, retriever or kind: {bad}", file=sys.stderr)
        return 2
    if "embedder" in retrievers and (args.embedder is None or not args.embedder.is_dir()):
        print(
            "error: the embedder retriever needs --embedder DIR, a local sentence-transformers folder", file=sys.stderr
        )
        return 2
    opts = Options(
        args.data,
        args.work,
        sources=sources,
        representations=reps,
        retrievers=retrievers,
        docs=args.docs,
        embedder=args.embedder,
        max_tokens=args.max_tokens,
        max_rows=args.max_rows,
        engine=args.engine,
        variants=split(args.variants),
        records=args.records,
        reader=args.reader,
    )
    try:
        results = run_retrieval_eval(opts)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_results(results, kinds))
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=1, ensure_ascii=False))
    return 0
