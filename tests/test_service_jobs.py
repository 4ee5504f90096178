"""Job control over HTTP against the real stack (redis-server, a Celery worker with the embedded
engine, `tablesight serve`), on local storage and on S3 (moto server): cancel (queued, running,
keep or remove the finished pages), signed callbacks with retries and the SSRF allow-list,
server-sent events, batch submission, and `tablesight cancel`."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx
import pytest
from queue_fixtures import REPO, wait_for
from service_fixtures import SECRET, start_stack

from worker.devtools.samples import financial_table, key_figures_table, make_born_digital_pdf, staffing_table
from worker.queue.callbacks import CallbackRefused, check_url, resolve_checked, verify

pytestmark = pytest.mark.slow
SPECS = [financial_table, staffing_table, key_figures_table]


def pdf_bytes(tmp_path, pages: int, seed: int) -> bytes:
    """A born-digital PDF of `pages` pages (one table each); the seed makes it a new document."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for i in range(pages):
        path = tmp_path / f"s{seed}-{i}.pdf"
        make_born_digital_pdf(path, SPECS[(seed + i) % 3](), title=f"Doc {seed} page {i + 1}")
        writer.add_page(PdfReader(path).pages[0])
    out = tmp_path / f"doc-{seed}.pdf"
    with out.open("wb") as fh:
        writer.write(fh)
    return out.read_bytes()


@pytest.fixture(scope="module", params=["local", "s3"])
def stack(request, tmp_path_factory, tiny_models):
    root = tmp_path_factory.mktemp(f"svc-jobs-{request.param}")
    # four pages per task and a second per page: a running task is caught between pages
    s = start_stack(request.param, root, tiny_models, pages_per_task=4, test_page_delay=1.0)
    yield s
    s.stop()


def wait_status(c: httpx.Client, job_id: str, want: set[str], timeout: float = 120) -> dict:
    return wait_for(lambda: (st := c.get(f"/v1/jobs/{job_id}").json())["status"] in want and st, timeout, 0.1)


def submit(c: httpx.Client, data: bytes, name: str, **fields: str) -> dict:
    r = c.post("/v1/jobs", data=fields, files={"file": (name, data)})
    assert r.status_code in (200, 202), r.text
    return r.json()["jobs"][0]


def test_events_then_signed_callback_after_retries(stack, tmp_path):
    data = pdf_bytes(tmp_path, 2, seed=1)
    with stack.http.client() as c:
        job = submit(c, data, "two.pdf", callback_url=stack.receiver.url("/flaky"))
        events = []
        with c.stream("GET", f"/v1/jobs/{job['job_id']}/events", timeout=120) as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            kind = None
            for line in r.iter_lines():
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    events.append((kind, json.loads(line[6:])))
        assert events[-1][0] == "end" and events[-1][1]["status"] == "complete", events[-3:]
        done_pages = {e["page"] for k, e in events if k == "page" and e["page_state"] == "done"}
        assert done_pages == {1, 2}
        assert events[-1][1]["pages_done"] == 2 and all(e["job_id"] == job["job_id"] for _, e in events)
        # the callback: 500, 500, then 200; the same idempotency key each time, signed
        calls = wait_for(lambda: len(stack.receiver.at("/flaky")) >= 3 and stack.receiver.at("/flaky"), 60, 0.1)
        assert len({r.headers["idempotency-key"] for r in calls}) == 1
        assert calls[0].headers["idempotency-key"] == f"{job['job_id']}.complete"
        last = calls[-1]
        assert verify(SECRET, last.headers["x-tablesight-timestamp"], last.body, last.headers["x-tablesight-signature"])
        assert not verify(
            "other-secret", last.headers["x-tablesight-timestamp"], last.body, last.headers["x-tablesight-signature"]
        )
        body = last.json()
        assert body["status"] == "complete" and body["job_id"] == job["job_id"] and body["tables"] == 2
        st = wait_for(
            lambda: (s := c.get(f"/v1/jobs/{job['job_id']}").json())["callback"]["state"] == "delivered" and s, 30
        )
        assert st["callback"]["attempts"] == 3 and st["callback"]["url"].endswith("/flaky")
        schema = c.get("/openapi.json").json()
        assert "text/event-stream" in json.dumps(schema["paths"]["/v1/jobs/{job_id}/events"])
        assert schema["paths"]["/v1/jobs/{job_id}"]["delete"]["responses"]["200"]["content"]["application/json"]


