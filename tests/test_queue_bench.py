"""Queue throughput on tiny models: pages per minute in process, through one and two workers
(local folder) and one worker on S3 (moto), and where the time per page goes. It prints
numbers and asserts nothing about speed; it runs only when asked:

    TABLESIGHT_QUEUE_BENCH=1 .venv/bin/python -m pytest -q -s tests/test_queue_bench.py
"""

from __future__ import annotations

import os
import re
import statistics
import time

import boto3
import pytest
from moto.server import ThreadedMotoServer
from queue_fixtures import RedisServer, Worker, sample_pdf, settings_from_env, worker_env

from worker.queue.client import JobClient

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("TABLESIGHT_QUEUE_BENCH") != "1",
        reason="a measurement, not a test: set TABLESIGHT_QUEUE_BENCH=1",
    ),
]

DOCS, PAGES = 6, 4
_SUCCEEDED = re.compile(r"tablesight\.pages\[([0-9a-f]{32})\.p\d{4}\] succeeded in ([0-9.]+)s")


def run_batch(client: JobClient, workers: list[Worker], pdfs: list) -> dict:
    t0 = time.monotonic()
    jobs = [client.enqueue(p) for p in pdfs]
    manifests = [client.wait(j, timeout=900, poll=0.2) for j in jobs]
    wall = time.monotonic() - t0
    assert all(m["status"] == "complete" for m in manifests)
    pages = sum(len(m["pages_done"]) for m in manifests)
    compute = [info["seconds"] for j in jobs for info in client.status(j)["pages"].values()]
    storage = sum(m["timings"].get("storage", 0.0) for m in manifests) / pages
    ours = set(jobs)
    runtimes = [float(s) for w in workers for job, s in _SUCCEEDED.findall(w.text()) if job in ours]
    assert len(runtimes) == pages
    task = statistics.mean(runtimes)
    return {
        "pages": pages,
        "wall": wall,
        "ppm": pages / wall * 60,
        "compute": statistics.mean(compute),
        "task": task,
        "storage": storage,
        "per_page_wall": wall * len(workers) / pages,
    }


def run_reused(client: JobClient, workers: list[Worker], pdfs: list) -> None:
    """The same pages again as new jobs (another page selection) whose pages are all reused:
    no model work, so the time per page is the queue's own cost (broker, state, storage reads)."""
    t0 = time.monotonic()
    jobs = [client.enqueue(p, {"pages": f"1-{PAGES}"}) for p in pdfs]
    for j in jobs:
        assert client.wait(j, timeout=300, poll=0.05)["status"] == "complete"
        assert all(info["reused"] for info in client.status(j)["pages"].values())
    wall = time.monotonic() - t0
    per_page = wall * len(workers) / (len(pdfs) * PAGES)
    print(
        f"{'  same pages, reused':<24} {len(pdfs) * PAGES:>3} pages {wall:6.1f} s: queue cost {per_page * 1000:.0f} ms "
        "per page (broker round trip, job state, page-record read, manifest)"
    )


def report(name: str, r: dict) -> None:
    print(
        f"{name:<24} {r['pages']:>3} pages {r['wall']:6.1f} s {r['ppm']:6.1f} pages/min | per page: "
        f"process_pages {r['compute']:.3f} s (storage writes {r['storage']:.3f} s), task {r['task']:.3f} s "
        f"(+{r['task'] - r['compute']:.3f} s job state, input, reuse check, logging), "
        f"worker-time {r['per_page_wall']:.3f} s (+{r['per_page_wall'] - r['task']:.3f} s broker, "
        "document task, manifest, idle)"
    )


def test_pages_per_minute(tmp_path_factory, tiny_models):
    from worker.pipeline import extract_document, load_stages
    from worker.storage import LocalStorage

    root = tmp_path_factory.mktemp("bench")
    batches = {
        name: [sample_pdf(root / f"{name}-{i}.pdf", PAGES, seed=100 * n + i) for i in range(DOCS)]
        for n, name in enumerate(["inproc", "one", "two", "s3"])
    }
    print(f"\nload average before: {os.getloadavg()}")

    server = RedisServer(root / "redis").start()
    env = worker_env(
        broker_url=server.url(0),
        storage_url=str(root / "store"),
        models=tiny_models,
        work_dir=root / "work",
        preload_models=1,
        worker_proc_alive_timeout=120,
    )
    settings = settings_from_env(env)

    # in process, one process, the same models and settings
    stages = load_stages(settings)
    store = LocalStorage(root / "inproc")
    extract_document(sample_pdf(root / "warm.pdf", 1, seed=999), stages=stages, storage=store, settings=settings)
    t0 = time.monotonic()
    for pdf in batches["inproc"]:
        assert extract_document(pdf, stages=stages, storage=store, settings=settings)["status"] == "complete"
    wall = time.monotonic() - t0
    print(f"{'in process':<24} {DOCS * PAGES:>3} pages {wall:6.1f} s {DOCS * PAGES / wall * 60:6.1f} pages/min")

    client = JobClient(settings)
    workers = [Worker("b1", env, root).start()]
    try:
        client.wait(client.enqueue(sample_pdf(root / "warm1.pdf", 1, seed=998)), timeout=300)
        report("queue, 1 worker, local", run_batch(client, workers, batches["one"]))
        run_reused(client, workers, batches["one"])
        workers.append(Worker("b2", env, root).start())
        client.wait(client.enqueue(sample_pdf(root / "warm2.pdf", 2, seed=997)), timeout=300)
        report("queue, 2 workers, local", run_batch(client, workers, batches["two"]))
    finally:
        client.close()
        for w in workers:
            w.kill()

    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    aws = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    mp = pytest.MonkeyPatch()
    for k, v in aws.items():
        mp.setenv(k, v)
    boto3.client("s3", endpoint_url=f"http://{host}:{port}").create_bucket(Bucket="bench")
    s3_env = {
        **env,
        **aws,
        "TABLESIGHT_BROKER_URL": server.url(1),
        "TABLESIGHT_STORAGE_URL": "s3://bench/runs",
        "TABLESIGHT_S3_ENDPOINT_URL": f"http://{host}:{port}",
    }
    client = JobClient(settings_from_env(s3_env))
    workers = [Worker("b3", s3_env, root).start()]
    try:
        client.wait(client.enqueue(sample_pdf(root / "warm3.pdf", 1, seed=996)), timeout=300)
        report("queue, 1 worker, S3", run_batch(client, workers, batches["s3"]))
        run_reused(client, workers, batches["s3"])
    finally:
        client.close()
        for w in workers:
            w.kill()
        moto.stop()
        mp.undo()
        server.stop()
    print(f"load average after: {os.getloadavg()}")
