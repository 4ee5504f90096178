"""Where a bench command's report goes: `--json OUT` writes it, `--json -` prints it instead of the table."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def emit_report(json_out: str | None, report: dict[str, Any], table: Callable[[dict[str, Any]], str]) -> None:
    """Write `report` as JSON to `json_out` (a path), print it (`-`), else print `table(report)`."""
    if json_out and json_out != "-":
        Path(json_out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if json_out == "-":
        print(json.dumps(report, indent=2))
    else:
        print(table(report))
