"""A multi-page document through real workers with S3 storage (moto's S3 API server): the input
is fetched from the object store by the worker, every output lands in the bucket, under the prefix."""

from __future__ import annotations

import time

import boto3
import pytest
from moto.server import ThreadedMotoServer
from queue_fixtures import RedisServer, Worker, progress_log, sample_pdf, settings_from_env, worker_env

from worker.queue.client import JobClient
from worker.storage.s3 import S3Storage

pytestmark = pytest.mark.slow

AWS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


@pytest.fixture(scope="module")
def s3_cluster(tmp_path_factory, tiny_models):
    root = tmp_path_factory.mktemp("queue-s3")
    mp = pytest.MonkeyPatch()
    for k, v in AWS.items():
        mp.setenv(k, v)
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="tables")
    server = RedisServer(root / "redis").start()
    env = worker_env(
        broker_url=server.url(0),
        storage_url="s3://tables/runs/2024",
        models=tiny_models,
        work_dir=root / "work",
        s3_endpoint_url=endpoint,
        retry_backoff_base=0.5,
        retry_backoff_max=4,
    )
    env.update(AWS)
    worker = Worker("s1", env, root).start()
    client = JobClient(settings_from_env(env))
    state = {"client": client, "endpoint": endpoint, "worker": worker, "moto": moto, "port": port}
    yield state
    client.close()
    worker.kill()
    server.stop()
    state["moto"].stop()
    mp.undo()


def s3_outage(cluster, seconds: float) -> None:
    """The object store goes away (connections refused) and comes back with its data."""
    cluster["moto"].stop()
    cluster["moto"]._server.server_close()
    time.sleep(seconds)
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=cluster["port"], verbose=False)
    moto.start()
    cluster["moto"] = moto


def test_multi_page_pdf_through_s3(s3_cluster, tmp_path):
    client: JobClient = s3_cluster["client"]
    pdf = sample_pdf(tmp_path / "s3.pdf", 3, seed=31)
    t0 = time.monotonic()
    job_id = client.enqueue(pdf)
    final, seen = progress_log(client, job_id, timeout=120)
    print(f"3 pages through S3 in {time.monotonic() - t0:.1f} s")
    assert final["status"] == "complete", final
    assert any(0 < st["pages_done"] < 3 for st in seen if st["status"] == "running")
    assert final["manifest"] == f"s3://tables/runs/2024/{final['doc_id']}/jobs/{job_id}.json"
    manifest = client.result(job_id)
    assert manifest["pages_done"] == [1, 2, 3]
    assert [t["table_id"] for t in manifest["tables"]] == ["p0001-t01", "p0002-t01", "p0003-t01"]
    store = S3Storage.from_url("s3://tables/runs/2024", endpoint_url=s3_cluster["endpoint"])
    doc = manifest["doc_id"]
    keys = store.list(doc)
    assert f"{doc}/manifest.json" in keys and f"{doc}/source/input.bin" in keys
    assert [k for k in keys if k.startswith(f"{doc}/pages/")] == [f"{doc}/pages/{p:04d}.json" for p in (1, 2, 3)]
    for t in manifest["tables"]:
        assert set(t["files"].values()) <= set(keys)
        assert {"csv", "parquet"} <= set(t["files"])  # the queue path exports tables as extract does
    assert store.get_json(f"{doc}/manifest.json") == manifest
    assert store.get_bytes(f"{doc}/source/input.bin") == pdf.read_bytes()
    # nothing outside the prefix
    everything = boto3.client("s3", endpoint_url=s3_cluster["endpoint"]).list_objects_v2(Bucket="tables")
    assert all(o["Key"].startswith("runs/2024/") for o in everything["Contents"])
    assert client.enqueue(pdf) == job_id


def test_a_storage_outage_is_retried_with_backoff(s3_cluster, tmp_path):
    client: JobClient = s3_cluster["client"]
    job_id = client.enqueue(sample_pdf(tmp_path / "outage.pdf", 3, seed=32))
    s3_outage(s3_cluster, 4.0)  # the worker meets refused connections mid-job
    manifest = client.wait(job_id, timeout=120)
    assert manifest["status"] == "complete" and manifest["pages_done"] == [1, 2, 3]
    assert [t["table_id"] for t in manifest["tables"]] == ["p0001-t01", "p0002-t01", "p0003-t01"]
    log = s3_cluster["worker"].text()
    assert f"[job={job_id}" in log and "transient error, retry 1/" in log
