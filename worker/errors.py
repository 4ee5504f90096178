"""Error types callers branch on: permanent input errors fail a job at once, others may retry."""

from __future__ import annotations


class TablesightError(Exception):
    """Base of every error tablesight raises on purpose."""


class InputError(TablesightError):
    """The input itself is bad (corrupt, encrypted, too big, not a PDF or image): never retry."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")

    def __reduce__(self):  # keep it picklable (Celery sends exceptions between processes)
        return (type(self), (self.path, self.reason))


class OcrUnavailable(TablesightError):
    """Tesseract (or the requested language data) is not installed: a setup problem, not bad input."""


def reason_for(exc: BaseException) -> str:
    """What the user reads: an input's fault, a set-up problem (models, OCR), or our bug."""
    if isinstance(exc, InputError):
        return exc.reason
    if isinstance(exc, TablesightError):
        return f"{type(exc).__name__}: {exc}"
    return f"internal error: {type(exc).__name__}: {exc}"
