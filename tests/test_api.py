"""`tablesight serve` end to end: a real redis-server, a real worker (tiny models) on the docs,
pages and vision queues, the loopback OpenAI-compatible stub, local storage, and uvicorn in a
subprocess spoken to over HTTP. Every route, auth, the streaming upload limit, id checks, bad
files, concurrent duplicate uploads, the review page, and one real headless Chromium."""

from __future__ import annotations

import json
import select
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from api_fixtures import ApiServer
from PIL import Image
from queue_fixtures import REPO, RedisServer, Worker, sample_pdf, wait_for, worker_env
from vision_fixtures import GOOD, ChatServer

pytestmark = pytest.mark.slow

TOKENS = ("tok-one-0123456789", "tok-two-9876543210")
LIMIT = 2 * 1024 * 1024  # TABLESIGHT_API_MAX_UPLOAD_BYTES in these tests
HOSTILE = GOOD.replace("<td>", '<td onclick="steal()">').replace("</table>", "<script>x()</script></table>")


@pytest.fixture(scope="module")
def api(tmp_path_factory, tiny_models):
    root = tmp_path_factory.mktemp("api")
    server = RedisServer(root / "redis").start()
    with ChatServer(default=("text", f"```html\n{HOSTILE}\n```")) as vision:
        env = worker_env(
            broker_url=server.url(0),
            storage_url=str(root / "store"),
            models=tiny_models,
            work_dir=root / "work",
            vision_backend="openai",
            vision_url=vision.url,
            vision_model="served-vlm",
            vision_retries=0,
        )
        worker = Worker("api1", env, root, queues="docs,pages,vision").start()
        api_env = {
            **env,
            "TABLESIGHT_API_TOKENS": ",".join(TOKENS),
            "TABLESIGHT_API_MAX_UPLOAD_BYTES": str(LIMIT),
            "TABLESIGHT_LOG_LEVEL": "INFO",
        }
        http = ApiServer(api_env, root, token=TOKENS[0]).start()
        state = {"http": http, "store": root / "store", "vision": vision, "root": root, "env": api_env}
        yield state
        http.stop()
        worker.kill()
    server.stop()


@pytest.fixture(scope="module")
def processed(api, tmp_path_factory):
    """One sample document uploaded with ?wait= and finished."""
    pdf = sample_pdf(tmp_path_factory.mktemp("api-in") / "report.pdf", 1, seed=5)
    with api["http"].client() as c:
        # tables=page: the crop is the whole page, so the review page shows a real scan (the tiny
        # random detector's box often lands on blank paper)
        r = c.post(
            "/v1/jobs", params={"wait": 120}, data={"tables": "page"}, files={"file": ("report.pdf", pdf.read_bytes())}
        )
    assert r.status_code == 200, r.text
    [job] = r.json()["jobs"]
    assert job["status"] == "complete", job
    return {"job": job, "pdf": pdf, "doc_id": job["doc_id"], "job_id": job["job_id"]}


