"""The closed vocabularies of the contract, as `str` enums (they serialise as their values)."""

from __future__ import annotations

from enum import StrEnum


class DocStatus(StrEnum):
    """A document's outcome: every asked page done, some done, or none / the input is bad;
    cancelled: stopped on request (`DELETE /v1/jobs/{id}`), the pages done by then kept or removed."""

    COMPLETE = "complete"
    PARTIAL = "partial"
    FAILED = "failed"
    CANCELLED = "cancelled"


class JobPhase(StrEnum):
    """A queued job's life: queued, running, then one of the document outcomes."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETE = "complete"
    PARTIAL = "partial"
    FAILED = "failed"
    CANCELLED = "cancelled"


class PageState(StrEnum):
    """A page task's end in the job state: done (tables written) or failed (reason kept)."""

    DONE = "done"
    FAILED = "failed"


class TextSource(StrEnum):
    """Where a table's cell text came from."""

    TEXT_LAYER = "text-layer"
    OCR = "ocr"


class TablesMode(StrEnum):
    """How tables are found: the detector, or each page / image is one table crop."""

    DETECT = "detect"
    PAGE = "page"
