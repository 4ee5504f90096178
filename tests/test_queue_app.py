"""The Celery app's knobs, the timing rules between them, the job state's atomic counters on a
real redis-server, options and retry policy; no worker processes (those are the slow tests)."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from queue_fixtures import REPO, RedisServer

from worker.queue.app import DOCUMENT_TASK, PAGES_TASK, celery_config, make_app
from worker.queue.client import normalise_options
from worker.queue.state import JobState, options_hash, redis_client
from worker.queue.tasks import backoff, is_transient, job_log, page_task_id
from worker.settings import Settings
from worker.storage import StorageError


def settings(**kw) -> Settings:
    return Settings(_env_file=None, **kw)


def test_celery_config_comes_from_the_settings():
    s = settings(
        broker_url="redis://example:6379/3",
        visibility_timeout=100,
        task_time_limit=70,
        task_soft_time_limit=60,
        worker_max_tasks_per_child=7,
        queue_pages="gpu",
    )
    c = celery_config(s)
    assert c["broker_url"] == c["result_backend"] == "redis://example:6379/3"
    assert c["task_acks_late"] and c["task_reject_on_worker_lost"] and c["worker_prefetch_multiplier"] == 1
    assert c["broker_transport_options"]["visibility_timeout"] == 100
    assert c["broker_transport_options"]["unacked_restore_throttle"] == 1
    assert (c["task_soft_time_limit"], c["task_time_limit"]) == (60, 70)
    assert c["worker_max_tasks_per_child"] == 7 and c["worker_max_memory_per_child"] > 0
    assert c["worker_send_task_events"] and c["task_send_sent_event"]
    assert c["broker_connection_retry_on_startup"] and c["result_expires"] > 0
    assert c["task_routes"][PAGES_TASK] == {"queue": "gpu"} and c["task_routes"][DOCUMENT_TASK] == {"queue": "docs"}
    assert {q.name for q in c["task_queues"]} == {"docs", "gpu", "vision"}
    app = make_app(s)
    assert app.amqp.router.route({}, PAGES_TASK)["queue"].name == "gpu"
    assert app.amqp.router.route({}, DOCUMENT_TASK)["queue"].name == "docs"
    assert app.amqp.router.route({}, "tablesight.vision.read")["queue"].name == "vision"
    assert (
        settings(result_backend="redis://other/1")
        and celery_config(settings(result_backend="redis://other/1"))["result_backend"] == "redis://other/1"
    )


def test_default_timing_reruns_a_lost_page_within_two_minutes():
    s = settings()
    # a lost node's task is handed out again after the visibility timeout, found by a sweep
    assert s.queue.visibility_timeout + s.queue.unacked_restore_interval <= 100
    # ... and no live task is handed out twice: it ends (retry delays included) before that
    assert s.queue.task_soft_time_limit < s.queue.task_time_limit
    assert s.queue.task_time_limit + s.queue.retry_backoff_max < s.queue.visibility_timeout
    with pytest.raises(ValueError, match="VISIBILITY_TIMEOUT"):
        settings(visibility_timeout=60, task_time_limit=60, task_soft_time_limit=50)
    with pytest.raises(ValueError, match="SOFT"):
        settings(task_soft_time_limit=60, task_time_limit=60)
    # a worker killed mid-sweep leaves the sweep's lock: it must not hold lost tasks for kombu's 5 minutes
    assert celery_config(s)["broker_transport_options"]["unacked_mutex_expire"] == s.queue.unacked_mutex_expire <= 10
    with pytest.raises(ValueError, match="UNACKED_MUTEX_EXPIRE"):
        settings(unacked_mutex_expire=90)


def test_importing_the_queue_never_loads_torch():
    # what a worker's main process imports: the app, every task module it includes, the CLI
    code = (
        "import importlib, sys; import worker.queue.app, worker.queue.client, worker.cli.main; "
        "[importlib.import_module(m) for m in worker.queue.app.app.conf.include]; "
        "bad = [m for m in ('torch', 'transformers', 'models.table_transformer') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_backoff_is_exponential_jittered_and_bounded():
    for retries in range(12):
        delays = [backoff(retries, 1.0, 20.0) for _ in range(50)]
        ceiling = min(20.0, 2.0**retries)
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
    assert len({round(backoff(3, 1.0, 20.0), 6) for _ in range(20)}) > 1


def test_transient_or_permanent():
    import redis
    from kombu.exceptions import OperationalError

    from worker.errors import InputError

    assert is_transient(StorageError("x", transient=True)) and not is_transient(StorageError("x"))
    assert is_transient(redis.exceptions.ConnectionError()) and is_transient(OperationalError("down"))
    assert not is_transient(InputError("f", "encrypted PDF")) and not is_transient(ValueError("bug"))


def test_options_are_normalised_for_deduplication():
    s = settings(dpi=150)
    assert normalise_options(None, s) == {"dpi": 150, "pages": None, "tables": "detect", "engine": "tatr"}
    assert normalise_options({"pages": " 1-3, 5 ", "dpi": 200}, s) == {
        "dpi": 200,
        "pages": "1-3,5",
        "tables": "detect",
        "engine": "tatr",
    }
    # the engine is part of the options: the same document with another engine is another job
    embedded = normalise_options({"engine": "embedded"}, s)
    assert options_hash(embedded) != options_hash(normalise_options(None, s))
    assert normalise_options({"pages": "all"}, s) == normalise_options({}, s)
    assert options_hash(normalise_options({"dpi": 150}, s)) == options_hash(normalise_options(None, s))
    for bad in ({"pages": "3-1"}, {"pages": "x"}, {"dpi": 5}, {"tables": "rows"}, {"colour": True}, {"engine": "auto"}):
        with pytest.raises(ValueError):
            normalise_options(bad, s)


def test_log_lines_carry_job_and_page(caplog):
    import logging

    with caplog.at_level(logging.INFO, logger="worker.queue.tasks"):
        job_log("a" * 32, [3]).info("hello %d", 1)
        job_log("b" * 32, [4, 5]).info("range")
        job_log("c" * 32).info("document")
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        f"[job={'a' * 32} page=3] hello 1",
        f"[job={'b' * 32} page=4-5] range",
        f"[job={'c' * 32}] document",
    ]
    assert caplog.records[0].job_id == "a" * 32 and caplog.records[0].page == "3"
    assert page_task_id("d" * 32, [7, 8]) == f"{'d' * 32}.p0007"


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    server = RedisServer(tmp_path_factory.mktemp("state-redis")).start()
    yield server.url(0)
    server.stop()


@pytest.fixture(scope="module")
def state(redis_url):
    return JobState(redis_client(redis_url), "t", 600)


def new_job(state: JobState, job_id: str, pages: list[int]) -> None:
    state.create(
        job_id, {"job_id": job_id, "status": "queued", "pages_done": 0, "pages_total": 0, "options": {"dpi": 100}}
    )
    assert state.start(job_id, pages, len(pages), "pdf")


def test_pages_are_counted_once_and_one_task_finalises(state):
    job_id = "1" * 32
    new_job(state, job_id, [1, 2, 3])
    job = state.get(job_id)
    assert job["status"] == "running" and job["pages_total"] == 3 and job["page_list"] == [1, 2, 3]
    assert job["options"] == {"dpi": 100}
    assert not state.start(job_id, [1, 2, 3], 3, "pdf")  # a re-delivered document task: no reset
    assert state.mark_done(job_id, 1, {"state": "done"}, failed=False) == (1, 1, 3)
    assert state.mark_done(job_id, 1, {"state": "done"}, failed=False) == (0, 1, 3)  # a re-run
    # pages 2 and 3 finishing at the same moment in many processes: each counted once
    results: list[tuple[int, int, int]] = []

    def finish(page: int) -> None:
        results.append(state.mark_done(job_id, page, {"state": "failed", "error": "x"}, failed=True))

    threads = [threading.Thread(target=finish, args=(p,)) for p in (2, 3) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r[0] for r in results).count(1) == 2 and max(r[1] for r in results) == 3
    assert state.get(job_id)["pages_done"] == 3 and state.get(job_id)["pages_failed"] == 2
    assert state.done_pages(job_id) == {1, 2, 3}
    assert state.pages(job_id)[2] == {"state": "failed", "error": "x", "attempts": 0}
    # exactly one finaliser; the same task id may come back (a retry or redelivery of it)
    claims = [state.claim_final(job_id, f"task-{i}", 60) for i in range(5)]
    assert claims == [True, False, False, False, False] and state.claim_final(job_id, "task-0", 60)
    state.page_info(job_id, 1, {"state": "running"})  # late progress never overwrites a done page
    assert state.pages(job_id)[1]["state"] == "done"


def test_state_transitions_and_deduplication(state):
    job_id, other = "2" * 32, "3" * 32
    new_job(state, job_id, [1])
    assert not state.transition(job_id, {"queued"}, "failed")
    assert state.transition(job_id, {"queued", "running"}, "complete", tables=4)
    assert not state.transition(job_id, {"queued", "running"}, "failed")  # terminal stays terminal
    assert state.get(job_id)["status"] == "complete" and state.get(job_id)["tables"] == 4
    assert state.count_attempts(job_id, [1, 2]) == {1: 1, 2: 1}
    assert state.count_attempts(job_id, [1]) == {1: 2}
    assert state.remember("ab" * 32, "h1", job_id, replace=False) == job_id
    assert state.remember("ab" * 32, "h1", other, replace=False) == job_id
    assert state.remember("ab" * 32, "h1", other, replace=True) == other
    assert state.find_duplicate("ab" * 32, "h1") == other
    ttl = state.r.ttl(state.key(job_id))
    assert 0 < ttl <= 600
    with pytest.raises(ValueError):
        state.key("../../etc")
    assert state.get("4" * 32) is None


def test_a_task_killed_at_its_time_limit_fails_its_page_and_the_job_still_ends(redis_url, tmp_path, monkeypatch):
    """The worker's main process reports a hard time limit through on_failure (the message is
    acknowledged, so nothing else would end the page): the page fails, the manifest is written."""
    from billiard.exceptions import WorkerLostError
    from celery.exceptions import TimeLimitExceeded

    from worker.outputs import page_key
    from worker.queue import runtime as runtime_module
    from worker.queue.finish import finish_page, job_manifest_key
    from worker.queue.runtime import Runtime
    from worker.queue.tasks import document_task, page_task

    rt = Runtime(settings(broker_url=redis_url, storage_url=str(tmp_path / "store"), job_key_prefix="hard"))
    monkeypatch.setattr(runtime_module, "_runtime", rt)
    job_id, other = "5" * 32, "6" * 32
    for jid in (job_id, other):
        rt.state.create(
            jid,
            {
                "job_id": jid,
                "doc_id": "d1",
                "sha256": "ab" * 32,
                "source": "x.pdf",
                "options": {"dpi": 100, "pages": None, "tables": "detect"},
                "status": "queued",
                "pages_done": 0,
                "created_ts": "1700000000.0",
            },
        )
    rt.state.start(job_id, [1, 2], 2, "pdf")
    rt.storage.put_json(
        page_key("d1", 1),
        {
            "page": 1,
            "tables": [
                {
                    "table_id": "p0001-t01",
                    "page": 1,
                    "bbox": [10.0, 10.0, 300.0, 200.0],
                    "n_rows": 3,
                    "n_cols": 2,
                    "confidence": 0.9,
                    "text_source": "ocr",
                    "is_complex": False,
                    "needs_vision": False,
                    "score": 0,
                    "reasons": [],
                    "files": {"json": "d1/tables/p0001-t01.json"},
                }
            ],
            "errors": [],
            "timings": {"render": 0.5},
            "job_id": job_id,
        },
    )
    finish_page(rt, job_id, 1, worker="w1@test", tables=1, seconds=0.5)
    page_task.on_failure(WorkerLostError("killed"), f"{job_id}.p0002", (job_id, [2]), {}, None)
    assert rt.state.get(job_id)["status"] == "running"  # requeued by Celery: nothing to record
    page_task.on_failure(TimeLimitExceeded(60), f"{job_id}.p0002", (job_id, [2]), {}, None)
    job = rt.state.get(job_id)
    assert job["status"] == "partial" and job["pages_failed"] == 1 and "hard time limit" in job["reason"]
    manifest = rt.storage.get_json(job_manifest_key("d1", job_id))
    assert manifest == rt.storage.get_json("d1/manifest.json")
    assert manifest["status"] == "partial" and manifest["pages_done"] == [1] and manifest["job_id"] == job_id
    assert [t["table_id"] for t in manifest["tables"]] == ["p0001-t01"]
    assert manifest["errors"] == [{"page": 2, "reason": job["reason"]}]
    assert manifest["timings"] == {"render": 0.5}
    document_task.on_failure(TimeLimitExceeded(60), f"{other}.doc", (other,), {}, None)
    assert rt.state.get(other)["status"] == "failed"
    assert rt.storage.get_json(job_manifest_key("d1", other))["errors"][0]["reason"].startswith("task exceeded")
