"""A failure kept to the table or page it happens in: a bug in reading one table loses nothing
else of the document. The page gets the reason (so it counts as not done, the manifest says
`partial`, and the queue runs it again on a retry); its other tables and the other pages are
stored as usual.

Not contained, because whoever called must see them: the store failing (nothing could be
written anyway, and the queue retries a transient one), memory running out, and Celery's soft
time limit (the page task fails the pages still running with it).
"""

from __future__ import annotations

import logging

from worker.contract import ErrorEntry
from worker.errors import reason_for
from worker.storage.base import StorageError

logger = logging.getLogger(__name__)


def contained(exc: BaseException) -> bool:
    """Whether `exc` may end as one table's or page's error instead of the document's."""
    if isinstance(exc, (StorageError, MemoryError)):
        return False
    try:
        from billiard.exceptions import SoftTimeLimitExceeded  # Celery's, where the queue runs us
    except ImportError:
        return True
    return not isinstance(exc, SoftTimeLimitExceeded)


def table_failure(page: int, index: int, exc: BaseException) -> ErrorEntry:
    """The page's error for its table `index`; the traceback goes to the log (it is our bug or a model's)."""
    logger.error("page %d, table %d failed", page, index, exc_info=exc)
    return ErrorEntry(page=page, reason=f"table {index}: {reason_for(exc)}")


def page_failure(page: int, exc: BaseException) -> ErrorEntry:
    """The page's error when it failed before its tables could be told apart (detection, cropping)."""
    logger.error("page %d failed", page, exc_info=exc)
    return ErrorEntry(page=page, reason=reason_for(exc))
