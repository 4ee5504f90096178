"""What a worker process keeps between tasks: settings, job state, storage, models, inputs.

Everything is built lazily in the process that uses it, and rebuilt after a fork (the pid
is checked), so the pool parent never loads models or opens storage clients its children
would inherit. Models load once per child, on its first page task.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

from worker.engines import LEGACY_ENGINE
from worker.errors import InputError
from worker.inputs import Document, open_document
from worker.queue.state import JobState
from worker.settings import Settings, get_settings
from worker.storage import Storage, storage_for

if TYPE_CHECKING:
    from worker.pipeline import Stages


class InputCache:
    """Inputs downloaded from storage to a private temp folder, the last few kept for reuse."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        base = settings.queue.work_dir
        if base is not None:
            Path(base).mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix=f"tablesight-in-{os.getpid()}-", dir=base))
        self._docs: OrderedDict[str, Document] = OrderedDict()

    def get(self, storage: Storage, key: str, sha256: str) -> Document:
        """The validated document stored under `key` (InputError if it is bad or has changed)."""
        doc = self._docs.get(key)
        if doc is not None and doc.path.exists():
            self._docs.move_to_end(key)
            return doc
        try:
            data = storage.get_bytes(key)
        except KeyError:
            raise InputError(key, "the uploaded input is missing from storage") from None
        path = self.dir / f"{sha256[:32]}.bin"
        path.write_bytes(data)
        del data
        try:
            doc = open_document(path, settings=self.settings)
        except InputError as exc:
            path.unlink(missing_ok=True)
            raise InputError(key, exc.reason) from None
        if doc.sha256 != sha256:
            path.unlink(missing_ok=True)
            raise InputError(key, "the stored input does not match its content hash")
        self._docs[key] = doc
        while len(self._docs) > self.settings.queue.input_cache_files:
            _, old = self._docs.popitem(last=False)
            old.path.unlink(missing_ok=True)
        return doc

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        self._docs.clear()


class Runtime:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.pid = os.getpid()
        self.state = JobState.from_settings(settings)
        self._storage: Storage | None = None
        self._inputs: InputCache | None = None
        self._stages: dict[tuple[str, str], Stages] = {}

    @property
    def storage(self) -> Storage:
        if self._storage is None:
            self._storage = storage_for(self.settings)
        return self._storage

    @property
    def inputs(self) -> InputCache:
        if self._inputs is None:
            self._inputs = InputCache(self.settings)
        return self._inputs

    def stages(self, tables: str, engine: str = LEGACY_ENGINE) -> Stages:
        """The models of a job's engine, loaded on first use in this process and kept for its lifetime."""
        if (tables, engine) not in self._stages:
            from worker.pipeline import load_stages

            self._stages[tables, engine] = load_stages(self.settings, tables=tables, engine=engine)
        return self._stages[tables, engine]

    def close(self) -> None:
        if self._inputs is not None:
            self._inputs.close()


_runtime: Runtime | None = None


def runtime() -> Runtime:
    """This process's runtime (a fresh one after a fork)."""
    global _runtime
    if _runtime is None or _runtime.pid != os.getpid():
        _runtime = Runtime(get_settings())
    return _runtime


def shutdown() -> None:
    global _runtime
    if _runtime is not None and _runtime.pid == os.getpid():
        _runtime.close()
    _runtime = None
