"""`<doc_id>/tables/<table_id>.vision.json`: one vision-model read of a table crop, checked."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from worker.contract.base import SCHEMA_VERSION, Contract, Number


class VisionImage(Contract):
    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"sha256"})

    key: str
    size: list[int]
    sha256: str | None = None


class VisionTokens(Contract):
    prompt: int | None = None
    completion: int | None = None


class VisionGrid(Contract):
    n_rows: int
    n_cols: int
    header_rows: int


class LastFailure(Contract):
    """A failed re-read of a table that already had a good read (which is kept)."""

    created_at: str
    backend: str
    model: str
    prompt_version: int | str
    failure: str | None
    reason: str | None
    retryable: bool
    request_id: str | None
    raw_answer: str | None


class VisionRead(Contract):
    """A read's outcome (`ok` or `failed` with the reason), the raw answer, and how far the
    checked table agrees with the detector's grid."""

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"last_failure"})

    schema_version: int = SCHEMA_VERSION
    vision_version: int
    doc_id: str
    table_id: str
    status: str
    failure: str | None
    reason: str | None
    retryable: bool
    backend: str
    model: str
    prompt_version: int | str
    created_at: str
    request_id: str | None
    image: VisionImage
    detector_flags: dict[str, object]
    latency_seconds: Number | None
    finish_reason: str | None
    attempts: int | None
    tokens: VisionTokens
    raw_answer: str | None
    raw_answer_chars: int
    removed: list[str] = Field(default_factory=list)
    repairs: list[str] = Field(default_factory=list)
    caption: str = ""
    grid: VisionGrid | None
    html_key: str | None
    agreement: dict[str, object] | None
    last_failure: LastFailure | None = None