def test_jobs_tables_chunks_health_and_docs(api, processed):
    job_id, doc_id = processed["job_id"], processed["doc_id"]
    assert processed["job"]["links"]["review"] == f"/ui/documents/{doc_id}"
    with api["http"].client() as c:
        st = c.get(f"/v1/jobs/{job_id}").json()
        assert st["status"] == "complete" and st["pages_done"] == st["pages_total"] == 1
        assert st["pages"]["1"]["state"] and "manifest" not in st
        manifest = c.get(f"/v1/jobs/{job_id}/result").json()
        assert manifest["doc_id"] == doc_id and manifest["status"] == "complete" and manifest["tables"]
        assert c.get(f"/v1/documents/{doc_id}").json()["tables"] == manifest["tables"]
        tid = manifest["tables"][0]["table_id"]
        types = {"html": "text/html", "png": "image/png", "json": "application/json", "md": "text/markdown"}
        for fmt, ctype in types.items():
            r = c.get(f"/v1/documents/{doc_id}/tables/{tid}.{fmt}")
            assert r.status_code == 200 and r.headers["content-type"].startswith(ctype), (fmt, r.headers)
            stored = (api["store"] / doc_id / "tables" / f"{tid}.{fmt}").read_bytes()
            assert r.content == stored
            etag = r.headers["etag"]
            assert r.headers["cache-control"] == "private, no-cache"  # a re-extraction rewrites the key
            again = c.get(f"/v1/documents/{doc_id}/tables/{tid}.{fmt}", headers={"If-None-Match": etag})
            assert again.status_code == 304 and not again.content
            pinned = c.get(f"/v1/documents/{doc_id}/tables/{tid}.{fmt}", params={"v": etag.strip('"')})
            assert "immutable" in pinned.headers["cache-control"] and pinned.content == stored
        assert "sandbox" in c.get(f"/v1/documents/{doc_id}/tables/{tid}.html").headers["content-security-policy"]
        chunks = c.get(f"/v1/documents/{doc_id}/chunks", params={"max_tokens": 64}).json()
        assert chunks["max_tokens"] == 64 and chunks["chunks"] and chunks["chunks"][0]["table_id"] == tid
        assert c.get(f"/v1/documents/{doc_id}/chunks", params={"max_tokens": 3}).status_code == 422
        ready = c.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["queues"]["docs"] == ["api1@test"] and ready.json()["queues"]["vision"] == ["api1@test"]
        assert c.get("/healthz").json() == {"status": "ok"}
        assert "swagger" in c.get("/docs").text.lower()
        paths = c.get("/openapi.json").json()["paths"]
        assert "/v1/jobs" in paths and "multipart/form-data" in json.dumps(paths["/v1/jobs"]["post"])
        # a second POST of the same file and options is the same job, finished: 200 at once
        r = c.post("/v1/jobs", data={"tables": "page"}, files={"file": ("again.pdf", processed["pdf"].read_bytes())})
        assert r.status_code == 200 and r.json()["jobs"][0]["job_id"] == job_id
    # request logs carry the job id
    assert f"GET /v1/jobs/{job_id} 200" in api["http"].text()
    assert "POST /v1/jobs 200" in api["http"].text() and f"job={job_id}" in api["http"].text()


def test_vision_read_over_http(api, processed):
    doc_id = processed["doc_id"]
    with api["http"].client() as c:
        tid = c.get(f"/v1/documents/{doc_id}").json()["tables"][0]["table_id"]
        url = f"/v1/documents/{doc_id}/tables/{tid}/read"
        assert c.get(url).status_code == 404  # nothing stored yet
        r = c.post(url)
        assert r.status_code == 202, r.text
        poll = r.json()["links"]["poll"]
        assert r.headers["location"] == poll
        body = wait_for(lambda: (b := c.get(poll).json())["status"] not in ("queued", "running") and b, 60, 0.2)
        assert body["status"] == "ok", body
        assert body["model"] == "served-vlm" and body["agreement"]["teds"] is not None
        assert 'colspan="2"' in body["html"] and "onclick" not in body["html"] and "script" not in body["html"]
        n = len(api["vision"].requests)
        stored = c.post(url)  # the stored read, no model call
        assert stored.status_code == 200 and stored.json()["stored"] is True
        assert stored.json()["read"]["html"] == body["html"] and len(api["vision"].requests) == n
        assert c.get(url).json()["status"] == "ok"
        forced = c.post(url, params={"force": "true"})
        assert forced.status_code == 202
        wait_for(lambda: c.get(forced.json()["links"]["poll"]).json()["status"] == "ok", 60, 0.2)
        assert len(api["vision"].requests) == n + 1
        unknown = c.get("/v1/reads/01234567-89ab-cdef-0123-456789abcdef")
        assert unknown.status_code == 404 and "no read" in unknown.json()["error"]
        missing = c.post(f"/v1/documents/{doc_id}/tables/p0042-t01/read")
        assert missing.status_code == 404 and "no table" in missing.json()["error"]


