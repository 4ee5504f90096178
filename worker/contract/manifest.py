"""`<doc_id>/manifest.json` and `<doc_id>/pages/NNNN.json`: a document's outcome and its pages."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from worker.contract.base import SCHEMA_VERSION, Contract, Number
from worker.contract.enums import DocStatus, TablesMode, TextSource
from worker.contract.page_transform import PageTransformRecord


class ModelRef(Contract):
    """A model as it was loaded: hub id or folder, and the revision when there is one."""

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"sha256"})

    id: str
    revision: str | None = None
    sha256: str | None = None  # pinned weights (the embedded engine's ONNX files)


class ErrorEntry(Contract):
    """Why a page (or, without `page`, the whole input) failed: one line for a person."""

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"page"})

    page: int | None = None
    reason: str


class TableEntry(Contract):
    """A table as the manifest lists it: enough to choose which files to open."""

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset(
        {"logical_table", "continues", "continued_by", "verified", "version"}
    )

    table_id: str
    page: int
    bbox: list[Number]
    n_rows: int
    n_cols: int
    confidence: Number
    text_source: TextSource
    is_complex: bool
    needs_vision: bool
    score: Number
    reasons: list[str]
    files: dict[str, str]
    logical_table: str | None = None
    continues: str | None = None
    continued_by: str | None = None
    # set by a reviewer's correction (worker.review): the table record's version, and whether it was checked
    verified: bool | None = None
    version: int | None = None


class PageRecord(Contract):
    """What one page's worker wrote. Queue runs add which job and options wrote it, so a re-run
    can tell its own finished pages from stale ones."""

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"job_id", "page_options_hash", "models", "normalisation"})

    page: int
    tables: list[TableEntry] = Field(default_factory=list)
    errors: list[ErrorEntry] = Field(default_factory=list)
    timings: dict[str, Number] = Field(default_factory=dict)
    job_id: str | None = None
    page_options_hash: str | None = None
    models: dict[str, ModelRef] | None = None
    normalisation: PageTransformRecord | None = None  # when the page was turned or deskewed first


class RunOptions(Contract):
    """The options that change a document's outputs (part of a queued job's identity)."""

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"engine"})

    dpi: int | None = None
    pages: str | None = None
    tables: TablesMode = TablesMode.DETECT
    engine: str | None = None  # tatr | embedded: part of a job's identity, like dpi


class LogicalTableEntry(Contract):
    """A table continued across pages, merged: its parts and where the merged files are."""

    logical_id: str
    parts: list[str]
    pages: list[int]
    n_rows: int
    n_cols: int
    links: list[dict[str, object]]
    files: dict[str, str]


class Manifest(Contract):
    """A document's outcome: status, every table, every error, and how it was made."""

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"job_id", "logical_tables", "logical_tables_error"})

    schema_version: int = SCHEMA_VERSION
    manifest_version: int = 1
    doc_id: str
    status: DocStatus
    source: str
    sha256: str | None
    kind: str | None
    page_count: int
    pages: list[int]
    pages_done: list[int]
    tables: list[TableEntry]
    errors: list[ErrorEntry]
    models: dict[str, ModelRef]
    options: RunOptions
    timings: dict[str, Number]
    wall_seconds: Number
    tool_version: str
    finished_at: str
    job_id: str | None = None
    logical_tables: list[LogicalTableEntry] | None = None
    logical_tables_error: str | None = None
