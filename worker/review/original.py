"""The store as it was before any correction: a read-only view that answers each corrected
table's files with their `.original` copies (worker.review.versions), and everything else as
it is. Chunks, descriptions, SQL and table files read through it serve the original on request
with the same code that serves the corrected version."""

from __future__ import annotations

import builtins

from worker.review.versions import original_key
from worker.storage.base import Storage, StorageError


class OriginalView(Storage):
    def __init__(self, inner: Storage) -> None:
        self.inner = inner

    def _source(self, key: str) -> str:
        if "/tables/" in key and ".original" not in key and ".versions/" not in key:
            candidate = original_key(key)
            if self.inner.exists(candidate):
                return candidate
        return key

    def get_bytes(self, key: str) -> bytes:
        return self.inner.get_bytes(self._source(key))

    def exists(self, key: str) -> bool:
        return self.inner.exists(key)

    def list(self, prefix: str) -> builtins.list[str]:
        return [k for k in self.inner.list(prefix) if ".original" not in k and ".versions/" not in k]

    def documents(self) -> builtins.list[str]:
        return self.inner.documents()

    def location(self, key: str) -> str:
        return self.inner.location(self._source(key))

    def put_bytes(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        raise StorageError("the original view of the store is read-only")
