"""Several documents in one process, the short ones side by side, so that every lane has pages.

A one-page scan fills one of the pipeline's lanes. Run one after another, a folder of them left
the other lanes idle: on 2 cores the Table Transformer pipeline kept 1.2 cores busy over six
one-page scans (docs/speed.md, Round 32). Here up to PIPELINE_LANES documents run at once, each in
its own thread, sharing one render and OCR pool and the lanes (worker.overlap.LaneBudget): a
document takes a lane per page, up to all of them, so one-page scans run side by side and a long
document alone on every lane, as before, and never more page groups are in flight than lanes.
Manifests come out in the order the documents were given.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from worker.overlap import DocumentSlot, LaneBudget, SubprocessPool, torch_threads
from worker.pipeline.document import extract_document
from worker.pipeline.pages import pool_threads
from worker.pipeline.run import PageResult
from worker.pipeline.stages import Stages
from worker.settings import Settings
from worker.storage.base import Storage


def extract_documents(
    paths: list[Path],
    *,
    stages: Stages | Callable[[], Stages],
    storage: Storage,
    settings: Settings,
    pages: str | None = None,
    dpi: int | None = None,
    on_start: Callable[[Path, int], None] | None = None,
    on_page: Callable[[Path, PageResult], None] | None = None,
) -> Generator[tuple[Path, dict[str, Any]], None, None]:
    """Each document's stored manifest, in the order of `paths` (see extract_document).

    An error that stops a document's run altogether (models or store unusable) is raised in its
    turn. Whenever the caller stops reading (that error, Ctrl-C, `close()`), documents not yet
    started are dropped and those running stop after their page groups in flight, writing no
    manifest (worker.overlap.Stopped), as a document run alone does on Ctrl-C."""
    lanes = settings.lanes.pipeline_lanes
    side_by_side = lanes > 1 and len(paths) > 1
    lock, held = threading.Lock(), list[Stages]()

    def loaded() -> Stages:
        """The stages, loaded once whichever document needs them first; side by side, with the
        model threads shared out among every lane, whichever documents keep them busy."""
        with lock:
            if not held:
                held.append(stages() if callable(stages) else stages)
                if side_by_side and held[0].threads is not None:
                    held[0].threads(torch_threads(settings, lanes=lanes))
            return held[0]

    def one(path: Path, slot: DocumentSlot | None) -> dict[str, Any]:
        return extract_document(
            path,
            stages=loaded,
            storage=storage,
            settings=settings,
            pages=pages,
            dpi=dpi,
            on_start=(lambda n: on_start(path, n)) if on_start else None,
            on_page=(lambda result: on_page(path, result)) if on_page else None,
            slot=slot,
        )

    if not side_by_side:
        for path in paths:
            yield path, one(path, None)
        return
    budget = LaneBudget(lanes)
    pool = SubprocessPool(lambda: pool_threads(loaded(), settings, lanes))
    runner = ThreadPoolExecutor(lanes, thread_name_prefix="tablesight-doc")

    def run_slot(path: Path, turn: int) -> dict[str, Any]:
        slot = DocumentSlot(pool, budget, turn)
        try:
            return one(path, slot)
        finally:
            slot.close()

    try:
        futures = [(path, runner.submit(run_slot, path, turn)) for turn, path in enumerate(paths)]
        for path, future in futures:
            yield path, future.result()
    finally:  # stopped early (Ctrl-C, an error): running documents stop after their groups in flight
        budget.stop()
        runner.shutdown(wait=True, cancel_futures=True)
        pool.close()
