"""The storage contract every backend keeps: keys from our own ids, atomic whole-object writes."""

from __future__ import annotations

import builtins
import json
import re
from abc import ABC, abstractmethod
from typing import Any

from worker.errors import TablesightError

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*$")


class StorageError(TablesightError):
    """A storage operation failed; `transient` says whether retrying may help."""

    def __init__(self, message: str, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient

    def __reduce__(self):
        return (type(self), (str(self), self.transient))


def validate_key(key: str) -> str:
    """Refuse anything that could leave the store's prefix (`..`, absolute, odd characters)."""
    if not _KEY.match(key) or ".." in key.split("/") or len(key) > 512:
        raise StorageError(f"invalid storage key {key[:80]!r}")
    return key


class Storage(ABC):
    """Objects addressed by `<doc_id>/...` keys. A reader never sees a half-written object."""

    @abstractmethod
    def put_bytes(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None: ...

    @abstractmethod
    def get_bytes(self, key: str) -> bytes:
        """Raise KeyError when the key does not exist."""

    @abstractmethod
    def exists(self, key: str) -> bool: ...

    @abstractmethod
    def list(self, prefix: str) -> list[str]:
        """Keys under `prefix/`, sorted."""

    def delete(self, key: str) -> bool:
        """Remove one object; True when it existed (deleting a missing key is not an error)."""
        raise StorageError(f"{type(self).__name__} cannot delete")

    def put_file(self, key: str, path: str, content_type: str = "application/octet-stream") -> None:
        """Store a local file without holding it in memory (backends stream it; this default reads it)."""
        with open(path, "rb") as fh:
            self.put_bytes(key, fh.read(), content_type)

    def documents(self) -> builtins.list[str]:
        """Top-level names that hold a `manifest.json` (every stored document), sorted."""
        raise StorageError(f"{type(self).__name__} cannot list documents")

    @abstractmethod
    def location(self, key: str) -> str:
        """Where a person finds the object (a path or an s3:// URL)."""

    def put_json(self, key: str, obj: Any) -> None:
        self.put_bytes(key, json.dumps(obj, ensure_ascii=False, indent=1).encode("utf-8"), "application/json")

    def get_json(self, key: str) -> Any:
        return json.loads(self.get_bytes(key).decode("utf-8"))

    def put_text(self, key: str, text: str, content_type: str = "text/plain; charset=utf-8") -> None:
        self.put_bytes(key, text.encode("utf-8"), content_type)