def test_auth_missing_wrong_second_token_and_cookie(api, processed):
    http = api["http"]
    job = f"/v1/jobs/{processed['job_id']}"
    with http.client(token=None) as c:
        r = c.get(job)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert r.json() == {"error": "missing bearer token: send Authorization: Bearer <token>"}
        assert c.get(job, headers={"Authorization": "Bearer nope"}).status_code == 401
        assert c.get(job, headers={"Authorization": f"Basic {TOKENS[0]}"}).status_code == 401
        assert c.post("/v1/jobs", files={"file": ("x.pdf", b"%PDF-1.4")}).status_code == 401
        assert c.get(job, headers={"Authorization": f"Bearer {TOKENS[1]}"}).status_code == 200
        assert c.get("/healthz").status_code == 200  # probes need no token
        assert c.get("/ui/").status_code == 303  # the page sends to its login form
        bad = c.post("/ui/login", data={"token": "nope", "next": "/ui/"})
        assert (
            bad.status_code == 401
            and "not valid" in bad.text
            and "tablesight_session" not in bad.headers.get("set-cookie", "")
        )
        ok = c.post("/ui/login", data={"token": TOKENS[0], "next": "https://evil.example/"})
        assert ok.status_code == 303 and ok.headers["location"] == "/ui/"  # no open redirect
        cookie = ok.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and TOKENS[0] not in cookie
        page = c.get(f"/ui/documents/{processed['doc_id']}")
        assert page.status_code == 200 and "default-src 'none'" in page.headers["content-security-policy"]
        assert c.get(job).status_code == 200  # the cookie works for the API's GETs too
        # a cookie alone cannot change anything: the page's CSRF header is needed
        tid = c.get(f"/v1/documents/{processed['doc_id']}").json()["tables"][0]["table_id"]
        read = f"/v1/documents/{processed['doc_id']}/tables/{tid}/read"
        r = c.post(read)
        assert r.status_code == 403 and "X-CSRF-Token" in r.json()["error"]
    # a write from a foreign site is refused even with a valid token
    with http.client() as c:
        r = c.post("/v1/jobs", headers={"Origin": "https://evil.example"}, files={"file": ("x.pdf", b"%PDF-")})
        assert r.status_code == 403 and "cross-site" in r.json()["error"]
        assert "access-control-allow-origin" not in c.get("/healthz", headers={"Origin": "https://a.b"}).headers


def test_oversized_upload_is_cut_off_mid_stream(api):
    http = api["http"]
    # declared too large: refused before any of the body is read
    with http.client() as c:
        r = c.post("/v1/jobs", content=b"x" * (LIMIT + 1), headers={"Content-Type": "multipart/form-data; boundary=b"})
        assert r.status_code == 413 and "TABLESIGHT_API_MAX_UPLOAD_BYTES" in r.json()["error"]
    # chunked, never ending: the answer comes while we are still sending
    sock = socket.create_connection(("127.0.0.1", http.port), timeout=30)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
    head = (
        f"POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1:{http.port}\r\nAuthorization: Bearer {TOKENS[0]}\r\n"
        "Content-Type: multipart/form-data; boundary=BOUNDARY\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode()
    part = b'--BOUNDARY\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\n\r\n%PDF-1.4\n'
    sock.sendall(head + b"%x\r\n%s\r\n" % (len(part), part))
    block = b"0" * 65536
    chunk = b"%x\r\n%s\r\n" % (len(block), block)
    sent, answered = 0, False
    while sent < 50 * LIMIT:
        if select.select([sock], [], [], 0)[0]:
            answered = True
            break
        try:
            sock.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            answered = True
            break
        sent += len(block)
    assert answered, f"no answer after {sent} bytes of a body over the {LIMIT}-byte limit"
    reply = b""
    while b"\r\n\r\n" not in reply:
        data = sock.recv(65536)
        if not data:
            break
        reply += data
    sock.close()
    print(f"413 after {sent} bytes sent (limit {LIMIT})")
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert sent < LIMIT + 16 * 1024 * 1024  # the limit plus what the sockets' buffers held
    with http.client() as c:
        assert c.get("/healthz").status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/v1/jobs/%2e%2e",
        "/v1/jobs/..%2f..%2fetc%2fpasswd",
        "/v1/jobs/0123456789ABCDEF0123456789abcdef",
        "/v1/jobs/%2e%2e/result",
        "/v1/documents/%2e%2e",
        "/v1/documents/..%2f..%2f..%2fetc/tables/p0001-t01.json",
        "/v1/documents/0123456789abcdef/tables/%2e%2e%2fmanifest.json",
        "/v1/documents/0123456789abcdef/tables/p0001-t01.vision.json",
        "/v1/documents/0123456789abcdef/tables/p0001-t01.txt",
        "/v1/documents/0123456789abcdef%2f..%2fsource/chunks",
        "/v1/documents/0123456789abcdef/tables/p1-t1/read",
        "/v1/reads/%2e%2e",
        "/ui/documents/%2e%2e%2f%2e%2e",
    ],
)
def test_traversal_attempts_in_ids(api, path):
    with api["http"].client() as c:
        r = c.get(path)
    assert r.status_code in (404, 422), (path, r.status_code, r.text)
    assert set(r.json()) == {"error"} and "Traceback" not in r.text


