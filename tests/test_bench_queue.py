"""`tablesight bench queue` at a tiny size: real redis-server, real worker processes with the
bench's stand-in pages. It asserts what the bench exists to show (nothing lost, nothing
finalised twice, every job key expires) and that every figure is there; never a speed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worker.cli.main import main
from worker.settings import Settings

pytestmark = pytest.mark.slow
DOCS, PAGES = 3, 2


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("bench-queue") / "report.json"
    args = ["bench", "queue", "--docs", str(DOCS), "--pages", str(PAGES), "--workers", "1,2"]
    assert main([*args, "--no-expiry", "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_nothing_lost_and_nothing_finalised_twice(report: dict) -> None:
    assert [r["workers"] for r in report["runs"]] == [1, 2]
    for r in report["runs"]:
        c = r["counts"]
        assert c["jobs"] == c["jobs_complete"] == DOCS
        assert c["pages_enqueued"] == c["pages_done"] == DOCS * PAGES and c["pages_lost"] == 0
        assert c["finalisations"] == DOCS and c["duplicate_finalisations"] == 0 and c["jobs_not_finalised"] == 0
        assert c["page_task_runs"] == DOCS * PAGES and c["page_tasks_run_twice"] == 0
        assert r["redis"]["job_keys_after"] > 0 and r["redis"]["job_keys_without_ttl"] == 0


def test_every_figure_is_there(report: dict) -> None:
    for r in report["runs"]:
        assert r["pages"] == DOCS * PAGES and r["pages_per_s"] > 0 and r["wall_s"] > 0
        assert 0 < r["latency_s"]["p50"] <= r["latency_s"]["p99"] <= r["latency_s"]["max"]
        red = r["redis"]
        assert red["commands_per_page"] > 0 and red["net_input_bytes_per_page"] > 0
        assert red["net_output_bytes_per_page"] > 0 and red["cpu_ms_per_page"] >= 0
        assert red["memory_per_job_bytes"] != 0 and red["backlog_bytes_per_page_task"] > 0
        assert {"evalsha", "brpop", "lpush"} <= set(red["by_command_per_page"])  # scripts, consume, publish
        assert r["worker_peak_rss_mib"]["main"] > 0 and r["worker_peak_rss_mib"]["child"] > 0
    assert report["config"]["command"].startswith("tablesight bench queue --docs 3 --pages 2")


def test_the_table_and_bad_arguments(capsys: pytest.CaptureFixture[str], report: dict) -> None:
    from worker.devtools.queue_bench import format_queue_report

    table = format_queue_report(report)
    assert "pages/s" in table and "dup fin" in table and len(table.splitlines()) >= 4
    assert main(["bench", "queue", "--workers", "0"]) == 2
    assert main(["bench", "queue", "--workers", "one"]) == 2


def test_the_stand_in_is_off_unless_asked_for(tmp_path: Path) -> None:
    from worker.settings import DevHooks

    assert DevHooks().bench_stand_in_pages is False and not hasattr(Settings(_env_file=None), "bench_stand_in_pages")
    from worker.devtools.queue_bench import BENCH_SETTINGS

    assert BENCH_SETTINGS["bench_stand_in_pages"] == 1  # only the bench turns it on, for its own workers
