"""JSON Schemas of the stored files, for users who code against them in any language."""

from __future__ import annotations

import json
from pathlib import Path

from worker.contract.base import Contract
from worker.contract.job import JobStatus
from worker.contract.manifest import Manifest, PageRecord
from worker.contract.table import TableRecord
from worker.contract.vision import VisionRead

# file name under docs/schema/ -> the model of the stored file it describes
SCHEMAS: dict[str, type[Contract]] = {
    "manifest.schema.json": Manifest,
    "page.schema.json": PageRecord,
    "table.schema.json": TableRecord,
    "vision-read.schema.json": VisionRead,
    "job-status.schema.json": JobStatus,
}


def schema_text(model: type[Contract]) -> str:
    """The model's JSON Schema (what a stored file must satisfy), as stable JSON text."""
    schema = model.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write_schemas(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in SCHEMAS.items():
        path = folder / name
        path.write_text(schema_text(model))
        written.append(path)
    return written