def test_unknown_job_and_unfinished_result(api):
    with api["http"].client() as c:
        r = c.get("/v1/jobs/0123456789abcdef0123456789abcdef")
        assert r.status_code == 404 and "no job" in r.json()["error"]
        assert c.get("/v1/jobs/0123456789abcdef0123456789abcdef/result").status_code == 404
        assert c.get("/v1/documents/0123456789abcdef").status_code == 404
        assert c.get("/v1/no/such/route").json() == {"error": "no route /v1/no/such/route"}


def test_bad_files_fail_fast(api, tmp_path):
    cases = [
        ("notes.pdf", b"just some text, not a PDF", 415, "not a PDF or image"),
        ("broken.pdf", b"%PDF-1.4\n garbage garbage", 422, "broken.pdf: corrupt"),
        ("empty.pdf", b"", 422, "empty file"),
        ("bad.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 40, 422, "bad.png"),
    ]
    with api["http"].client() as c:
        for name, data, status, message in cases:
            t0 = time.monotonic()
            r = c.post("/v1/jobs", files={"file": (name, data)})
            assert r.status_code == status and message in r.json()["error"], (name, r.text)
            assert time.monotonic() - t0 < 10
        good = sample_pdf(tmp_path / "g.pdf", 1, seed=77).read_bytes()
        for fields, message in [
            ({"dpi": "5"}, "dpi must be between"),
            ({"dpi": "lots"}, "dpi must be an integer"),
            ({"pages": "3-1"}, "bad page range"),
            ({"tables": "all"}, "tables must be"),
            ({"engine": "x"}, "unknown form field"),
        ]:
            r = c.post("/v1/jobs", data=fields, files={"file": ("g.pdf", good)})
            assert r.status_code == 422 and message in r.json()["error"], (fields, r.text)
        r = c.post("/v1/jobs", data={"dpi": "100"})
        assert r.status_code in (415, 422)
        r = c.post("/v1/jobs", content=b"{}", headers={"Content-Type": "application/json"})
        assert r.status_code == 415 and "multipart/form-data" in r.json()["error"]
        assert c.post("/v1/jobs", params={"wait": 9999}, files={"file": ("g.pdf", good)}).status_code == 422


def test_concurrent_uploads_of_one_file_are_one_job(api, tmp_path):
    data = sample_pdf(tmp_path / "same.pdf", 1, seed=41).read_bytes()

    def upload(i: int) -> str:
        with api["http"].client() as c:
            r = c.post("/v1/jobs", data={"dpi": "100"}, files={"file": (f"copy{i}.pdf", data)})
            assert r.status_code in (200, 202), r.text
            return r.json()["jobs"][0]["job_id"]

    with ThreadPoolExecutor(6) as pool:
        job_ids = set(pool.map(upload, range(6)))
    assert len(job_ids) == 1
    with api["http"].client() as c:  # several files in one request: one job each
        other = sample_pdf(tmp_path / "other.pdf", 1, seed=42).read_bytes()
        r = c.post("/v1/jobs", files=[("file", ("a.pdf", data)), ("file", ("b.pdf", other))], data={"dpi": "100"})
        jobs = r.json()["jobs"]
        assert r.status_code == 202 and jobs[0]["job_id"] in job_ids and jobs[1]["job_id"] not in job_ids
        assert jobs[1]["source"] == "b.pdf"


def test_review_page_resanitises_stored_html(api, processed):
    doc_id = processed["doc_id"]
    with api["http"].client() as c:
        tid = c.get(f"/v1/documents/{doc_id}").json()["tables"][0]["table_id"]
        listing = c.get("/ui/")
        assert listing.status_code == 200 and doc_id in listing.text and "report.pdf" in listing.text
        path = api["store"] / doc_id / "tables" / f"{tid}.html"
        original = path.read_text()
        try:
            path.write_text(original.replace("<td", '<td onmouseover="x()"', 1) + "<script>alert(1)</script>")
            page = c.get(f"/ui/documents/{doc_id}")
        finally:
            path.write_text(original)
    assert page.status_code == 200
    assert "onmouseover" not in page.text and "alert(1)" not in page.text
    assert f'src="/v1/documents/{doc_id}/tables/{tid}.png?v=' in page.text
    assert "text: " in page.text and "confidence " in page.text


def test_serve_refuses_an_exposed_address_without_tokens(tmp_path):
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("TABLESIGHT_")}
    proc = subprocess.run(
        [sys.executable, "-m", "worker.cli.main", "serve", "--host", "0.0.0.0", "--port", "1"],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stderr.strip().startswith("error: refusing to listen on 0.0.0.0")
    assert len(proc.stderr.strip().splitlines()) == 1


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def first_table(api: dict, doc_id: str) -> dict:
    return json.loads((api["store"] / doc_id / "manifest.json").read_text())["tables"][0]


def test_review_page_in_a_real_browser(api, processed):
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (bash .ci/setup installs it)")
    from playwright.sync_api import sync_playwright

    doc_id = processed["doc_id"]
    http = api["http"]
    shot = Path(REPO / "tests-artifacts" / "review-page.png")
    shot.parent.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{http.url}/ui/documents/{doc_id}")
            assert "/ui/login" in page.url  # not logged in yet
            page.fill("input[name=token]", TOKENS[1])
            page.click("button[type=submit]")
            page.wait_for_url(f"**/ui/documents/{doc_id}")
            card = page.locator("section.table-card").first
            img = card.locator(".crop img")
            img.wait_for(state="visible")
            page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img.element_handle())
            table = first_table(api, doc_id)
            with Image.open(api["store"] / doc_id / "tables" / f"{table['table_id']}.png") as crop:
                assert img.evaluate("img => [img.naturalWidth, img.naturalHeight]") == list(crop.size)
            detector = card.locator(".detector")
            assert detector.is_visible()
            # a grid without rows (random weights can give one) is said in words, not drawn empty
            if table["n_rows"]:
                assert card.locator(".detector table td, .detector table th").first.is_visible()
            else:
                assert "no rows" in detector.inner_text()
            calls = len(api["vision"].requests)
            card.locator("button.read").click()
            status = card.locator(".read-status").element_handle()
            page.wait_for_function("el => el.textContent === 'read'", arg=status, timeout=60_000)
            assert len(api["vision"].requests) == calls + 1  # the click made one model call
            vision_table = card.locator(".vision-html table")
            assert vision_table.is_visible() and vision_table.locator("td, th").count() == 9
            assert vision_table.locator("[colspan='2']").count() == 1
            assert "TEDS" in card.locator(".agreement").inner_text()
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    print(f"review page screenshot: {shot}")
