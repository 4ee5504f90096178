"""Cache headers for stored outputs.

A table's key is derived from the input's content hash, but not its bytes: extracting the same
document again with other options (dpi, `--tables page`) or another model version rewrites
the same key, and a forced vision read replaces the last one. So a plain URL answers with a
strong ETag of the bytes and `no-cache` (revalidate: a 304 costs nothing), while a URL pinned
to those bytes with `?v=<etag>` is truly content-addressed and is served `immutable` for a
year; the review page links crops that way. Everything is `private`: it sits behind a token.
"""

from __future__ import annotations

import hashlib

from fastapi import Request
from fastapi.responses import Response

PINNED = "private, max-age=31536000, immutable"
REVALIDATE = "private, no-cache"


def etag_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def _matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    if header.strip() == "*":
        return True
    return any(part.strip().removeprefix("W/").strip('"') == etag for part in header.split(","))


def cached_response(request: Request, data: bytes, media_type: str, extra: dict[str, str] | None = None) -> Response:
    """`data` with its ETag; 304 when the client has it; immutable when the URL pins this version."""
    etag = etag_of(data)
    pinned = request.query_params.get("v") == etag
    headers = {
        "ETag": f'"{etag}"',
        "Cache-Control": PINNED if pinned else REVALIDATE,
        "X-Content-Type-Options": "nosniff",
        **(extra or {}),
    }
    if _matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    return Response(content=data, media_type=media_type, headers=headers)
