"""`tablesight settings [--markdown]`: the effective settings, or their documentation table."""

from __future__ import annotations

import argparse
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from worker.settings import FLAT_NAMES, Settings, get_settings

SECRET_FIELDS = {("vision", "api_key"), ("api", "tokens")}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("settings", help="show the effective settings (environment and .env applied)")
    p.add_argument("--markdown", action="store_true", help="print the README's settings table instead")
    p.set_defaults(func=run)


def default_of(field: FieldInfo) -> Any:
    """A field's real default: its factory's value where it has one (never `PydanticUndefined`)."""
    if field.default_factory is not None:
        return field.default_factory()  # type: ignore[call-arg]
    return None if field.default is PydanticUndefined else field.default


def _shown(value: Any) -> str:
    if value is None or value == "":
        return "(unset)"
    if isinstance(value, dict):
        return "{}" if not value else str(value)
    return str(value)


def groups() -> dict[str, type]:
    """Group name -> its settings class, in declaration order."""
    return {
        name: field.annotation
        for name, field in Settings.model_fields.items()
        if isinstance(field.annotation, type) and hasattr(field.annotation, "model_fields")
    }


def markdown_table() -> str:
    """The settings table, one section per group, generated so the docs cannot drift from the code."""
    flat_of = {where: old for old, where in FLAT_NAMES.items() if old != "cpu_workers"}
    lines = [
        "| variable (nested) | flat name, still read | default | meaning |",
        "|---|---|---|---|",
    ]
    for group, cls in groups().items():
        for name, field in cls.model_fields.items():  # type: ignore[attr-defined]
            old = flat_of.get((group, name))
            flat = f"`TABLESIGHT_{old.upper()}`" if old else ""
            nested = f"`TABLESIGHT_{group.upper()}__{name.upper()}`"
            lines.append(f"| {nested} | {flat} | `{_shown(default_of(field))}` | {field.description} |")
    for name, field in Settings.model_fields.items():
        if name not in groups():
            lines.append(f"| `TABLESIGHT_{name.upper()}` | | `{_shown(default_of(field))}` | {field.description} |")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.markdown:
        print(markdown_table())
        return 0
    dumped = get_settings().model_dump()
    for group in groups():
        for name, value in dumped.pop(group).items():
            shown = "***" if (group, name) in SECRET_FIELDS and value else value
            print(f"TABLESIGHT_{group.upper()}__{name.upper()}={'' if shown is None else shown}")
    for name, value in dumped.items():
        print(f"TABLESIGHT_{name.upper()}={'' if value is None else value}")
    return 0
