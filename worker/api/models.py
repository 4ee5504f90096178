"""Response and request bodies of the API routes, derived from the output contract where one
exists (a job's status is the contract's JobStatus plus links; a manifest is the Manifest)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from worker.contract import JobStatus
from worker.contract.enums import JobPhase
from worker.contract.table import ReviewState


class Version(StrEnum):
    """Which version of corrected tables to read: the reviewer's (default) or the extraction's."""

    current = "current"
    original = "original"


class JobView(JobStatus):
    """A job's status as the API shows it: links to follow instead of a storage location."""

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"callback", "manifest"})

    manifest: str | None = None
    links: dict[str, str] = Field(default_factory=dict)


class JobEvent(BaseModel):
    """One server-sent event of `GET /v1/jobs/{id}/events`: `page` (a page changed state),
    `progress` (the counts), or `end` (the final status, the last event)."""

    job_id: str
    status: JobPhase
    pages_done: int = 0
    pages_total: int = 0
    pages_failed: int = 0
    page: int | None = None
    page_state: str | None = None
    tables: int | None = None
    error: str | None = None
    reason: str | None = None


class SqlRequest(BaseModel):
    """One read-only query over one document's tables (`doc_id`) or over every document (`all`)."""

    doc_id: str | None = Field(None, description="the document whose tables are the views (16 hex digits)")
    query: str = Field(..., min_length=1, max_length=20_000, description='one query, e.g. SELECT * FROM "p0001-t01"')
    all: bool = Field(
        False, description='over every document: each is a schema named by its doc id ("DOC"."p0001-t01")'
    )
    max_rows: int | None = Field(None, ge=1, description="fewer rows than TABLESIGHT_API_SQL_MAX_ROWS")
    version: Version = Field(Version.current, description="original: the tables as extracted, before corrections")


class SqlAnswer(BaseModel):
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool = Field(description="more rows matched than the row limit; only the first are here")
    row_limit: int
    seconds: float
    warnings: list[str] = Field(default_factory=list)


class DocumentSummary(BaseModel):
    doc_id: str
    source: str | None = None
    status: str | None = None
    page_count: int | None = None
    tables: int = 0
    verified_tables: int = 0
    finished_at: str | None = None
    job_id: str | None = None
    links: dict[str, str] = Field(default_factory=dict)


class DocumentPage(BaseModel):
    """One page of the stored documents, by doc id; `next` is the cursor of the next page."""

    documents: list[DocumentSummary]
    next: str | None = None
    total: int


class Deletion(BaseModel):
    """What `DELETE /v1/documents/{doc}` removed; the same entry is kept in the deletion log."""

    doc_id: str
    deleted_at: str
    by: str
    keys_deleted: int
    jobs_forgotten: int
    source: str | None = None
    sha256: str | None = None
    log_key: str


class TableDescription(BaseModel):
    table_id: str
    parts: list[str]
    pages: list[int]
    description: str
    summary: str | None = None
    verified: bool = False
    version: int = 0


class Descriptions(BaseModel):
    doc_id: str
    version: Version
    tables: list[TableDescription]


class Chunks(BaseModel):
    doc_id: str
    max_tokens: int
    version: Version = Version.current
    chunks: list[dict[str, Any]]


class CellEdit(BaseModel):
    row: int = Field(ge=0)
    col: int = Field(ge=0)
    text: str = Field(max_length=5000)


class TableEditRequest(BaseModel):
    """A reviewer's correction: cell texts, how many rows are header rows, and/or checked."""

    base_version: int = Field(ge=0, description="the version the reviewer saw (409 when another edit came first)")
    cells: list[CellEdit] = Field(default_factory=list, max_length=10_000)
    header_rows: int | None = Field(None, ge=0)
    verified: bool | None = None
    reviewer: str | None = Field(None, max_length=80, description="a name to record beside the credential")
    note: str | None = Field(None, max_length=1000)


class TableVersion(BaseModel):
    """One version of a table record: who made it, when, and what changed (version 0 is the extraction)."""

    version: int
    by: str
    at: str
    changes: list[dict[str, Any]] = Field(default_factory=list)
    verified: bool = False
    note: str | None = None


class TableVersions(BaseModel):
    doc_id: str
    table_id: str
    current: int
    review: ReviewState | None = None
    versions: list[TableVersion]
