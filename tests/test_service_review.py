"""Corrections and the offline docs, against the real stack (redis-server, a Celery worker with
the embedded engine, `tablesight serve`) on local storage and S3 (moto server), and in a real
headless Chromium: `/docs` renders its operations with every non-local request blocked, and a
reviewer's edit on the review page reaches the chunks, the SQL views and the exports, while the
original stays available."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from contract_check import contract_problems
from queue_fixtures import REPO
from service_fixtures import TOKEN, start_stack

from worker.devtools.samples import financial_table, make_born_digital_pdf

pytestmark = pytest.mark.slow
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
ROW = 2  # North / Widgets
REVENUE_2023 = 2  # its column


@pytest.fixture(scope="module", params=["local", "s3"])
def stack(request, tmp_path_factory, tiny_models):
    root = tmp_path_factory.mktemp(f"svc-review-{request.param}")
    s = start_stack(request.param, root, tiny_models)
    yield s
    s.stop()


def finance_doc(stack, folder: Path, title: str) -> dict:
    path = folder / f"{title}.pdf"
    make_born_digital_pdf(path, financial_table(), title=title)
    with stack.http.client() as c:
        r = c.post("/v1/jobs", params={"wait": 180}, files={"file": (path.name, path.read_bytes())})
    assert r.status_code == 200 and r.json()["jobs"][0]["status"] == "complete", r.text
    return r.json()["jobs"][0]


def sql_value(c, doc: str, version: str = "current"):
    q = "SELECT c2023_revenue FROM \"p0001-t01\" WHERE region = 'North' AND product = 'Widgets'"
    r = c.post("/v1/sql", json={"doc_id": doc, "query": q, "version": version})
    assert r.status_code == 200, r.text
    return r.json()["rows"][0][0]


def test_edit_versions_conflicts_and_original(stack, tmp_path):
    doc = finance_doc(stack, tmp_path, "api-edit")["doc_id"]
    base = f"/v1/documents/{doc}/tables/p0001-t01"
    with stack.http.client() as c:
        record = c.get(f"{base}.json").json()
        cell = next(x for x in record["grid"]["cells"] if (x["row"], x["col"]) == (ROW, REVENUE_2023))
        assert cell["text"] == "1,200" and "review" not in record
        assert c.get(f"{base}/versions").json()["current"] == 0
        r = c.post(
            f"{base}/edits",
            json={"base_version": 0, "cells": [{"row": ROW, "col": REVENUE_2023, "text": "1,250"}], "verified": True},
        )
        assert r.status_code == 200, r.text
        assert r.json()["version"] == 1 and r.json()["changes"][0] == {"cell": [2, 2], "from": "1,200", "to": "1,250"}
        assert sql_value(c, doc) == 1250 and sql_value(c, doc, "original") == 1200
        assert "1,250" in c.get(f"{base}.html").text and "1,200" in c.get(f"{base}.html?version=original").text
        assert c.get(f"{base}.json").json()["review"]["version"] == 1
        assert c.get(f"{base}.json", params={"version": "original"}).json().get("review") is None
        # an edit made on the version before is refused, as is a cell that is not there
        stale = c.post(f"{base}/edits", json={"base_version": 0, "cells": [{"row": 3, "col": 2, "text": "1"}]})
        assert stale.status_code == 409 and "version 1" in stale.json()["error"]
        bad = c.post(f"{base}/edits", json={"base_version": 1, "cells": [{"row": 99, "col": 0, "text": "x"}]})
        assert bad.status_code == 422 and "no cell" in bad.json()["error"]
        # header rows: one instead of two; the column labels change in the chunks and descriptions
        before = c.get(f"/v1/documents/{doc}/descriptions").json()["tables"][0]["description"]
        r = c.post(f"{base}/edits", json={"base_version": 1, "header_rows": 1, "reviewer": "Grace"})
        assert r.status_code == 200 and r.json()["version"] == 2, r.text
        after = c.get(f"/v1/documents/{doc}/descriptions").json()["tables"][0]
        assert (
            after["description"] != before
            and "2023 / Revenue" in before
            and "2023 / Revenue" not in after["description"]
        )
        assert after["verified"] is True and after["version"] == 2
        record = c.get(f"{base}.json").json()
        assert record["serialisations"]["header_rows"] == 1 and record["serialisations"]["header_source"] == "reviewer"
        listed = c.get(f"{base}/versions").json()
        assert [v["version"] for v in listed["versions"]] == [0, 1, 2] and listed["current"] == 2
        assert listed["versions"][2]["by"].startswith("Grace (token:") and listed["versions"][2]["changes"]
        v0 = c.get(f"{base}/versions/0").json()
        assert next(x for x in v0["grid"]["cells"] if (x["row"], x["col"]) == (ROW, REVENUE_2023))["text"] == "1,200"
        assert c.get(f"{base}/versions/1").json()["review"]["version"] == 1
        assert c.get(f"{base}/versions/7").status_code == 404
        manifest = c.get(f"/v1/documents/{doc}").json()
        assert manifest["tables"][0]["verified"] is True and manifest["tables"][0]["version"] == 2
        csv_text = stack.storage.get_bytes(f"{doc}/tables/p0001-t01.csv").decode()
        # one header row now: "Revenue"/"Cost" are a data row, so the columns are text
        assert '"1,250"' in csv_text and "1,200" not in csv_text and "1,Region,Product,Revenue,Cost" in csv_text
        original_csv = stack.storage.get_bytes(f"{doc}/tables/p0001-t01.original.csv").decode()
        assert ["North", "Widgets", "1200"] == next(csv.reader(io.StringIO(original_csv.splitlines()[1])))[1:4]
        # hostile text in a correction is text: escaped in the regenerated HTML and Markdown
        hostile = '<img src=x onerror="alert(1)">'
        r = c.post(f"{base}/edits", json={"base_version": 2, "cells": [{"row": 4, "col": 1, "text": hostile}]})
        assert r.status_code == 200 and r.json()["version"] == 3, r.text
        html = c.get(f"{base}.html").text
        assert "<img" not in html and "&lt;img src=x onerror=" in html
        assert hostile not in c.get(f"/ui/documents/{doc}").text
    if stack.backend == "local":
        checked, problems = contract_problems(stack.root / "store")
        assert checked >= 3 and not problems, problems


def test_docs_offline_and_a_correction_in_a_real_browser(stack, tmp_path):
    if stack.backend != "local":
        pytest.skip("the browser round trip runs once, over local storage")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (bash .ci/setup installs it)")
    from playwright.sync_api import sync_playwright

    doc = finance_doc(stack, tmp_path, "browser-edit")["doc_id"]
    http = stack.http
    blocked: list[str] = []

    def local_only(route) -> None:  # noqa: ANN001 - a Playwright Route
        host = route.request.url.split("/")[2].split(":")[0]
        if host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    shots = REPO / "tests-artifacts"
    shots.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1100})
            context.route("**/*", local_only)
            page = context.new_page()
            # /docs with the network blocked: Swagger UI's own files come from this server
            page.goto(f"{http.url}/docs")
            page.wait_for_selector(".opblock-summary-path", timeout=30_000)
            shown = page.locator(".opblock-summary-path").all_inner_texts()
            for route in ("/v1/jobs/{job_id}/events", "/v1/sql", "/v1/documents/{doc_id}/tables/{table_id}/edits"):
                assert any(route in s.replace("\u200b", "") for s in shown), (route, shown[:40])
            assert not blocked, blocked
            page.screenshot(path=str(shots / "docs-offline.png"))
            # the review page: log in, then the editor beside the crop
            page.goto(f"{http.url}/ui/documents/{doc}")
            page.fill("input[name=token]", TOKEN)
            page.click("button[type=submit]")
            page.wait_for_url(f"**/ui/documents/{doc}")
            card = page.locator("section.table-card").first
            cell = card.locator(f'.edit-grid [data-row="{ROW}"][data-col="{REVENUE_2023}"]')
            cell.wait_for(state="visible")
            assert cell.inner_text() == "1,200"
            card.locator(".crop img").scroll_into_view_if_needed()
            page.wait_for_function("n => document.querySelectorAll('.boxes .box').length >= n", arg=20)
            # a cell shows its box on the crop ...
            card.locator('.edit-grid [data-row="2"][data-col="1"]').hover()
            lit = card.locator(".boxes .box.hl")
            assert lit.count() == 1 and lit.get_attribute("data-row") == "2" and lit.get_attribute("data-col") == "1"
            box = lit.bounding_box()
            assert box and box["width"] > 5 and box["height"] > 5
            # ... and a box shows its cell
            card.locator('.boxes .box[data-row="4"][data-col="0"]').hover()
            assert card.locator(".edit-grid .hl").inner_text() == "South"
            # edit one cell, mark the table checked, save: the chunks shown change
            assert "| North | Widgets | 1,200 |" in card.locator(".chunk-text").inner_text()
            cell.fill("1,250")
            card.locator("input.verified").check()
            card.locator("input.reviewer").fill("Ada")
            card.locator("button.save").click()
            page.wait_for_function(
                "el => el.textContent.startsWith('saved version 1')",
                arg=card.locator(".save-status").element_handle(),
                timeout=30_000,
            )
            assert "| North | Widgets | 1,250 |" in card.locator(".chunk-text").inner_text()
            assert card.locator(".version").inner_text() == "version 1" and card.locator(".verified-badge").is_visible()
            page.screenshot(path=str(shots / "review-correction.png"), full_page=True)
            page.reload()
            card = page.locator("section.table-card").first
            card.locator(".edit-grid table").wait_for()
            assert card.locator(f'.edit-grid [data-row="{ROW}"][data-col="{REVENUE_2023}"]').inner_text() == "1,250"
        finally:
            browser.close()
    with http.client() as c:
        chunks = c.get(f"/v1/documents/{doc}/chunks").json()["chunks"]
        assert "| North | Widgets | 1,250 |" in chunks[0]["text"]  # the API's chunks: rows as a Markdown table
        original = c.get(f"/v1/documents/{doc}/chunks", params={"version": "original"}).json()["chunks"]
        assert "| North | Widgets | 1,200 |" in original[0]["text"]
        versions = c.get(f"/v1/documents/{doc}/tables/p0001-t01/versions").json()["versions"]
        assert versions[1]["by"].startswith("Ada (token:") and versions[1]["verified"] is True
        assert versions[1]["changes"][0] == {"cell": [2, 2], "from": "1,200", "to": "1,250"}
        assert sql_value(c, doc) == 1250
