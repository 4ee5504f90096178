"""Nothing is lost: a pool child killed mid-page, a whole worker killed (a node lost), a warm
shutdown (SIGTERM) mid-job, and a Redis restart (append-only file on, as deployed).

A test hook (TABLESIGHT_TEST_PAGE_DELAY) makes each page take a known time, so "mid-task" is
deterministic; a short visibility timeout keeps the lost-node case inside the test budget
(the default, 90 s + a 5 s sweep, meets the two-minute bound: see test_queue_app.py).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import pytest
import redis
from queue_fixtures import (
    Cluster,
    Worker,
    sample_pdf,
    settings_from_env,
    start_cluster,
    wait_for,
)

from worker.queue.client import JobClient
from worker.queue.watchdog import grace_seconds

pytestmark = pytest.mark.slow

PAGE_DELAY = 1.5
# the pool processes load the models when they start (PRELOAD_MODELS: ~5-12 s on a busy 2-core
# machine, kept out of the task time limits); a page then takes a few seconds at most, and the
# visibility timeout is above the hard limit plus the longest retry delay, as the settings require
VISIBILITY = 16


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, tiny_models) -> Iterator[Cluster]:
    with start_cluster(
        tmp_path_factory.mktemp("queue-crash"),
        tiny_models,
        workers=0,  # each test starts (and kills) its own
        persistent=True,
        test_page_delay=PAGE_DELAY,
        visibility_timeout=VISIBILITY,
        unacked_restore_interval=1,
        task_soft_time_limit=12,
        task_time_limit=14,
        retry_backoff_max=1,
        preload_models=1,
        worker_proc_alive_timeout=90,
        watchdog_interval=2,
    ) as cluster:
        yield cluster


def new_worker(cluster: Cluster) -> Worker:
    return cluster.add_worker(f"c{len(cluster.workers) + 1}")


def live_worker(cluster) -> Worker:
    alive = [w for w in cluster.workers if w.alive]
    return alive[0] if alive else new_worker(cluster)


def running_page(client: JobClient, job_id: str, timeout: float = 60) -> tuple[int, dict]:
    """Wait for a page in the middle of its work; returns (page, its progress record)."""

    def check():
        for page, info in client.status(job_id)["pages"].items():
            if info["state"] == "running":
                return int(page), info
        return None

    return wait_for(check, timeout, what="a page to be running")


def check_whole(client: JobClient, job_id: str, pages: int) -> dict:
    manifest = client.result(job_id)
    assert manifest["status"] == "complete", manifest["errors"]
    assert manifest["pages"] == manifest["pages_done"] == list(range(1, pages + 1))
    ids = [t["table_id"] for t in manifest["tables"]]
    assert ids == [f"p{p:04d}-t01" for p in range(1, pages + 1)]  # every table exactly once
    assert manifest["errors"] == []
    return manifest


def test_child_killed_mid_page_the_job_completes(cluster, tmp_path):
    client: JobClient = cluster.client
    worker = live_worker(cluster)
    job_id = client.enqueue(sample_pdf(tmp_path / "a.pdf", 3, seed=21))
    page, info = running_page(client, job_id)
    time.sleep(PAGE_DELAY / 3)
    os.kill(info["pid"], signal.SIGKILL)  # the pool child, mid-page; the worker's main process lives
    wait_for(lambda: client.status(job_id)["status"] != "running", 90, interval=0.2, what="the job to end")
    check_whole(client, job_id, 3)
    pages = client.status(job_id)["pages"]
    assert pages[str(page)]["attempts"] == 2 and pages[str(page)]["pid"] != info["pid"]
    assert all(p["attempts"] == 1 for n, p in pages.items() if int(n) != page)
    assert worker.alive


def test_whole_worker_killed_pages_rerun_on_a_new_worker(cluster, tmp_path):
    client: JobClient = cluster.client
    worker = live_worker(cluster)
    job_id = client.enqueue(sample_pdf(tmp_path / "b.pdf", 3, seed=22))
    page, info = running_page(client, job_id)
    time.sleep(PAGE_DELAY / 3)
    worker.kill()  # main process and child: a GPU node lost, its task unacknowledged in Redis
    killed_at = time.monotonic()
    # ... and as if it died in the middle of a restore sweep: the sweep's lock is left behind, as the
    # sweep takes it (redis-py's lock, living UNACKED_MUTEX_EXPIRE; kombu's own default is 5 minutes)
    expire = settings_from_env(cluster.env).queue.unacked_mutex_expire
    broker = redis.Redis.from_url(cluster.env["TABLESIGHT_BROKER_URL"])
    assert broker.set("unacked_mutex", "dead-worker-token", nx=True, px=expire * 1000)
    broker.close()
    assert client.status(job_id)["status"] == "running"
    new_worker(cluster)
    wait_for(lambda: client.status(job_id)["status"] != "running", 120, interval=0.2, what="the job to end")
    took = time.monotonic() - killed_at
    print(
        f"lost page {page} re-ran and the job completed {took:.1f} s after the node was lost "
        f"(visibility timeout {VISIBILITY} s)"
    )
    check_whole(client, job_id, 3)
    # redelivered after the visibility timeout (not Redis's one-hour default), the dead sweep's
    # lock expiring after UNACKED_MUTEX_EXPIRE (not kombu's five minutes)
    assert took < VISIBILITY + 45
    assert client.status(job_id)["pages"][str(page)]["attempts"] == 2


def test_a_message_taken_by_a_worker_that_died_before_recording_it_is_sent_again(cluster, tmp_path):
    for w in cluster.workers:
        if w.alive:
            w.kill()
    client: JobClient = cluster.client
    job_id = client.enqueue(sample_pdf(tmp_path / "lost.pdf", 2, seed=25))
    settings = settings_from_env(cluster.env)
    broker = redis.Redis.from_url(cluster.env["TABLESIGHT_BROKER_URL"])
    # what a worker's BRPOP does just before it is killed, ahead of recording the delivery as
    # unacknowledged: the message leaves the queue and is nowhere; no visibility timeout returns it
    taken = broker.rpop(settings.queue.docs)
    broker.close()
    assert taken is not None and job_id.encode() in taken
    lost_at = time.monotonic()
    worker = new_worker(cluster)
    wait_for(lambda: client.status(job_id)["status"] not in ("queued", "running"), 120, interval=0.2, what="the job")
    took = time.monotonic() - lost_at
    check_whole(client, job_id, 2)
    assert f"re-sent the lost document task of job {job_id}" in worker.text()
    # the grace: visibility timeout + two restore sweeps + one watchdog interval, then one pass
    assert took < grace_seconds(settings) + 30, took


def test_sigterm_mid_job_unfinished_pages_go_to_the_next_worker(cluster, tmp_path):
    client: JobClient = cluster.client
    worker = live_worker(cluster)
    job_id = client.enqueue(sample_pdf(tmp_path / "c.pdf", 4, seed=23))
    page, _ = running_page(client, job_id)
    rc = worker.terminate(timeout=60)  # warm shutdown: the running page finishes, nothing new starts
    assert rc == 0
    st = client.status(job_id)
    assert st["status"] == "running" and st["pages"][str(page)]["state"] == "done"
    left = [p for p, info in st["pages"].items() if info["state"] != "done"]
    assert left, "the worker should not have finished the whole job during its shutdown"
    new_worker(cluster)
    wait_for(lambda: client.status(job_id)["status"] != "running", 90, interval=0.2, what="the job to end")
    check_whole(client, job_id, 4)
    pages = client.status(job_id)["pages"]
    assert all(info["attempts"] == 1 for info in pages.values()), pages  # none lost, none run twice
    assert {pages[p]["worker"] for p in left} == {cluster.workers[-1].name}


def test_redis_restart_mid_job_workers_reconnect(cluster, tmp_path):
    client: JobClient = cluster.client
    worker = live_worker(cluster)
    job_id = client.enqueue(sample_pdf(tmp_path / "d.pdf", 3, seed=24))
    running_page(client, job_id)
    cluster.server.restart(down_seconds=1.0)  # clean shutdown: the append-only file keeps the queue
    wait_for(lambda: client.status(job_id)["status"] != "running", 120, interval=0.2, what="the job to end")
    check_whole(client, job_id, 3)
    assert worker.alive
    # and the worker still takes new work after the restart
    again = client.enqueue(sample_pdf(tmp_path / "e.pdf", 1, seed=25))
    assert client.wait(again, timeout=60)["status"] == "complete"
