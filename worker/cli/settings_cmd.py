"""`tablesight settings [--markdown]`: the effective settings, or their documentation table."""

from __future__ import annotations

import argparse

from worker.settings import Settings, get_settings


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("settings", help="show the effective settings (environment and .env applied)")
    p.add_argument("--markdown", action="store_true", help="print the README's settings table instead")
    p.set_defaults(func=run)


def markdown_table() -> str:
    """The README's settings table, generated so the docs cannot drift from the code."""
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        default = field.default if field.default not in (None, "") else "(unset)"
        lines.append(f"| `TABLESIGHT_{name.upper()}` | `{default}` | {field.description} |")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.markdown:
        print(markdown_table())
        return 0
    for name, value in get_settings().model_dump().items():
        shown = "***" if (("key" in name or name == "api_tokens") and value) else value
        print(f"TABLESIGHT_{name.upper()}={'' if shown is None else shown}")
    return 0
