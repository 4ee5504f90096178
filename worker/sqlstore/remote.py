"""Stored objects as an fsspec filesystem, so DuckDB's own Parquet reader reads them.

DuckDB reads `s3://` natively only through its httpfs extension, which is downloaded on
first use; on offline nodes it is not there. Registered with DuckDB, this filesystem hands
the reader the bytes of `tablesight://<key>` from the project's Storage (boto3, with its
endpoint, credentials and retries), read-only and cached for the connection's life.
"""

from __future__ import annotations

import datetime
import io
import threading
from typing import Any

from fsspec import AbstractFileSystem

from worker.storage.base import Storage

PROTOCOL = "tablesight"
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


class StorageFileSystem(AbstractFileSystem):
    protocol = PROTOCOL
    cachable = False  # one instance per store connection, never shared through fsspec's cache

    def __init__(self, storage: Storage, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.storage = storage
        self._cache: dict[str, bytes] = {}
        self._lock = threading.Lock()

    @classmethod
    def _strip_protocol(cls, path: str) -> str:
        path = str(path)
        for p in (f"{PROTOCOL}://", f"{PROTOCOL}:"):
            if path.startswith(p):
                path = path[len(p) :]
                break
        return path.strip("/")

    def url(self, key: str) -> str:
        return f"{PROTOCOL}://{key}"

    def _bytes(self, path: str) -> bytes:
        key = self._strip_protocol(path)
        with self._lock:
            if key not in self._cache:
                try:
                    self._cache[key] = self.storage.get_bytes(key)
                except KeyError:
                    raise FileNotFoundError(path) from None
            return self._cache[key]

    def _open(self, path: str, mode: str = "rb", **kwargs: Any) -> io.BytesIO:
        if "r" not in mode or "+" in mode:
            raise PermissionError(f"{path}: the store is read-only")
        return io.BytesIO(self._bytes(path))

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        key = self._strip_protocol(path)
        if self.storage.exists(key):
            return {"name": key, "size": len(self._bytes(path)), "type": "file"}
        if self.storage.list(key):
            return {"name": key, "size": 0, "type": "directory"}
        raise FileNotFoundError(path)

    def modified(self, path: str) -> datetime.datetime:
        """Objects are read once per connection and never change under it: one fixed time."""
        self._bytes(path)
        return _EPOCH

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        key = self._strip_protocol(path)
        if self.storage.exists(key):
            entries = [key]
        else:
            depth = key.count("/") + 1 if key else 0
            entries = sorted({"/".join(k.split("/")[: depth + 1]) for k in self.storage.list(key)})
        if not detail:
            return entries
        return [{"name": e, "size": None, "type": "file" if e.endswith(".parquet") else "directory"} for e in entries]
