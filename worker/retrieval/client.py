"""`Client`: the HTTP API of `tablesight serve`, giving the same `Document` / `Table` shapes as
`tablesight.extract`, so code written against one runs against the other.

Uploads go to `POST /v1/jobs` and are waited for by polling `/v1/jobs/{id}`; a document's
manifest, table files and chunks come from `/v1/documents/...`. The caller never builds a URL.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from worker.retrieval.public import Document, document_from

TERMINAL = ("complete", "partial", "failed")


class TablesightError(RuntimeError):
    """The API refused a request or a job failed; the message is the server's."""


class HttpSource:
    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    def _get(self, path: str, **params: Any) -> httpx.Response:
        r = self.http.get(path, params={k: v for k, v in params.items() if v is not None})
        if r.status_code == 404:
            raise KeyError(_detail(r))
        if r.status_code >= 400:
            raise TablesightError(f"GET {path}: {r.status_code} {_detail(r)}")
        return r

    def manifest(self, doc_id: str) -> dict[str, Any]:
        return dict(self._get(f"/v1/documents/{doc_id}").json())

    def table_file(self, doc_id: str, table_id: str, fmt: str) -> bytes:
        return self._get(f"/v1/documents/{doc_id}/tables/{table_id}.{fmt}").content

    def chunks(self, doc_id: str, max_tokens: int | None) -> list[dict[str, Any]]:
        return list(self._get(f"/v1/documents/{doc_id}/chunks", max_tokens=max_tokens).json()["chunks"])

    def crop_link(self, doc_id: str, table_id: str) -> str:
        return str(self.http.base_url.join(f"/v1/documents/{doc_id}/tables/{table_id}.png"))


def _detail(r: httpx.Response) -> str:
    try:
        return str(r.json().get("detail", r.text))
    except ValueError:
        return r.text[:300]


class Client:
    """A client of `tablesight serve` at `url` (token: one of TABLESIGHT_API_TOKENS, if set).

    Documents it returns read their tables' files through it when first used: keep the client
    open while reading them (`with Client(...) as api:`)."""

    def __init__(self, url: str, token: str | None = None, *, timeout: float = 60.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=url, headers=headers, timeout=timeout)
        self._source = HttpSource(self._http)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def extract(
        self, path: str | Path, *, pages: str | None = None, dpi: int | None = None, timeout: float = 600.0
    ) -> Document:
        """Upload a file, wait for its job to end, and return the document (a failed job raises)."""
        path = Path(path)
        fields = {k: str(v) for k, v in (("pages", pages), ("dpi", dpi)) if v is not None}
        with path.open("rb") as fh:
            r = self._http.post("/v1/jobs", files={"file": (path.name, fh)}, data=fields)
        if r.status_code >= 400:
            raise TablesightError(f"upload {path.name}: {r.status_code} {_detail(r)}")
        job = r.json()["jobs"][0]
        deadline = time.monotonic() + timeout
        status = job.get("status")
        while status not in TERMINAL:
            if time.monotonic() > deadline:
                raise TablesightError(f"job {job['job_id']} still {status} after {timeout:g}s")
            time.sleep(0.5)
            status = self._source._get(f"/v1/jobs/{job['job_id']}").json()["status"]
        if status == "failed":
            raise TablesightError(f"job {job['job_id']} ({path.name}) failed")
        return self.document(str(job["doc_id"]))

    def document(self, doc_id: str) -> Document:
        """A processed document by id (KeyError when the server has none)."""
        return document_from(self._source, doc_id)
