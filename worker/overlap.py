"""Keeping every core busy in the pipeline: worker threads for subprocess-bound work, and lanes.

Rendering (pdftoppm) and OCR (tesseract) run in subprocesses, so a thread that waits on one
holds no GIL and the work truly runs beside torch. `SubprocessPool` is that pool. Lanes keep
several page groups in flight: while one group is in a model call, another renders, waits
on OCR or writes its outputs; results still come out in the order the groups went in.
Memory stays bounded by `lanes` groups, never the document.
"""

from __future__ import annotations

import os
import threading
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
    """A thread pool for rendering and OCR; `submit` returns a Future as usual.

    `threads` may be a function, asked at the first `submit`: documents run side by side share one
    pool, sized for the OCR engine that is known only once the models have loaded."""

    def __init__(self, threads: int | Callable[[], int]) -> None:
        self._threads = threads
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot submit to a closed pool")
            if self._pool is None:
                threads = self._threads() if callable(self._threads) else self._threads
                self._pool = ThreadPoolExecutor(max(1, threads), thread_name_prefix="tablesight-cpu")
            return self._pool.submit(fn, *args)

    def close(self) -> None:
        """Drop work not yet started; wait for the running calls (a subprocess each, seconds)."""
        with self._lock:
            pool, self._pool, self._closed = self._pool, None, True
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

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


class Stopped(BaseException):
    """Documents run side by side were stopped: whoever read their results stopped reading (Ctrl-C,
    an error). A BaseException, so that no document stores it as its own failure: as with Ctrl-C in a
    document run alone, the document stopped mid-way writes no manifest and is run again whole."""


class LaneBudget:
    """The pipeline's lanes shared out among documents run side by side (worker.pipeline.documents).

    A document takes as many lanes as it has pages (at most all of them) and gives them back when
    it is done: one-page scans run `lanes` at a time, a long document alone on every lane, so no
    lane idles while short documents wait and no more than `lanes` page groups are ever in flight.
    Documents take their lanes in their turn (the order they were given in), so a long document
    waiting for every lane is not passed over by the short ones behind it.
    """

    def __init__(self, lanes: int) -> None:
        self.lanes = max(1, lanes)
        self._free = self.lanes
        self._turn = 0
        self._done_turns: set[int] = set()
        self._cond = threading.Condition()
        self.stopped = False

    def take(self, turn: int, pages: int) -> int:
        """Wait for `turn` and for the lanes `pages` pages can use; returns how many were taken."""
        want = max(1, min(self.lanes, pages))
        with self._cond:
            self._cond.wait_for(lambda: self.stopped or (self._turn == turn and self._free >= want))
            if self.stopped:
                raise Stopped
            self._free -= want
            self._pass(turn)
            return want

    def skip(self, turn: int) -> None:
        """A document that never took lanes (it could not be opened) gives up its turn."""
        with self._cond:
            self._pass(turn)

    def stop(self) -> None:
        """No document takes lanes any more, and those running stop after their page groups in flight."""
        with self._cond:
            self.stopped = True
            self._cond.notify_all()

    def give_back(self, lanes: int) -> None:
        with self._cond:
            self._free += lanes
            self._cond.notify_all()

    def _pass(self, turn: int) -> None:
        """Turns may be given up out of order (a failed open); the next turn comes when all before it have passed."""
        self._done_turns.add(turn)
        while self._turn in self._done_turns:
            self._done_turns.discard(self._turn)
            self._turn += 1
        self._cond.notify_all()


class DocumentSlot:
    """One document's place among those run side by side: the shared pool, and its turn at the lanes."""

    def __init__(self, pool: SubprocessPool, budget: LaneBudget, turn: int) -> None:
        self.pool = pool
        self.budget = budget
        self.turn = turn
        self.held = 0
        self._closed = False

    def take(self, pages: int) -> None:
        """Wait for this document's lanes (once it knows its page count); `held` says how many."""
        self.held = self.budget.take(self.turn, pages)

    def check(self) -> None:
        """Raise Stopped once the documents were stopped: called before each page group."""
        if self.budget.stopped:
            raise Stopped

    def close(self) -> None:
        """Give the lanes back, or the turn where none were taken; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if self.held:
            self.budget.give_back(self.held)
        else:
            self.budget.skip(self.turn)
