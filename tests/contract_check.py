"""Every stored JSON file checked against the committed JSON Schemas in docs/schema/.

The schemas are what users code against, so the check reads them (not the pydantic models)
and uses an independent validator (jsonschema).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from jsonschema import Draft202012Validator

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "docs" / "schema"

# the key pattern of each stored file -> its schema file
PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(^|/)[0-9a-fx]{16}/manifest\.json$"), "manifest.schema.json"),
    (re.compile(r"(^|/)[0-9a-fx]{16}/jobs/[0-9a-f]{32}\.json$"), "manifest.schema.json"),
    (re.compile(r"(^|/)[0-9a-fx]{16}/pages/\d{4}\.json$"), "page.schema.json"),
    (re.compile(r"(^|/)[0-9a-fx]{16}/tables/p\d{4}-t\d{2}\.json$"), "table.schema.json"),
    (re.compile(r"(^|/)[0-9a-fx]{16}/tables/p\d{4}-t\d{2}\.vision\.json$"), "vision-read.schema.json"),
]


@cache
def validator(schema_file: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads((SCHEMA_DIR / schema_file).read_text()))


def schema_for(path: Path) -> str | None:
    text = path.as_posix()
    return next((name for pattern, name in PATTERNS if pattern.search(text)), None)


def contract_problems(root: Path) -> tuple[int, list[str]]:
    """(files checked, problems) for every contract file under `root`."""
    checked, problems = 0, []
    for path in sorted(root.rglob("*.json")):
        name = schema_for(path)
        if name is None:
            continue
        checked += 1
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            problems.append(f"{path}: not JSON: {exc}")
            continue
        for error in validator(name).iter_errors(data):
            where = "/".join(str(p) for p in error.absolute_path)
            problems.append(f"{path.relative_to(root)} ({name}) at {where or '<root>'}: {error.message[:200]}")
    return checked, problems
