"""Data over HTTP against the real stack (redis-server, a Celery worker with the embedded engine,
`tablesight serve`), on local storage and on S3 (moto server): SQL with its read-only guarantees
and row/time limits, the paged document listing, descriptions and chunks, and deletion with its
log, down to the last key in the store."""

from __future__ import annotations

import pytest
from queue_fixtures import wait_for
from service_fixtures import start_stack

from worker.devtools.samples import financial_table, make_born_digital_pdf, staffing_table

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=["local", "s3"])
def stack(request, tmp_path_factory, tiny_models):
    root = tmp_path_factory.mktemp(f"svc-data-{request.param}")
    s = start_stack(request.param, root, tiny_models, api_sql_max_rows=3, api_sql_timeout=2)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def docs(stack, tmp_path_factory):
    """Two born-digital documents (a financial table, a staffing table), processed."""
    folder = tmp_path_factory.mktemp("svc-data-in")
    out = {}
    with stack.http.client() as c:
        for name, spec in (("finance", financial_table), ("staff", staffing_table)):
            path = folder / f"{name}.pdf"
            make_born_digital_pdf(path, spec(), title=f"{name} report")
            r = c.post("/v1/jobs", params={"wait": 180}, files={"file": (f"{name}.pdf", path.read_bytes())})
            assert r.status_code == 200 and r.json()["jobs"][0]["status"] == "complete", r.text
            out[name] = {**r.json()["jobs"][0], "bytes": path.read_bytes()}
    return out


def test_sql_reads_real_numbers_and_refuses_writes(stack, docs):
    doc = docs["finance"]["doc_id"]
    with stack.http.client() as c:
        r = c.post(
            "/v1/sql",
            json={
                "doc_id": doc,
                "query": 'SELECT region, product, c2023_revenue, c2024_cost FROM "p0001-t01" ORDER BY grid_row',
            },
        )
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["columns"] == ["region", "product", "c2023_revenue", "c2024_cost"]
        # the row limit (TABLESIGHT_API_SQL_MAX_ROWS=3 here): five rows match, three come back
        assert body["rows"] == [
            ["North", "Widgets", 1200, 870],
            ["North", "Gadgets", 640, 455],
            ["South", "Widgets", 980, 650],
        ]
        assert body["truncated"] is True and body["row_limit"] == 3
        total = c.post(
            "/v1/sql",
            json={"doc_id": doc, "query": "SELECT sum(c2023_revenue) FROM \"p0001-t01\" WHERE region <> 'Total'"},
        )
        assert total.json()["rows"] == [[3340]] and total.json()["truncated"] is False
        # every document at once: one schema per doc id
        both = c.post("/v1/sql", json={"all": True, "query": "SELECT doc_id, table_id FROM _tables ORDER BY doc_id"})
        assert sorted(row[0] for row in both.json()["rows"]) == sorted(d["doc_id"] for d in docs.values())
        for query, status, message in [
            ('DROP VIEW "p0001-t01"', 400, "read-only"),
            ("SELECT 1; SELECT 2", 400, "one query at a time"),
            ("COPY (SELECT 1) TO '/tmp/x.csv'", 400, "read-only"),
            ("SELECT * FROM read_csv('/etc/passwd')", 400, ""),
            ("SELECT count(*) FROM range(100000000000) a, range(1000) b", 408, "time limit"),
        ]:
            bad = c.post("/v1/sql", json={"doc_id": doc, "query": query})
            assert bad.status_code == status and message in bad.json()["error"], (query, bad.text)
        assert c.post("/v1/sql", json={"query": "SELECT 1"}).status_code == 422  # neither doc_id nor all
        assert c.post("/v1/sql", json={"doc_id": "0123456789abcdef", "query": "SELECT 1"}).status_code == 404
        assert c.post("/v1/sql", json={"doc_id": "../../etc", "query": "SELECT 1"}).status_code == 404


def test_listing_descriptions_and_chunks(stack, docs):
    with stack.http.client() as c:
        first = c.get("/v1/documents", params={"limit": 1}).json()
        assert first["total"] == 2 and len(first["documents"]) == 1 and first["next"]
        second = c.get("/v1/documents", params={"limit": 1, "after": first["next"]}).json()
        assert second["next"] is None
        listed = {d["doc_id"]: d for d in first["documents"] + second["documents"]}
        assert set(listed) == {d["doc_id"] for d in docs.values()}
        finance = listed[docs["finance"]["doc_id"]]
        assert finance["source"] == "finance.pdf" and finance["tables"] == 1 and finance["status"] == "complete"
        desc = c.get(f"/v1/documents/{finance['doc_id']}/descriptions").json()
        [table] = desc["tables"]
        assert table["table_id"] == "p0001-t01" and "2023 / Revenue" in table["description"]
        assert table["verified"] is False and table["version"] == 0
        chunks = c.get(f"/v1/documents/{finance['doc_id']}/chunks").json()["chunks"]
        text = chunks[0]["text"]  # the product's chunk layout: rows as a Markdown table under the column paths
        assert "2023 / Revenue" in text and "| North | Widgets | 1,200 |" in text
        paths = c.get("/openapi.json").json()["paths"]
        for path, method in [
            ("/v1/sql", "post"),
            ("/v1/documents", "get"),
            ("/v1/documents/{doc_id}", "delete"),
            ("/v1/documents/{doc_id}/descriptions", "get"),
            ("/v1/documents/{doc_id}/chunks", "get"),
        ]:
            schema = paths[path][method]["responses"]["200"]["content"]["application/json"]["schema"]
            assert "$ref" in schema, (path, schema)


def test_delete_removes_every_key_and_is_logged(stack, docs, tmp_path):
    doc = docs["staff"]["doc_id"]
    assert stack.storage.list(doc)  # input, pages, tables, exports, manifests
    with stack.http.client() as c:
        r = c.delete(f"/v1/documents/{doc}")
        assert r.status_code == 200, r.text
        entry = r.json()
        assert entry["doc_id"] == doc and entry["keys_deleted"] >= 8 and entry["by"].startswith("token:")
        assert entry["source"] == "staff.pdf" and entry["jobs_forgotten"] == 1
        assert stack.storage.list(doc) == []
        if stack.backend == "local":
            assert not (stack.root / "store" / doc).exists()
        logged = stack.storage.get_json(entry["log_key"])
        assert logged == entry
        assert c.get(f"/v1/documents/{doc}").status_code == 404
        assert c.delete(f"/v1/documents/{doc}").status_code == 404
        assert c.get("/v1/documents").json()["total"] == 1
        assert c.get(f"/v1/jobs/{docs['staff']['job_id']}").status_code == 404  # its job state went too
        # the same file sent again is a new job that runs again (no stale dedup entry)
        again = c.post("/v1/jobs", params={"wait": 180}, files={"file": ("staff.pdf", docs["staff"]["bytes"])})
        job = again.json()["jobs"][0]
        assert job["doc_id"] == doc and job["job_id"] != docs["staff"]["job_id"] and job["status"] == "complete"
        wait_for(lambda: stack.storage.exists(f"{doc}/manifest.json"), 10)
        # a document whose job runs cannot be deleted
        busy_path = tmp_path / "busy.pdf"
        make_born_digital_pdf(busy_path, financial_table(), title="busy")
        busy = c.post("/v1/jobs", files={"file": ("busy.pdf", busy_path.read_bytes())}).json()["jobs"][0]
        r = c.delete(f"/v1/documents/{busy['doc_id']}")
        assert r.status_code == 409 and "cancel it first" in r.json()["error"], r.text
