"""Request bodies: a size limit enforced while the bytes arrive, and a streaming multipart reader.

`BodyLimit` (ASGI middleware) refuses a declared Content-Length over the limit before reading
anything, and counts the bytes of every body as they come: the moment the count passes the
limit the request ends with 413, so a chunked upload that never stops costs at most the limit.
`read_upload` parses multipart/form-data with python-multipart as chunks arrive, writing each
file part straight to a temporary file (hashing it and keeping its first bytes for sniffing):
the body is never held in memory whole.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from worker.api.errors import ApiError, error_response

HEAD_BYTES = 1024  # what worker.inputs sniffs
MAX_FIELD_CHARS = 1000
MAX_FILES = 50


class BodyTooLarge(ApiError):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body over the limit of {limit} bytes (TABLESIGHT_API_MAX_UPLOAD_BYTES)")


class BodyLimit:
    """Cut any request body off at `limit` bytes, declared or streamed (chunked)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await error_response(413, str(BodyTooLarge(self.limit)), {"Connection": "close"})(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLarge(self.limit)
            return message

        await self.app(scope, counted, send)


@dataclass
class UploadedFile:
    filename: str
    path: Path
    size: int = 0
    head: bytes = b""
    sha256: str = ""


@dataclass
class Upload:
    files: list[UploadedFile] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)


def _safe_name(name: str) -> str:
    """A display name only (storage keys never use it): the last path part, printable, short."""
    name = re.split(r"[\\/]", name)[-1]
    name = "".join(ch for ch in name if ch.isprintable()).strip()
    return name[:255] or "document"


async def read_upload(request: Request, folder: Path, file_field: str = "file") -> Upload:
    """Stream a multipart body into `folder`; files of field `file_field`, the other fields as text."""
    ctype, params = parse_options_header(request.headers.get("content-type", ""))
    if ctype != b"multipart/form-data" or not params.get(b"boundary"):
        raise ApiError(415, "send the files as multipart/form-data (curl -F file=@report.pdf)")
    upload = Upload()
    state: dict[str, Any] = {"headers": {}, "name": b"", "value": b"", "file": None, "sink": None, "hash": None}

    def on_part_begin() -> None:
        state.update(headers={}, field=b"", value=b"", file=None, sink=None, hash=None, text=bytearray())

    def on_header_field(data: bytes, start: int, end: int) -> None:
        state["name"] += data[start:end]

    def on_header_value(data: bytes, start: int, end: int) -> None:
        state["value"] += data[start:end]

    def on_header_end() -> None:
        state["headers"][state["name"].lower()] = state["value"]
        state["name"], state["value"] = b"", b""

    def on_headers_finished() -> None:
        _, disp = parse_options_header(state["headers"].get(b"content-disposition", b""))
        name = disp.get(b"name", b"").decode("utf-8", "replace")
        state["field"] = name
        if b"filename" in disp:
            if name != file_field:
                raise ApiError(422, f"unexpected file field {name[:40]!r}: send files as {file_field!r}")
            if len(upload.files) >= MAX_FILES:
                raise ApiError(422, f"more than {MAX_FILES} files in one request")
            entry = UploadedFile(
                _safe_name(disp[b"filename"].decode("utf-8", "replace")), folder / f"{len(upload.files):03d}.bin"
            )
            upload.files.append(entry)
            state.update(file=entry, sink=entry.path.open("wb"), hash=hashlib.sha256())

    def on_part_data(data: bytes, start: int, end: int) -> None:
        chunk = data[start:end]
        entry: UploadedFile | None = state["file"]
        if entry is None:
            state["text"] += chunk
            if len(state["text"]) > MAX_FIELD_CHARS * 4:
                raise ApiError(422, f"form field {state['field'][:40]!r} is too long")
            return
        if len(entry.head) < HEAD_BYTES:
            entry.head += chunk[: HEAD_BYTES - len(entry.head)]
        entry.size += len(chunk)
        state["hash"].update(chunk)
        sink: IO[bytes] = state["sink"]
        sink.write(chunk)

    def on_part_end() -> None:
        entry: UploadedFile | None = state["file"]
        if entry is not None:
            state["sink"].close()
            entry.sha256 = state["hash"].hexdigest()
            state["sink"] = None
        elif state["field"]:
            text = bytes(state["text"]).decode("utf-8", "replace").strip()
            if len(text) > MAX_FIELD_CHARS:
                raise ApiError(422, f"form field {state['field'][:40]!r} is too long")
            upload.fields[state["field"]] = text

    callbacks = {
        "on_part_begin": on_part_begin,
        "on_header_field": on_header_field,
        "on_header_value": on_header_value,
        "on_header_end": on_header_end,
        "on_headers_finished": on_headers_finished,
        "on_part_data": on_part_data,
        "on_part_end": on_part_end,
    }
    parser = MultipartParser(params[b"boundary"], callbacks)  # type: ignore[arg-type]
    try:
        async for chunk in request.stream():
            parser.write(chunk)
        parser.finalize()
    except ApiError:
        raise
    except Exception as exc:  # python-multipart's parse errors: a malformed body
        raise ApiError(400, f"malformed multipart body: {exc}") from None
    finally:
        if state.get("sink") is not None:
            state["sink"].close()
    return upload


def upload_folder(base: Path | None) -> tempfile.TemporaryDirectory[str]:
    """A private folder for one request's files, removed when the request ends."""
    if base is not None:
        base.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(prefix="tablesight-upload-", dir=base)
