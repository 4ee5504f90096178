"""The review page's list of recent documents, from the job state in Redis (it expires with the
jobs, TABLESIGHT_JOB_TTL_SECONDS), so it works the same over a local folder or S3."""

from __future__ import annotations

import re
from typing import Any

from worker.queue.client import JobClient

SCAN_LIMIT = 20_000  # keys looked at, at most: the list stays cheap on a busy Redis


def recent_documents(client: JobClient, limit: int = 50) -> list[dict[str, Any]]:
    """Newest job per document, newest first."""
    prefix = client.settings.queue.job_key_prefix
    job_key = re.compile(rf"^{re.escape(prefix)}:job:[0-9a-f]{{32}}$")
    keys = []
    for n, key in enumerate(client.state.r.scan_iter(match=f"{prefix}:job:*", count=1000)):
        if n >= SCAN_LIMIT:
            break
        if job_key.match(key):
            keys.append(key)
    fields = ("job_id", "doc_id", "source", "status", "created_at", "created_ts", "tables", "pages_total")
    with client.state.r.pipeline() as pipe:
        for key in keys:
            pipe.hmget(key, list(fields))
        rows = pipe.execute()
    newest: dict[str, dict[str, Any]] = {}
    for values in rows:
        job = dict(zip(fields, values))
        doc = job.get("doc_id")
        if not doc:
            continue
        job["created_ts"] = float(job.get("created_ts") or 0)
        if doc not in newest or job["created_ts"] > newest[doc]["created_ts"]:
            newest[doc] = job
    return sorted(newest.values(), key=lambda j: j["created_ts"], reverse=True)[:limit]
