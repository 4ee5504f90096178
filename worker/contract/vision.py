"""`<doc_id>/tables/<table_id>.vision.json`: one vision-model read of a table crop, checked."""

from __future__ import annotations

from typing import Any, ClassVar

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


class AgreementSummary(Contract):
    """The agreement scores a client or a task result carries (the differing cells stay stored)."""

    teds: Number | None = None
    teds_struct: Number | None = None
    cell_match: Number | None = None
    same_shape: bool | None = None

    @classmethod
    def of(cls, agreement: dict[str, object] | None) -> dict[str, object] | None:
        if not agreement:
            return None
        return cls.model_validate({k: agreement.get(k) for k in cls.model_fields}).dump()


class ReadSummary(Contract):
    """A read without its raw answer: what the vision task returns and the API shows.

    Its fields are a subset of `VisionRead`'s (a test checks that they stay one), plus whether
    the stored read was reused (`cached`) or a failed re-read kept the good one (`kept_previous`).
    """

    doc_id: str
    table_id: str
    status: str
    failure: str | None = None
    reason: str | None = None
    retryable: bool | None = None
    backend: str | None = None
    model: str | None = None
    prompt_version: int | str | None = None
    created_at: str | None = None
    latency_seconds: Number | None = None
    tokens: VisionTokens | None = None
    html_key: str | None = None
    grid: VisionGrid | None = None
    caption: str | None = None
    removed: list[str] | None = None
    repairs: list[str] | None = None
    last_failure: LastFailure | None = None
    cached: bool | None = None
    kept_previous: bool | None = None
    agreement: AgreementSummary | None = None

    @classmethod
    def of(cls, record: dict[str, Any]) -> dict[str, Any]:
        """The summary of a read record (stored, or a failure that stored nothing): only keys it has."""
        out = {k: record[k] for k in cls.model_fields if k in record and k != "agreement"}
        out["agreement"] = AgreementSummary.of(record.get("agreement"))
        return cls.model_validate(out).model_dump(mode="json", exclude_unset=True)
