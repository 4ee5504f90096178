"""`tablesight serve` over S3 storage (moto's S3 API server), a real Redis and a real worker:
upload, wait, fetch a table's files and chunks, readiness; the store is never on local disk."""

from __future__ import annotations

import boto3
import pytest
from api_fixtures import ApiServer
from moto.server import ThreadedMotoServer
from queue_fixtures import RedisServer, Worker, sample_pdf, worker_env

from worker.storage.s3 import S3Storage

pytestmark = pytest.mark.slow

AWS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


def test_api_over_s3(tmp_path, tiny_models):
    mp = pytest.MonkeyPatch()
    for k, v in AWS.items():
        mp.setenv(k, v)
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="api-tables")
    server = RedisServer(tmp_path / "redis").start()
    env = worker_env(
        broker_url=server.url(0),
        storage_url="s3://api-tables/api",
        models=tiny_models,
        work_dir=tmp_path / "work",
        s3_endpoint_url=endpoint,
    )
    env.update(AWS)
    worker = Worker("s3api", env, tmp_path, queues="docs,pages").start()
    http = ApiServer({**env, "TABLESIGHT_API_TOKENS": "s3-token"}, tmp_path, token="s3-token").start()
    try:
        with http.client() as c:
            ready = c.get("/readyz")
            assert ready.status_code == 200 and ready.json()["checks"]["store"] == "ok", ready.text
            assert ready.json()["queues"]["vision"] == []  # reported, not required
            pdf = sample_pdf(tmp_path / "s3.pdf", 1, seed=61)
            r = c.post("/v1/jobs", params={"wait": 120}, files={"file": ("s3.pdf", pdf.read_bytes())})
            assert r.status_code == 200 and r.json()["jobs"][0]["status"] == "complete", r.text
            doc_id = r.json()["jobs"][0]["doc_id"]
            manifest = c.get(r.json()["jobs"][0]["links"]["result"]).json()
            tid = manifest["tables"][0]["table_id"]
            store = S3Storage.from_url("s3://api-tables/api", endpoint_url=endpoint)
            png = c.get(f"/v1/documents/{doc_id}/tables/{tid}.png")
            assert png.status_code == 200 and png.content == store.get_bytes(f"{doc_id}/tables/{tid}.png")
            assert c.get(f"/v1/documents/{doc_id}/tables/{tid}.html").headers["etag"]
            assert c.get(f"/v1/documents/{doc_id}/chunks").json()["doc_id"] == doc_id
            page = c.get(f"/ui/documents/{doc_id}")
            assert page.status_code == 200 and f"{tid}.png?v=" in page.text
            assert not (tmp_path / "store").exists()
        # the store goes away: not ready, with the reason in one line
        moto.stop()
        with http.client() as c:
            ready = c.get("/readyz")
            assert ready.status_code == 503 and ready.json()["checks"]["store"] != "ok"
    finally:
        http.stop()
        worker.kill()
        server.stop()
        try:
            moto.stop()
        except Exception:  # noqa: BLE001 - already stopped
            pass
        mp.undo()