def test_callback_allow_list_redirects_and_refusals(stack, tmp_path):
    with stack.http.client() as c:
        for url, message in [
            ("http://example.com/hook", "not in TABLESIGHT_API_CALLBACK_HOSTS"),
            ("ftp://127.0.0.1/hook", "http:// or https://"),
            ("http://user:pw@127.0.0.1/hook", "credentials"),
            ("http://169.254.169.254/latest/meta-data", "not in TABLESIGHT_API_CALLBACK_HOSTS"),
        ]:
            r = c.post("/v1/jobs", data={"callback_url": url}, files={"file": ("x.pdf", pdf_bytes(tmp_path, 1, 50))})
            assert r.status_code == 422 and message in r.json()["error"], (url, r.text)
        # a redirect is not followed: the callback fails, the target is never called
        job = submit(c, pdf_bytes(tmp_path, 1, seed=2), "one.pdf", callback_url=stack.receiver.url("/redirect"))
        st = wait_for(
            lambda: (s := c.get(f"/v1/jobs/{job['job_id']}").json()).get("callback", {}).get("state") == "failed" and s,
            120,
            0.2,
        )
        assert "redirects are not followed" in st["callback"]["last_error"]
        assert stack.receiver.at("/redirect") and not stack.receiver.at("/ok-after-redirect")
    # a name that resolves to loopback is refused unless the address itself is listed
    assert check_url("http://localhost:1/x", "localhost")[1] == "localhost"
    with pytest.raises(CallbackRefused, match="non-public address 127.0.0.1"):
        resolve_checked("localhost", 1, "localhost")
    assert resolve_checked("localhost", 1, "localhost,127.0.0.0/8") == "127.0.0.1"
    with pytest.raises(CallbackRefused, match="non-public"):
        resolve_checked("10.1.2.3", 80, "127.0.0.1")
    assert resolve_checked("10.1.2.3", 80, "10.0.0.0/8") == "10.1.2.3"


def test_cancel_running_job_keeps_or_removes_finished_pages(stack, tmp_path):
    with stack.http.client() as c:
        for remove in (False, True):
            job = submit(c, pdf_bytes(tmp_path, 4, seed=10 + remove), f"four-{remove}.pdf")
            job_id, doc_id = job["job_id"], job["doc_id"]
            # the page task has started (it sleeps a second per page first: TEST_PAGE_DELAY)
            wait_for(lambda j=job_id: c.get(f"/v1/jobs/{j}").json()["pages"].get("1", {}).get("state") == "running", 60)
            r = c.delete(f"/v1/jobs/{job_id}", params={"remove_pages": str(remove).lower()})
            assert r.status_code == 200 and r.json()["status"] == "cancelled", r.text
            # the running task stops after the page it is on: one of four pages done
            wait_for(lambda j=job_id: c.get(f"/v1/jobs/{j}").json()["pages_done"] >= 1, 60, 0.1)
            time.sleep(2)
            st = c.get(f"/v1/jobs/{job_id}").json()
            assert st["status"] == "cancelled" and st["reason"] == "cancelled by request"
            assert st["pages_done"] == 1, st
            manifest = c.get(f"/v1/jobs/{job_id}/result").json()
            assert manifest["status"] == "cancelled" and manifest["job_id"] == job_id
            if remove:
                # the task finishes the pages its other lane had in flight, then removes them all
                assert manifest["tables"] == []
                wait_for(lambda d=doc_id: not stack.storage.list(f"{d}/pages"), 60, 0.2, "pages removed")
                assert not stack.storage.list(f"{doc_id}/tables")  # a page's tables go before its record
            else:
                # kept: each finished page's tables are listed and their files are there
                for t in manifest["tables"]:
                    assert stack.storage.exists(t["files"]["json"])
            again = c.delete(f"/v1/jobs/{job_id}")
            assert again.status_code == 200 and again.json()["status"] == "cancelled"
        # a finished job cannot be cancelled; an unknown one is 404
        done = submit(c, pdf_bytes(tmp_path, 1, seed=20), "done.pdf")
        wait_status(c, done["job_id"], {"complete"})
        r = c.delete(f"/v1/jobs/{done['job_id']}")
        assert r.status_code == 409 and "already ended: complete" in r.json()["error"]
        assert c.delete("/v1/jobs/0123456789abcdef0123456789abcdef").status_code == 404
        # the same document submitted after a cancel runs again (a cancelled job is not reused)
        again = submit(c, pdf_bytes(tmp_path, 4, seed=10), "four-again.pdf")
        assert again["job_id"] != job_id


def test_batch_submission_and_cancel_of_a_queued_job_by_cli(stack, tmp_path):
    with stack.http.client() as c:
        files = [("file", (f"b{i}.pdf", pdf_bytes(tmp_path, 2, seed=30 + i))) for i in range(3)]
        r = c.post("/v1/jobs", files=files, data={"callback_url": stack.receiver.url("/ok")})
        assert r.status_code == 202 and len(r.json()["jobs"]) == 3
        first, _, last = r.json()["jobs"]
        assert [j["source"] for j in r.json()["jobs"]] == ["b0.pdf", "b1.pdf", "b2.pdf"]
        wait_status(c, first["job_id"], {"running"})
        # the third waits behind the first on the one worker: cancel it from the command line
        proc = subprocess.run(
            [sys.executable, "-m", "worker.cli.main", "cancel", last["job_id"]],
            cwd=REPO,
            env=stack.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["status"] == "cancelled"
        for j in r.json()["jobs"][:2]:
            wait_status(c, j["job_id"], {"complete"}, timeout=180)
        st = c.get(f"/v1/jobs/{last['job_id']}").json()
        assert st["status"] == "cancelled" and st["pages_done"] == 0
        assert not stack.storage.list(f"{last['doc_id']}/pages")  # never ran
        # every job of the batch called back once, with its own status
        calls = wait_for(lambda: len(stack.receiver.at("/ok")) >= 3 and stack.receiver.at("/ok"), 60, 0.1)
        got = {call.json()["job_id"]: call.json()["status"] for call in calls}
        middle = r.json()["jobs"][1]["job_id"]
        assert got == {first["job_id"]: "complete", middle: "complete", last["job_id"]: "cancelled"}
