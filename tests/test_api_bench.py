"""A small `tablesight bench api` as CI runs it: real redis-server, worker and `tablesight serve`
processes on loopback, three clients uploading small and large documents, the API killed and
restarted and a worker killed mid-run; nothing may be lost or done twice, and the API's memory
must not grow with the uploads in flight (they stream to storage)."""

from __future__ import annotations

import pytest

from worker.devtools.api_bench import ApiBenchOptions, format_api_report, run_api_bench

pytestmark = pytest.mark.slow


def test_small_api_bench_loses_nothing_through_a_worker_kill_and_an_api_restart():
    options = ApiBenchOptions(
        clients=(4,), docs_per_client=2, large_every=2, large_mb=3.0, workers=1, work="stand-in", deadline=300
    )
    report = run_api_bench(options)
    print(format_api_report(report))
    [run] = report["runs"]
    assert run["documents"] == 8 and run["large_documents"] == 4 and run["large_mb"] > 2.5
    assert run["documents_lost"] == 0 and run["documents_duplicated"] == 0 and run["uploads_failed"] == 0, run
    assert len(run["faults"]) == 2 and "API SIGKILL" in run["faults"][0] and "worker" in run["faults"][1]
    assert run["latency_ms"]["upload"]["n"] >= 8 and run["requests_per_second"] > 0
    rss = run["api_rss_mib"]
    # four 3 MB uploads at once: a buffering server would hold them; a streaming one barely moves
    assert 0 < rss["idle"] and rss["peak_during_uploads"] - rss["idle"] < 40, rss
