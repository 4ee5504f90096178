"""An S3-compatible object store (AWS S3, MinIO, Ceph, ...) with the LocalStorage contract.

`s3://bucket/prefix`: every key lives under `prefix/`, and keys pass `validate_key`, so
nothing a user sends can leave the prefix. A PUT replaces an object whole (S3 never shows
a half-written object), which is the atomic write the contract asks for. Credentials come
the usual AWS way (environment, shared config/credentials files, instance or pod roles);
`endpoint_url` (TABLESIGHT_S3_ENDPOINT_URL) points at a non-AWS store.

Errors become `StorageError`: transient (retry may help) for throttling, 5xx, timeouts and
connection failures; permanent for a missing bucket, denied access or bad credentials.
"""

from __future__ import annotations

import builtins
import os
import re
from typing import Any
from urllib.parse import urlparse

from worker.storage.base import Storage, StorageError, validate_key

_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_TRANSIENT_CODES = {
    "SlowDown",
    "Throttling",
    "ThrottlingException",
    "RequestTimeout",
    "RequestTimeTooSkewed",
    "InternalError",
    "ServiceUnavailable",
    "RequestLimitExceeded",
    "TooManyRequests",
    "OperationAborted",
    "BandwidthLimitExceeded",
}
_MISSING_KEY_CODES = {"NoSuchKey", "404", "NotFound"}


class S3Storage(Storage):
    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        region_name: str | None = None,
        max_attempts: int = 4,
        connect_timeout: float = 5.0,
        read_timeout: float = 60.0,
    ) -> None:
        if not _BUCKET.match(bucket):
            raise StorageError(f"invalid S3 bucket name {bucket[:80]!r}")
        prefix = prefix.strip("/")
        if prefix:
            validate_key(prefix)
        self.bucket = bucket
        self.prefix = f"{prefix}/" if prefix else ""
        self.endpoint_url = endpoint_url
        self.region_name = region_name
        self._client_args = dict(max_attempts=max_attempts, connect_timeout=connect_timeout, read_timeout=read_timeout)
        self._client: Any = None
        self._pid = -1

    @classmethod
    def from_url(cls, url: str, *, endpoint_url: str | None = None, **kwargs: Any) -> S3Storage:
        parsed = urlparse(url)
        if parsed.scheme != "s3" or not parsed.netloc or parsed.query or parsed.fragment:
            raise StorageError(f"not an S3 URL {url[:120]!r}: use s3://bucket/prefix")
        return cls(parsed.netloc, parsed.path, endpoint_url=endpoint_url, **kwargs)

    @property
    def client(self) -> Any:
        """A boto3 client per process: clients (and their connection pools) do not survive fork."""
        if self._client is None or self._pid != os.getpid():
            import boto3
            from botocore.config import Config

            a = self._client_args
            config = Config(
                retries={"mode": "standard", "max_attempts": a["max_attempts"]},
                connect_timeout=a["connect_timeout"],
                read_timeout=a["read_timeout"],
                max_pool_connections=32,
            )
            self._client = boto3.session.Session().client(
                "s3", endpoint_url=self.endpoint_url, region_name=self.region_name, config=config
            )
            self._pid = os.getpid()
        return self._client

    def _key(self, key: str) -> str:
        return self.prefix + validate_key(key)

    def put_bytes(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        full = self._key(key)
        try:
            self.client.put_object(Bucket=self.bucket, Key=full, Body=data, ContentType=content_type)
        except Exception as exc:
            raise _storage_error(exc, f"cannot write {self._url(full)}") from exc

    def put_file(self, key: str, path: str, content_type: str = "application/octet-stream") -> None:
        """boto3's managed upload: read in parts (multipart above 8 MiB), never whole in memory."""
        full = self._key(key)
        try:
            self.client.upload_file(str(path), self.bucket, full, ExtraArgs={"ContentType": content_type})
        except Exception as exc:
            if type(exc).__name__ == "S3UploadFailedError":  # boto3's wrapper of the part that failed
                raise StorageError(f"cannot write {self._url(full)}: {exc}", transient=True) from exc
            raise _storage_error(exc, f"cannot write {self._url(full)}") from exc

    def delete(self, key: str) -> bool:
        full = self._key(key)
        try:
            existed = self.exists(key)
            self.client.delete_object(Bucket=self.bucket, Key=full)
        except Exception as exc:
            raise _storage_error(exc, f"cannot delete {self._url(full)}") from exc
        return existed

    def get_bytes(self, key: str) -> bytes:
        full = self._key(key)
        try:
            return self.client.get_object(Bucket=self.bucket, Key=full)["Body"].read()
        except Exception as exc:
            if _code(exc) in _MISSING_KEY_CODES:
                raise KeyError(key) from None
            raise _storage_error(exc, f"cannot read {self._url(full)}") from exc

    def exists(self, key: str) -> bool:
        full = self._key(key)
        try:
            self.client.head_object(Bucket=self.bucket, Key=full)
            return True
        except Exception as exc:
            if _code(exc) in _MISSING_KEY_CODES:
                return False
            raise _storage_error(exc, f"cannot check {self._url(full)}") from exc

    def list(self, prefix: str) -> list[str]:
        base = self._key(prefix).rstrip("/") + "/"
        keys: list[str] = []
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=base):
                keys += [obj["Key"][len(self.prefix) :] for obj in page.get("Contents", [])]
        except Exception as exc:
            raise _storage_error(exc, f"cannot list {self._url(base)}") from exc
        return sorted(keys)

    def documents(self) -> builtins.list[str]:
        names: list[str] = []
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self.prefix, Delimiter="/"
            )
            for page in pages:
                names += [p["Prefix"][len(self.prefix) :].rstrip("/") for p in page.get("CommonPrefixes", [])]
        except Exception as exc:
            raise _storage_error(exc, f"cannot list {self._url(self.prefix)}") from exc
        return sorted(n for n in names if _valid_name(n) and self.exists(f"{n}/manifest.json"))

    def location(self, key: str) -> str:
        return self._url(self._key(key))

    def _url(self, full_key: str) -> str:
        return f"s3://{self.bucket}/{full_key}"


def _valid_name(name: str) -> bool:
    try:
        validate_key(name)
        return "/" not in name
    except StorageError:
        return False


def _code(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


def _status(exc: BaseException) -> int:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return int(response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
    return 0


def _storage_error(exc: BaseException, what: str) -> StorageError:
    """Map a botocore error to StorageError with `transient` set as a retry policy needs."""
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        ConnectionError,
        HTTPClientError,
        NoCredentialsError,
        PartialCredentialsError,
    )

    if isinstance(exc, StorageError):
        return exc
    if isinstance(exc, ClientError):
        code, status = _code(exc), _status(exc)
        transient = code in _TRANSIENT_CODES or status >= 500 or status == 429
        return StorageError(
            f"{what}: {code or status} {exc.response.get('Error', {}).get('Message', '')}".strip(), transient=transient
        )
    if isinstance(exc, (NoCredentialsError, PartialCredentialsError)):
        return StorageError(f"{what}: no usable AWS credentials ({exc})", transient=False)
    if isinstance(exc, (ConnectionError, HTTPClientError)):
        return StorageError(f"{what}: {exc}", transient=True)
    if isinstance(exc, BotoCoreError):
        return StorageError(f"{what}: {exc}", transient=False)
    if isinstance(exc, OSError):
        return StorageError(f"{what}: {exc}", transient=True)
    raise exc
