"""Keeping every core busy in the pipeline: worker threads for subprocess-bound work, and lanes.

Rendering (pdftoppm) and OCR (tesseract) run in subprocesses, so a thread that waits on one
holds no GIL and the work truly runs beside torch. `SubprocessPool` is that pool. Lanes keep
several page groups in flight: while one group is in a model call, another renders, waits
on OCR or writes its outputs; results still come out in the order the groups went in.
Memory stays bounded by `lanes` groups, never the document.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from worker.settings import Settings

T = TypeVar("T")
R = TypeVar("R")


def usable_cores() -> int:
    """Cores this process may run on (the affinity mask, which containers narrow)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def torch_threads(settings: Settings, lanes: int | None = None) -> int:
    """TORCH_THREADS, or for 0 the usable cores shared out among the busy lanes (at least 1).

    Each lane makes its own model calls, so two lanes at one thread each keep two cores busy
    without OpenMP barriers. Two threads per call beside a second lane or tesseract measured
    2-3x slower per page on a loaded 2-core host: a descheduled thread stalls the barrier.
    `lanes` is how many will be busy (one for a one-page queue task); default PIPELINE_LANES.
    """
    return settings.models.torch_threads or max(1, usable_cores() // (lanes or settings.lanes.pipeline_lanes))


def subprocess_threads(
    settings: Settings, lanes: int | None = None, engine: str = "tatr", ocr: str | None = None
) -> int:
    """SUBPROCESS_THREADS, or for 0 the usable cores the busy lanes leave (at least 1); with the
    embedded engine or the PP-OCR engine (`ocr`, the OCR engine's name), every usable core.

    Measured on 2 cores with 2 lanes (Table Transformer, tesseract): 1 worker beside them used ~4%
    less CPU per page than 2 (fewer runnable threads than cores to share) and was as fast or faster
    end to end. The embedded engine's models take a fifth of a scanned page's CPU and OCR the rest,
    so its lanes mostly wait on the pool: 2 workers on 2 cores ran 4 dev scans in 0.81x the wall
    time of 1, same CPU. PP-OCR beside the Table Transformer is the same: its lanes waited on one
    worker, and 2 ran the bench's 6 pages in 0.72x the wall time, at 10% less CPU a page (docs/speed.md).
    """
    if settings.lanes.subprocess_threads:
        return settings.lanes.subprocess_threads
    if engine == "embedded" or ocr == "ppocr":
        return max(1, usable_cores())
    return max(1, usable_cores() - (lanes or settings.lanes.pipeline_lanes))


class SubprocessPool:
    """A thread pool for rendering and OCR; `submit` returns a Future as usual."""

    def __init__(self, threads: int) -> None:
        self._pool = ThreadPoolExecutor(max(1, threads), thread_name_prefix="tablesight-cpu")

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        return self._pool.submit(fn, *args)

    def close(self) -> None:
        """Drop work not yet started; wait for the running calls (a subprocess each, seconds)."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> SubprocessPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def timed(fn: Callable[..., T], *args: Any) -> tuple[T, float]:
    """`fn(*args)` and the seconds it took: a worker's time, reported by whoever waits on it."""
    t0 = time.perf_counter()
    value = fn(*args)
    return value, time.perf_counter() - t0


def in_order(items: list[T], work: Callable[[T], list[R]], lanes: int) -> Iterator[R]:
    """Yield `work(item)`'s results item by item, with up to `lanes` items worked on at once.

    One item, or one lane, runs in the calling thread (the queue's page tasks: signals such
    as Celery's soft time limit then interrupt the work itself). An error stops new items
    from starting and is raised when its item's turn comes; items already running finish.
    """
    if lanes <= 1 or len(items) <= 1:
        for item in items:
            yield from work(item)
        return
    pool = ThreadPoolExecutor(lanes, thread_name_prefix="tablesight-lane")
    try:
        pending: deque[Future[list[R]]] = deque(pool.submit(work, item) for item in items[:lanes])
        queued = deque(items[lanes:])
        while pending:
            done = pending.popleft().result()
            if queued:
                pending.append(pool.submit(work, queued.popleft()))
            yield from done
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
