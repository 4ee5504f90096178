"""The API documents what it answers: every route in openapi.json has a 2xx response schema,
and the response models follow the output contract."""

from __future__ import annotations

import pytest

from worker.api.app import create_app
from worker.contract import VisionRead
from worker.contract.reads import ContractError, read_manifest, read_vision
from worker.contract.vision import ReadSummary
from worker.settings import Settings
from worker.storage.local import LocalStorage


@pytest.fixture(scope="module")
def openapi() -> dict:
    return create_app(Settings()).openapi()


def test_every_route_has_a_success_schema(openapi: dict) -> None:
    assert openapi["paths"], "no routes in the schema"
    missing = []
    for path, ops in openapi["paths"].items():
        for method, op in ops.items():
            success = {code: r for code, r in op["responses"].items() if code.startswith("2")}
            schemas = [c.get("schema") for r in success.values() for c in (r.get("content") or {}).values()]
            if not schemas or not all(schemas):
                missing.append(f"{method.upper()} {path}")
    assert not missing, f"routes without a 2xx response schema: {missing}"


def test_stored_records_show_their_contract_schema(openapi: dict) -> None:
    schemas = openapi["components"]["schemas"]
    doc = openapi["paths"]["/v1/documents/{doc_id}"]["get"]["responses"]["200"]["content"]["application/json"]
    assert doc["schema"] == {"$ref": "#/components/schemas/Manifest"}
    assert {"doc_id", "status", "tables", "errors"} <= set(schemas["Manifest"]["properties"])
    job = schemas["JobView"]["properties"]
    assert {"job_id", "status", "pages", "links"} <= set(job)


def test_read_summary_is_a_subset_of_the_stored_read() -> None:
    extra = set(ReadSummary.model_fields) - set(VisionRead.model_fields)
    assert extra == {"cached", "kept_previous"}  # the two flags a read gets when it is answered


def test_reads_parse_by_the_contract(tmp_path) -> None:
    storage = LocalStorage(tmp_path)
    storage.put_json("d/manifest.json", {"doc_id": "d", "stauts": "complete"})
    with pytest.raises(ContractError, match=r"d/manifest.json does not follow the output contract \(Manifest\)"):
        read_manifest(storage, "d/manifest.json")
    with pytest.raises(KeyError):
        read_vision(storage, "d/tables/p0001-t01.vision.json")


def test_stored_records_are_answered_as_stored_through_their_models(tmp_path) -> None:
    """In process, no Redis: a manifest and a real vision read (OpenAI reader against a local
    stand-in server) come back through the response models with their keys unchanged."""
    import json

    from helpers import store_manifest
    from starlette.testclient import TestClient
    from vision_fixtures import DOC_ID, TABLE_ID, ChatServer, store_table

    from worker.queue.client import JobClient
    from worker.vision.read import read_table

    storage = LocalStorage(tmp_path / "store")
    ref = store_table(storage)
    entry = json.loads((tmp_path / "store" / DOC_ID / "tables" / f"{TABLE_ID}.json").read_text())
    assert entry["table_id"] == TABLE_ID
    with ChatServer() as server:
        s = Settings(
            _env_file=None,
            broker_url="redis://127.0.0.1:1/0",
            vision_backend="openai",
            vision_url=server.url,
            vision_model="served-vlm",
            vision_retries=0,
        )
        stored = read_table(storage, ref, s)
    assert stored["status"] == "ok"
    store_manifest(storage, DOC_ID, [])
    client = JobClient(s, storage=storage)
    with TestClient(create_app(client=client)) as c:
        manifest = c.get(f"/v1/documents/{DOC_ID}").json()
        assert manifest == json.loads((tmp_path / "store" / DOC_ID / "manifest.json").read_text())
        view = c.get(f"/v1/documents/{DOC_ID}/tables/{TABLE_ID}/read").json()
    client.close()
    assert "raw_answer" not in view and view["status"] == "ok" and view["model"] == "served-vlm"
    assert view["grid"] == {"n_rows": 4, "n_cols": 3, "header_rows": 2}
    assert set(view["agreement"]) == {"teds", "teds_struct", "cell_match", "same_shape"}
    assert view["html"].startswith("<table>") and "North" in view["html"]
