"""End to end through the queue: a real redis-server and a real Celery worker started with the
default queues (docs, pages and vision: one worker does everything), a vision server on
loopback. A document is extracted, its tables are flagged needs_vision, VISION_AUTO_READ
reads them on the vision queue, and `tablesight read` through the broker returns the stored
read, or reads again with --force."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from queue_fixtures import (
    REPO,
    Cluster,
    sample_pdf,
    start_cluster,
    wait_for,
)
from vision_fixtures import GOOD, ChatServer

from worker.queue.client import JobClient

pytestmark = pytest.mark.slow

HOSTILE_GOOD = GOOD.replace("<td>", '<td onclick="steal()">').replace("</table>", "<script>x()</script></table>")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, tiny_models) -> Iterator[Cluster]:
    with ChatServer(default=("text", f"```html\n{HOSTILE_GOOD}\n```")) as vision:
        with start_cluster(
            tmp_path_factory.mktemp("vision-queue"),
            tiny_models,
            workers=0,
            vision_backend="openai",
            vision_url=vision.url,
            vision_model="served-vlm",
            vision_auto_read="true",
            vision_retries=0,
        ) as cluster:
            cluster.vision = vision
            cluster.add_worker("v1", queues=None)  # the default: every queue
            yield cluster


def read_cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "worker.cli.main", "read", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_extract_flag_read_through_the_queue(cluster, tmp_path):
    client: JobClient = cluster.client
    manifest = client.wait(client.enqueue(sample_pdf(tmp_path / "one.pdf", 1, seed=5)), timeout=90)
    assert manifest["status"] == "complete"
    hard = [t for t in manifest["tables"] if t["needs_vision"]]
    assert hard and all(t["reasons"] for t in hard)
    tables = cluster.store / manifest["doc_id"] / "tables"
    ref = f"{manifest['doc_id']}/{hard[0]['table_id']}"
    # VISION_AUTO_READ: the finished job queued a vision task per hard table
    vision_json = tables / f"{hard[0]['table_id']}.vision.json"
    wait_for(vision_json.exists, 60, interval=0.1, what="the automatic vision read")
    record = json.loads(vision_json.read_text())
    html = (tables / f"{hard[0]['table_id']}.vision.html").read_text()
    assert record["status"] == "ok" and record["backend"] == "openai" and record["model"] == "served-vlm"
    assert (tables / f"{hard[0]['table_id']}.png").is_file()  # stored next to the crop
    assert "onclick" not in html and "script" not in html and "```" not in html
    assert 'colspan="2"' in html and 'rowspan="2"' in html
    assert record["agreement"]["teds"] is not None and record["agreement"]["teds_struct"] is not None
    assert record["request_id"]  # written by a task
    n_requests = len(cluster.vision.requests)

    # `tablesight read` through the broker: the stored read comes back, no new model call
    proc = read_cli(cluster.env, ref, "--wait", "--timeout", "60")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{ref}: ok (stored read) 4x3") and "TEDS" in proc.stdout
    assert len(cluster.vision.requests) == n_requests

    # --force reads again on the vision queue
    proc = read_cli(cluster.env, ref, "--wait", "--force", "--json", "--timeout", "60")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "ok" and not result.get("cached") and result["agreement"]["teds"] is not None
    assert len(cluster.vision.requests) == n_requests + 1
    assert json.loads(vision_json.read_text())["request_id"] not in (None, record["request_id"])  # a task read it

    # the Python client: a task id, then the read's summary
    task_id = client.request_read(ref)
    assert isinstance(task_id, str) and task_id
    summary = client.wait_read(task_id, timeout=60)
    assert summary["status"] == "ok" and summary["cached"] is True and summary["html_key"].endswith(".vision.html")
    with pytest.raises(ValueError):
        client.request_read("not/a/ref/at/all")

    # without --wait: one task id per table; an unknown table fails on the worker, clearly
    proc = read_cli(cluster.env, ref)
    assert proc.returncode == 0 and proc.stdout.startswith(f"{ref}: queued as ")
    proc = read_cli(cluster.env, f"{manifest['doc_id']}/p0042-t01", "--wait", "--timeout", "60")
    assert proc.returncode == 1 and "failed: no table" in proc.stdout


def test_waiting_with_no_worker_on_the_queue_says_so_at_once(cluster, tmp_path):
    """A broker database no worker listens on: `read --wait`, `enqueue --wait` and `result --wait`
    end at once with the reason instead of waiting forever."""
    import time

    lonely = {
        **cluster.env,
        "TABLESIGHT_BROKER_URL": cluster.env["TABLESIGHT_BROKER_URL"].rsplit("/", 1)[0] + "/7",
    }
    t0 = time.monotonic()
    proc = read_cli(lonely, "0123456789abcdef/p0001-t01", "--wait")
    assert proc.returncode == 1 and "no running worker consumes the vision queue" in proc.stderr, proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "worker.cli.main", "enqueue", str(sample_pdf(tmp_path / "w.pdf", 1, seed=9)), "--wait"],
        cwd=REPO,
        env=lonely,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "no running worker consumes the docs, pages queue" in proc.stderr, proc.stderr
    job_id = proc.stdout.split()[0]
    proc = subprocess.run(
        [sys.executable, "-m", "worker.cli.main", "result", job_id, "--wait"],
        cwd=REPO,
        env=lonely,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "no running worker consumes" in proc.stderr, proc.stderr
    assert time.monotonic() - t0 < 90  # three CLI starts and three short broadcasts, no waiting


def test_the_default_worker_consumes_every_queue(cluster):
    from worker.queue.consumers import queue_consumers

    app = cluster.client.app
    assert all(queue_consumers(app, q) == ["v1@test"] for q in ("docs", "pages", "vision"))
