"""Who may call: bearer tokens from TABLESIGHT_API_TOKENS, or the review page's session cookie.

Tokens are kept only as SHA-256 digests and compared with `hmac.compare_digest` against every
configured one (no early exit). The cookie holds an HMAC derived from a token's digest, never
the token: removing a token from the settings ends its sessions too. Cookie-authenticated
requests that change something must carry the page's CSRF token in a header, which a foreign
site cannot set; any unsafe request from a foreign Origin is refused outright (this also
guards the no-token loopback mode against drive-by requests from a browser).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass
from urllib.parse import urlsplit

from fastapi import Request

from worker.api.errors import ApiError

COOKIE = "tablesight_session"
CSRF_HEADER = "X-CSRF-Token"
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def split_csv(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


@dataclass(frozen=True)
class Caller:
    """How a request was authenticated: `bearer`, `cookie`, or `open` (no tokens configured)."""

    via: str
    session: str = ""
    who: str = "open"  # which credential: `token:<first 8 hex of its SHA-256>` (never the token)


class Auth:
    def __init__(self, tokens: str, cors_origins: list[str] | None = None) -> None:
        self._digests = [_digest(t) for t in split_csv(tokens)]
        self.enabled = bool(self._digests)
        # Same tokens, same secret: replicas behind one load balancer accept each other's cookies.
        self._secret = (
            hashlib.sha256(b"tablesight-api-session|" + b"".join(sorted(self._digests))).digest()
            if self.enabled
            else os.urandom(32)
        )
        self.cors_origins = set(cors_origins or [])

    # --- tokens and sessions ---------------------------------------------------------------
    def valid_token(self, token: str) -> bool:
        presented = _digest(token)
        ok = False
        for known in self._digests:
            ok |= hmac.compare_digest(presented, known)
        return ok

    def _session_of(self, digest: bytes) -> str:
        return hmac.new(self._secret, b"session|" + digest, hashlib.sha256).hexdigest()

    def session_for(self, token: str) -> str:
        return self._session_of(_digest(token))

    def valid_session(self, session: str) -> bool:
        return self._session_digest(session) is not None

    def _session_digest(self, session: str) -> bytes | None:
        """The digest of the token a session was made from (every one compared, no early exit)."""
        found = None
        for known in self._digests:
            if hmac.compare_digest(session.encode(), self._session_of(known).encode()):
                found = known
        return found

    def csrf_for(self, session: str) -> str:
        return hmac.new(self._secret, b"csrf|" + session.encode(), hashlib.sha256).hexdigest()

    # --- per request -----------------------------------------------------------------------
    def caller(self, request: Request) -> Caller | None:
        """The caller, or None when no valid credentials came with the request."""
        if not self.enabled:
            return Caller("open", "open")
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if header:
            if scheme.lower() == "bearer" and token.strip() and self.valid_token(token.strip()):
                return Caller("bearer", who=f"token:{_digest(token.strip()).hex()[:8]}")
            return None
        session = request.cookies.get(COOKIE, "")
        digest = self._session_digest(session) if session else None
        if digest is not None:
            return Caller("cookie", session, who=f"token:{digest.hex()[:8]}")
        return None

    def require(self, request: Request) -> Caller:
        """The FastAPI dependency of every /v1 route: 401 without credentials, 403 on cross-site writes."""
        caller = self.caller(request)
        if caller is None:
            given = "invalid bearer token" if request.headers.get("authorization") else "missing bearer token"
            raise ApiError(401, f"{given}: send Authorization: Bearer <token>", {"WWW-Authenticate": "Bearer"})
        if request.method in UNSAFE:
            self.check_origin(request)
            if caller.via == "cookie":
                sent = request.headers.get(CSRF_HEADER, "")
                if not hmac.compare_digest(sent.encode(), self.csrf_for(caller.session).encode()):
                    raise ApiError(403, f"missing or wrong {CSRF_HEADER} header (reload the page)")
        request.state.caller = caller
        return caller

    def check_origin(self, request: Request) -> None:
        """Refuse an unsafe request a browser sent from another site (Origin not this host, not allowed)."""
        origin = request.headers.get("origin")
        if not origin or origin in self.cors_origins:
            return
        if urlsplit(origin).netloc != request.headers.get("host", ""):
            raise ApiError(403, f"cross-site request from {origin[:80]!r} refused")
