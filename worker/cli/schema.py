"""`tablesight schema [--out DIR]`: the JSON Schemas of the stored files (docs/schema/ in the repo)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("schema", help="write the JSON Schemas of the output files (manifest, page, table, ...)")
    p.add_argument("--out", type=Path, default=Path("docs/schema"), help="folder to write to (default docs/schema)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from worker.contract.schemas import write_schemas

    for path in write_schemas(args.out):
        print(path)
    return 0
