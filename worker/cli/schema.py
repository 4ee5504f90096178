"""`tablesight schema [--out DIR]`: the JSON Schemas of the stored files (docs/schema/ in the repo);
`--markdown` / `--write-docs`: the output-contract table of the README and docs/architecture.md."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("schema", help="write the JSON Schemas of the output files (manifest, page, table, ...)")
    p.add_argument("--out", type=Path, default=Path("docs/schema"), help="folder to write to (default docs/schema)")
    p.add_argument("--markdown", action="store_true", help="print the output-contract table (README, architecture)")
    p.add_argument(
        "--write-docs",
        action="store_true",
        help="rewrite the output-contract table between its markers in README.md and docs/architecture.md",
    )
    p.set_defaults(func=run)


DOCS = (Path("README.md"), Path("docs/architecture.md"))


def run(args: argparse.Namespace) -> int:
    from worker.contract.files import contract_table, replace_between_markers
    from worker.contract.schemas import write_schemas

    if args.markdown:
        print(contract_table())
        return 0
    if args.write_docs:
        for doc in DOCS:
            depth = "../" * (len(doc.parts) - 1)
            doc.write_text(replace_between_markers(doc.read_text(), contract_table(f"{depth}docs/schema")))
            print(doc)
        return 0

    for path in write_schemas(args.out):
        print(path)
    return 0
