"""Jobs through real Celery workers and a real redis-server, local-folder storage: multi-page
documents with progress, deduplication, the CLI, bad input, ten documents on two workers."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from helpers import bad_inputs
from queue_fixtures import (
    REPO,
    Cluster,
    Worker,
    progress_log,
    sample_pdf,
    settings_from_env,
    start_cluster,
    wait_for,
)

from worker.queue.client import JobClient, JobNotFinished, JobNotFound

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, tiny_models) -> Iterator[Cluster]:
    # the client's own file limit is the default: the workers' smaller one is tested through the queue
    with start_cluster(
        tmp_path_factory.mktemp("queue-jobs"),
        tiny_models,
        max_file_bytes=2_000_000,
        max_page_pixels=20_000_000,
        client_settings={"max_file_bytes": 500 * 1024 * 1024},
    ) as cluster:
        yield cluster


def test_multi_page_pdf_with_progress_and_a_whole_manifest(cluster, tmp_path):
    client: JobClient = cluster.client
    pdf = sample_pdf(tmp_path / "three.pdf", 3, seed=1)
    t0 = time.monotonic()
    job_id = client.enqueue(pdf)
    with pytest.raises(JobNotFinished):
        client.result(job_id)
    final, seen = progress_log(client, job_id, timeout=90)
    print(f"3 pages in {time.monotonic() - t0:.1f} s (first task loads the models)")
    assert final["status"] == "complete", final
    # progress was visible while it ran: pages counted one by one, a page seen running
    done_counts = [st["pages_done"] for st in seen if st["status"] == "running"]
    assert any(0 < n < 3 for n in done_counts), done_counts
    assert any(info["state"] == "running" for st in seen for info in st["pages"].values())
    assert final["pages_total"] == 3 and final["pages_done"] == 3
    assert all(info["state"] == "done" and info["attempts"] == 1 for info in final["pages"].values())

    manifest = client.result(job_id)
    assert manifest == client.wait(job_id, timeout=1)
    assert manifest["status"] == "complete" and manifest["job_id"] == job_id
    assert manifest["pages"] == manifest["pages_done"] == [1, 2, 3]
    assert [t["table_id"] for t in manifest["tables"]] == ["p0001-t01", "p0002-t01", "p0003-t01"]
    assert manifest["source"] == "three.pdf" and manifest["errors"] == []
    assert {"render", "detection", "structure", "ocr", "storage"} <= set(manifest["timings"])
    doc = cluster.store / manifest["doc_id"]
    assert json.loads((doc / "manifest.json").read_text()) == manifest
    for t in manifest["tables"]:
        for key in t["files"].values():
            assert (cluster.store / key).is_file()
    assert (doc / "source" / "input.bin").read_bytes() == pdf.read_bytes()
    # every line logged in a task names its task: `<job id>.doc` or `<job id>.pNNNN` (job and page)
    lines = [line for line in cluster.workers[0].text().splitlines() if "ForkPoolWorker" in line]
    ours = [line for line in lines if job_id in line]
    assert any(f"tablesight.pages[{job_id}.p0002] [job={job_id} page=2] 1 table(s)" in line for line in ours)
    assert all(" INFO " not in line or "tablesight." in line for line in lines), lines
    # the same document and options: the same job, no new work
    assert client.enqueue(pdf) == job_id
    assert client.enqueue(pdf.read_bytes(), name="again.pdf") == job_id


class _Killed(BaseException):
    """The enqueuing process dying (SIGKILL): nothing after this point of `enqueue` runs."""


def test_a_job_whose_enqueuer_died_before_sending_is_sent_by_its_duplicate(cluster, tmp_path, monkeypatch):
    """An API killed between recording a job and sending its task left a queued job that
    nothing would ever run, and every retry of the upload was answered with it: lost."""
    client: JobClient = cluster.client
    pdf = sample_pdf(tmp_path / "orphan.pdf", 1, seed=7)

    sent: list[str] = []

    def die(name: str, args: tuple[str], **kwargs: object) -> None:
        sent.append(args[0])
        raise _Killed

    with monkeypatch.context() as m:
        m.setattr(client.app, "send_task", die)
        with pytest.raises(_Killed):
            client.enqueue(pdf)
    [orphan] = sent
    assert client.status(orphan)["status"] == "queued"
    assert client.enqueue(pdf) == orphan  # the retry finds the job, and sends it
    manifest = client.wait(orphan, timeout=90)
    assert manifest["status"] == "complete" and [t["table_id"] for t in manifest["tables"]] == ["p0001-t01"]
    assert client.enqueue(pdf) == orphan  # sent once: a later duplicate sends nothing
    assert client.status(orphan)["pages"]["1"]["attempts"] == 1


def test_force_reruns_and_other_options_are_another_job(cluster, tmp_path):
    client: JobClient = cluster.client
    pdf = sample_pdf(tmp_path / "two.pdf", 2, seed=2)
    first = client.enqueue(pdf, {"pages": "2"})
    assert client.wait(first, timeout=60)["pages"] == [2]
    forced = client.enqueue(pdf, {"pages": "2"}, force=True)
    assert forced != first
    manifest = client.wait(forced, timeout=60)
    assert manifest["status"] == "complete" and manifest["job_id"] == forced
    assert client.status(forced)["pages"]["2"]["reused"] is False  # forced: done again, not reused
    assert client.enqueue(pdf, {"pages": "2"}) == forced  # the newest job answers from now on
    both = client.enqueue(pdf, {"pages": "1-2"})
    assert both not in (first, forced)
    st = client.status(both)
    manifest = client.wait(both, timeout=60)
    assert manifest["pages"] == [1, 2] and manifest["status"] == "complete"
    pages = client.status(both)["pages"]
    assert pages["2"]["reused"] is True and pages["1"]["reused"] is False  # page 2's record was this options'
    assert st["options"] == {"dpi": 100, "pages": "1-2", "tables": "detect", "engine": "tatr"}
    with pytest.raises(JobNotFound):
        client.status("0" * 32)


def test_bad_input_fails_fast_with_the_reason_and_the_worker_keeps_serving(cluster, tmp_path):
    client: JobClient = cluster.client
    bad = bad_inputs(tmp_path / "bad", "corrupt", "encrypted", "empty", "not a pdf", "huge page", "oversized")
    jobs = {name: (client.enqueue(b.path), time.monotonic()) for name, b in bad.items()}
    good = client.enqueue(sample_pdf(tmp_path / "good.pdf", 1, seed=3))
    for name, (job_id, t0) in jobs.items():
        st = wait_for(
            lambda job_id=job_id: (s := client.status(job_id))["status"] in ("failed", "complete") and s,
            15,
            what=f"{name} to fail",
        )
        assert st["status"] == "failed", (name, st)
        assert time.monotonic() - t0 < 15
        assert bad[name].reason in st["reason"].lower(), (name, st["reason"])
        manifest = client.result(job_id)
        assert manifest["status"] == "failed" and bad[name].reason in manifest["errors"][0]["reason"].lower()
        # no retry storm: the document task ran once, no page task was sent
        log = cluster.workers[0].text()
        assert log.count(f"tablesight.document[{job_id}.doc] received") == 1, name
        assert f"{job_id}.p0" not in log
    assert client.wait(good, timeout=60)["status"] == "complete"
    # the client refuses an input over its own limit without uploading it
    small = JobClient(client.settings.replace(**{"max_file_bytes": 1000}))
    refused = small.enqueue(sample_pdf(tmp_path / "refused.pdf", 1, seed=4))
    assert small.status(refused)["status"] == "failed"
    assert "over the limit" in small.result(refused)["errors"][0]["reason"]
    small.close()


def test_broken_models_fail_each_page_once_with_the_reason(cluster, tmp_path):
    # its own Redis database: its own queues and jobs, next to the healthy worker's
    env = {
        **cluster.env,
        "TABLESIGHT_BROKER_URL": cluster.server.url(1),
        "TABLESIGHT_STRUCTURE_MODEL": str(tmp_path / "no-such-model"),
    }
    worker = Worker("broken", env, cluster.root).start()
    cluster.workers.append(worker)
    client = JobClient(settings_from_env(env))
    job_id = client.enqueue(sample_pdf(tmp_path / "x.pdf", 2, seed=6))
    st = wait_for(
        lambda: (s := client.status(job_id))["status"] not in ("queued", "running") and s, 90, what="the job to end"
    )
    assert st["status"] == "failed" and st["pages_failed"] == 2
    assert [e["page"] for e in st["errors"]] == [1, 2]
    assert all("WeightsNotFound" in e["reason"] and "no-such-model" in e["reason"] for e in st["errors"])
    assert all(info["attempts"] == 1 for info in st["pages"].values())  # a set-up error is not retried
    manifest = client.result(job_id)
    assert manifest["status"] == "failed" and manifest["tables"] == [] and len(manifest["errors"]) == 2
    client.close()
    worker.kill()


def test_cli_enqueue_wait_status_result(cluster, tmp_path):
    env = cluster.env
    pdf = sample_pdf(tmp_path / "cli.pdf", 2, seed=5)
    cli = [sys.executable, "-m", "worker.cli.main"]
    proc = subprocess.run(
        [*cli, "enqueue", str(pdf), "--wait", "--timeout", "90"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    job_id = proc.stdout.strip()
    assert len(job_id) == 32 and "2 table(s) on 2 page(s)" in proc.stderr
    status = subprocess.run([*cli, "status", job_id], cwd=REPO, env=env, capture_output=True, text=True)
    assert status.returncode == 0 and json.loads(status.stdout)["status"] == "complete"
    result = subprocess.run([*cli, "result", job_id], cwd=REPO, env=env, capture_output=True, text=True)
    assert result.returncode == 0 and json.loads(result.stdout)["pages_done"] == [1, 2]
    missing = subprocess.run([*cli, "status", "f" * 32], cwd=REPO, env=env, capture_output=True, text=True)
    assert missing.returncode == 1 and "no job" in missing.stderr
    usage = subprocess.run(
        [*cli, "enqueue", str(pdf), "--pages", "3-1"], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert usage.returncode == 2
    bad = tmp_path / "bad.pdf"
    bad.write_text("not a pdf")
    mixed = subprocess.run(
        [*cli, "enqueue", str(bad), str(tmp_path / "missing.pdf"), "--wait", "--timeout", "60"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert mixed.returncode == 1 and len(mixed.stdout.split()) == 1
    assert "not a PDF" in mixed.stderr and "missing.pdf" in mixed.stderr


def test_ten_documents_on_two_workers_none_twice(cluster, tmp_path):
    client: JobClient = cluster.client
    cluster.workers.append(Worker("w2", cluster.env, cluster.root).start())
    pdfs = [sample_pdf(tmp_path / f"doc{i}.pdf", 2, seed=10 + i) for i in range(10)]
    t0 = time.monotonic()
    jobs = [client.enqueue(p) for p in pdfs]
    assert len(set(jobs)) == 10
    manifests = [client.wait(j, timeout=180) for j in jobs]
    elapsed = time.monotonic() - t0
    print(f"10 documents, 20 pages on two workers in {elapsed:.1f} s")
    by_worker: dict[str, int] = {}
    for job_id, manifest in zip(jobs, manifests):
        assert manifest["status"] == "complete" and manifest["pages_done"] == [1, 2]
        assert [t["table_id"] for t in manifest["tables"]] == ["p0001-t01", "p0002-t01"]
        for info in client.status(job_id)["pages"].values():
            assert info["attempts"] == 1 and info["reused"] is False  # every page ran exactly once
            by_worker[info["worker"]] = by_worker.get(info["worker"], 0) + 1
    assert sum(by_worker.values()) == 20
    assert set(by_worker) == {"w1@test", "w2@test"}, by_worker
    logs = "".join(w.text() for w in cluster.workers)
    for job_id in jobs:
        for page in (1, 2):
            assert logs.count(f"tablesight.pages[{job_id}.p{page:04d}] received") == 1


def test_the_engine_is_a_job_option_and_runs_for_every_page(cluster, tmp_path):
    """A tatr-configured fleet runs an embedded job with the embedded models (pinned by hash),
    and the same document with the other engine is another job, never a reused one."""
    from models.embedded.weights import TABLE_MODELS, default_dir, fetch

    fetch(default_dir(None))  # what .ci/setup leaves; the workers find them the same way
    client: JobClient = cluster.client
    pdf = sample_pdf(tmp_path / "engine.pdf", 2, seed=5)
    tatr = client.enqueue(pdf)
    embedded = client.enqueue(pdf, {"engine": "embedded"})
    assert embedded != tatr
    manifest = client.wait(embedded, timeout=120)
    assert manifest["status"] == "complete", manifest["errors"]
    assert manifest["options"]["engine"] == "embedded"
    pinned = {m.name: m.sha256 for m in TABLE_MODELS}
    assert {manifest["models"][r]["sha256"] for r in ("detection", "structure")} == set(pinned.values())
    assert all(not info.get("reused") for info in client.status(embedded)["pages"].values())
    assert client.wait(tatr, timeout=120)["options"]["engine"] == "tatr"
