"""Where outputs live: a local folder by default, an S3-compatible store for many nodes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from worker.storage.base import Storage, StorageError, validate_key
from worker.storage.local import LocalStorage

if TYPE_CHECKING:
    from worker.settings import Settings


def open_storage(url: str, *, s3_endpoint_url: str | None = None) -> Storage:
    """A local folder path, or `s3://bucket/prefix`."""
    if url.startswith("s3://"):
        from worker.storage.s3 import S3Storage

        return S3Storage.from_url(url, endpoint_url=s3_endpoint_url)
    if "://" in url and not url.startswith("file://"):
        raise StorageError(f"unsupported storage URL {url!r}: use a folder path or s3://bucket/prefix")
    return LocalStorage(url.removeprefix("file://"))


def storage_for(settings: Settings, folder: str | Path | None = None) -> Storage:
    """The store a command writes to: an explicit folder (`--out`), else TABLESIGHT_STORAGE_URL."""
    if folder is not None:
        return LocalStorage(folder)
    return open_storage(settings.store.storage_url, s3_endpoint_url=settings.store.s3_endpoint_url)


__all__ = ["LocalStorage", "Storage", "StorageError", "open_storage", "storage_for", "validate_key"]
