"""What one run over a document's pages shares, and the per-page result it fills in."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from worker.contract import ErrorEntry, PageRecord, TableEntry
from worker.contract.page_transform import PageTransformRecord
from worker.core.page_transform import PageTransform
from worker.engines import Engine, get_engine
from worker.inputs import Document
from worker.overlap import SubprocessPool
from worker.pipeline.stages import Stages
from worker.settings import Settings
from worker.storage.base import Storage

PDFIUM_LOCK = threading.Lock()  # pdfium is not thread-safe: text-layer reads from pool threads take turns


@dataclass
class Run:
    """One document's run: its input, id, models, store, settings, resolution and thread pool.

    `record_extra` is merged into each stored page record: the queue marks which job and
    options wrote it, so a re-run can tell its own finished pages from stale ones.
    """

    doc: Document
    doc_id: str
    stages: Stages
    storage: Storage
    settings: Settings
    dpi: int
    pool: SubprocessPool | None = None
    record_extra: dict[str, Any] = field(default_factory=dict)

    @property
    def engine(self) -> Engine:
        """The registered engine whose models `stages` holds (worker.engines)."""
        return get_engine(self.stages.engine)

    @property
    def detecting(self) -> bool:
        """False in `--tables page` mode: every page is one table crop."""
        return self.stages.detector is not None


@dataclass
class PageResult:
    """One page's tables, errors and seconds per stage, as its page record stores them."""

    page: int
    tables: list[TableEntry] = field(default_factory=list)
    errors: list[ErrorEntry] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    transform: PageTransform | None = None  # set when the page was normalised before detection
    normalisation: PageTransformRecord | None = None
    original: Image.Image | None = None  # the page as it came in, while its group runs (second_pass)
    second_pass: int | None = None  # tables the recall fallback found on the page as it came in

    def record(self) -> PageRecord:
        normalisation = self.normalisation
        if normalisation is not None and self.second_pass is not None:
            normalisation = normalisation.model_copy(update={"second_pass_tables": self.second_pass})
        return PageRecord(
            page=self.page,
            tables=self.tables,
            errors=self.errors,
            timings={k: round(v, 4) for k, v in self.timings.items()},
            normalisation=normalisation,
        )

    def add_time(self, stage: str, seconds: float) -> None:
        self.timings[stage] = self.timings.get(stage, 0.0) + seconds


@contextmanager
def stage_clock(timings: dict[str, float], stage: str) -> Iterator[None]:
    """Add the block's wall time to `timings[stage]`."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - t0


def split_time(timings: dict[str, float], results: list[PageResult], stage: str) -> None:
    """A batched stage's time is shared equally by the pages of the batch."""
    if stage in timings and results:
        share = timings.pop(stage) / len(results)
        for r in results:
            r.add_time(stage, share)
