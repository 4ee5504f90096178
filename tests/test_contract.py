"""The typed output contract: committed schemas are current, typos and bad values are refused,
files written before `schema_version` existed still parse, and stored files validate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from contract_check import SCHEMA_DIR, contract_problems
from pydantic import ValidationError

from worker.contract import Manifest, PageRecord, TableRecord
from worker.contract.schemas import SCHEMAS, schema_text

MANIFEST = {
    "manifest_version": 1,
    "doc_id": "0123456789abcdef",
    "status": "complete",
    "source": "a.pdf",
    "sha256": "0123456789abcdef" * 4,
    "kind": "pdf",
    "page_count": 1,
    "pages": [1],
    "pages_done": [1],
    "tables": [],
    "errors": [],
    "models": {"structure": {"id": "/models/structure", "revision": None}},
    "options": {"dpi": 200, "pages": None, "tables": "detect"},
    "timings": {"render": 0.1},
    "wall_seconds": 0.5,
    "tool_version": "tablesight 0.1.0",
    "finished_at": "2026-11-30T15:00:00Z",
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_committed_schemas_are_current(name: str) -> None:
    committed = (SCHEMA_DIR / name).read_text()
    assert committed == schema_text(SCHEMAS[name]), "docs/schema is stale: run `tablesight schema`"


def test_a_file_without_schema_version_is_version_1_and_dumps_back_the_same() -> None:
    manifest = Manifest.model_validate(MANIFEST)
    assert manifest.schema_version == 1
    out = manifest.dump()
    assert out.pop("schema_version") == 1 and out == MANIFEST
    assert "job_id" not in out and "logical_tables" not in out  # absent optional keys stay absent


def test_misspelt_keys_and_unknown_statuses_are_refused() -> None:
    with pytest.raises(ValidationError, match="tabels"):
        Manifest.model_validate({**MANIFEST, "tabels": []})
    with pytest.raises(ValidationError, match="status"):
        Manifest.model_validate({**MANIFEST, "status": "done"})
    with pytest.raises(ValidationError, match="text_source"):
        PageRecord.model_validate(
            {
                "page": 1,
                "tables": [
                    {
                        "table_id": "p0001-t01",
                        "page": 1,
                        "bbox": [0, 0, 1, 1],
                        "n_rows": 1,
                        "n_cols": 1,
                        "confidence": 1.0,
                        "text_source": "vision",
                        "is_complex": False,
                        "needs_vision": False,
                        "score": 0,
                        "reasons": [],
                        "files": {},
                    }
                ],
            }
        )


def test_the_validator_catches_a_broken_stored_file(tmp_path: Path) -> None:
    doc = tmp_path / "0123456789abcdef"
    (doc / "pages").mkdir(parents=True)
    (doc / "manifest.json").write_text(json.dumps(MANIFEST))
    (doc / "pages" / "0001.json").write_text(json.dumps({"page": "one", "tables": []}))
    checked, problems = contract_problems(tmp_path)
    assert checked == 2 and len(problems) == 1 and "pages/0001.json" in problems[0]
    (doc / "pages" / "0001.json").write_text(json.dumps({"page": 1, "tables": [], "errors": [], "timings": {}}))
    assert contract_problems(tmp_path) == (2, [])


def test_table_record_schema_requires_the_replay_payload() -> None:
    required = TableRecord.model_json_schema()["required"]
    assert {"grid", "flags", "serialisations", "structure", "text_source"} <= set(required)
