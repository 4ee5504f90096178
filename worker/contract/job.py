"""What `tablesight status JOB` (and the HTTP API) reports about a queued job."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from worker.contract.base import Contract, Number
from worker.contract.enums import JobPhase
from worker.contract.manifest import ErrorEntry


class PageProgress(Contract):
    """One page of a job: queued, running (where), done (tables, seconds) or failed (why)."""

    state: str
    worker: str | None = None
    pid: int | None = None
    started_at: str | None = None
    finished_at: str | None = None
    tables: int | None = None
    seconds: Number | None = None
    reused: bool | None = None
    error: str | None = None
    attempts: int = 0


class CallbackProgress(Contract):
    """The job's end-of-job callback: where it goes and how its delivery went."""

    url: str
    state: str  # pending | delivered | failed | refused
    attempts: int = 0
    last_error: str | None = None
    delivered_at: str | None = None


class JobStatus(Contract):
    """A job's state with per-page progress; `manifest` is where its manifest is once it ended."""

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"callback"})

    job_id: str
    doc_id: str
    status: JobPhase
    source: str | None
    sha256: str | None
    options: dict[str, object] | None
    pages_total: int | None
    pages_done: int | None
    pages_failed: int | None
    created_at: str | None
    started_at: str | None
    finished_at: str | None
    force: bool
    tables: int | None
    reason: str | None
    pages: dict[str, PageProgress] = Field(default_factory=dict)
    errors: list[ErrorEntry] = Field(default_factory=list)
    manifest: str | None
    callback: CallbackProgress | None = None
