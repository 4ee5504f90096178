"""`tablesight demo`: write the bundled scanned sample and run the whole pipeline on it."""

from __future__ import annotations

import argparse
from pathlib import Path

from worker.cli.extract import add_engine_argument


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo",
        help="extract the tables of a generated two-page scanned PDF",
        description="Writes sample-scan.pdf (tables with merged cells and two-level headers, "
        "rendered as an image-only PDF) and runs `extract` on it.",
    )
    p.add_argument("--out", type=Path, default=Path("out"), help="output folder (default: ./out)")
    p.add_argument("--sample", type=Path, default=Path("sample-scan.pdf"), help="where to write the sample")
    add_engine_argument(p, default="auto")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from worker.cli import extract
    from worker.devtools.samples import write_sample

    write_sample(args.sample)
    print(f"wrote {args.sample} (2 scanned pages with tables)")
    ns = argparse.Namespace(
        files=[args.sample],
        out=args.out,
        pages=None,
        dpi=None,
        device=None,
        tables="detect",
        no_progress=False,
        engine=args.engine,
        ocr=args.ocr,
    )
    code = extract.run(ns)
    if code == 0:
        print(f"open {args.out}/*/tables/*.html for the tables, *.png for their crops")
    return code
