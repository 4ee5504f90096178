"""End-of-job callbacks: where they may go (an allow-list against SSRF), how they are signed.

A job submitted with `callback_url` gets one POST when it ends (complete, partial, failed or
cancelled). The body is JSON; the request carries

    X-Tablesight-Timestamp: <unix seconds>
    X-Tablesight-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<body>" with TABLESIGHT_API_CALLBACK_SECRET>
    Idempotency-Key: <job id>.<status>      (the same on every retry: a receiver dedupes on it)

so a receiver checks who sent it and refuses replays of old bodies. Only hosts listed in
TABLESIGHT_API_CALLBACK_HOSTS are called. The host is resolved and every address checked at
send time: private, loopback, link-local and other non-global addresses are refused unless
an IP address or CIDR network in the list covers them; for http the connection goes to the
checked address (no second lookup a DNS rebinding could change). Redirects are not followed.
The sending itself is a task of its own (`worker.queue.callback_tasks`), so retries never
hold up page tasks.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import socket
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from worker.errors import TablesightError

SIGNATURE_HEADER = "X-Tablesight-Signature"
TIMESTAMP_HEADER = "X-Tablesight-Timestamp"
IDEMPOTENCY_HEADER = "Idempotency-Key"
MAX_URL_CHARS = 2000

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class CallbackRefused(TablesightError, ValueError):
    """A callback URL this deployment will not call (not allowed, malformed, or a private address)."""


@dataclass(frozen=True)
class AllowList:
    """TABLESIGHT_API_CALLBACK_HOSTS parsed: host names (`*.example.com` for subdomains), and IP
    addresses or networks, which also allow the private/loopback addresses they cover."""

    hosts: frozenset[str]
    suffixes: tuple[str, ...]
    networks: tuple[IpNetwork, ...]

    @classmethod
    def parse(cls, text: str) -> AllowList:
        hosts, suffixes, networks = set(), [], []
        for raw in text.split(","):
            entry = raw.strip().lower().strip("[]")
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
                continue
            except ValueError:
                pass
            if entry.startswith("*."):
                suffixes.append(entry[1:])
            else:
                hosts.add(entry.rstrip("."))
        return cls(frozenset(hosts), tuple(suffixes), tuple(networks))

    def names(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        if host in self.hosts or any(host.endswith(s) for s in self.suffixes):
            return True
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(ip in n for n in self.networks)

    def covers(self, ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        return any(ip in n for n in self.networks)


def check_url(url: str, allowed: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a callback URL the allow-list names; CallbackRefused otherwise.
    Checks the URL only: the addresses are checked when it is called (`resolve_checked`)."""
    if not allowed.strip():
        raise CallbackRefused("callbacks are off: set TABLESIGHT_API_CALLBACK_HOSTS to the hosts they may go to")
    if len(url) > MAX_URL_CHARS or any(ch.isspace() or not ch.isprintable() for ch in url):
        raise CallbackRefused("callback_url is too long or has spaces or control characters")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CallbackRefused("callback_url must be an http:// or https:// URL with a host")
    if parts.username or parts.password:
        raise CallbackRefused("callback_url must not carry credentials")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise CallbackRefused("callback_url has a bad port") from None
    host = parts.hostname
    if not AllowList.parse(allowed).names(host):
        raise CallbackRefused(f"callback host {host[:80]!r} is not in TABLESIGHT_API_CALLBACK_HOSTS")
    return parts.scheme, host, port


def resolve_checked(host: str, port: int, allowed: str) -> str:
    """One address of `host` to connect to, after checking every address it resolves to:
    non-global ones (private, loopback, link-local, reserved) only where the list covers them."""
    allow = AllowList.parse(allowed)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise CallbackRefused(f"callback host {host[:80]!r} does not resolve: {exc}") from None
    addresses = sorted({str(info[4][0]).split("%")[0] for info in infos})
    if not addresses:
        raise CallbackRefused(f"callback host {host[:80]!r} has no address")
    for text in addresses:
        ip = ipaddress.ip_address(text)
        if ip.is_multicast or ip.is_unspecified:
            raise CallbackRefused(f"callback host {host[:80]!r} resolves to {text}, which is never called")
        if not ip.is_global and not allow.covers(ip):
            raise CallbackRefused(
                f"callback host {host[:80]!r} resolves to the non-public address {text}: "
                "list that address or its network in TABLESIGHT_API_CALLBACK_HOSTS to allow it"
            )
    return addresses[0]


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """`v1=<hex>`: HMAC-SHA256 of `<timestamp>.<body>` with the deployment's secret."""
    mac = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return f"v1={mac.hexdigest()}"


def verify(secret: str, timestamp: str, body: bytes, signature: str, *, tolerance: float = 300.0) -> bool:
    """What a receiver does: the signature matches and the timestamp is recent."""
    try:
        fresh = abs(time.time() - float(timestamp)) <= tolerance
    except ValueError:
        return False
    return fresh and hmac.compare_digest(sign(secret, timestamp, body), signature)


def payload(job: dict[str, Any]) -> dict[str, Any]:
    """The callback body: what ended, how, and where to fetch the result."""
    job_id, doc_id = job["job_id"], job.get("doc_id")
    return {
        "event": "job.ended",
        "job_id": job_id,
        "doc_id": doc_id,
        "status": job.get("status"),
        "source": job.get("source"),
        "pages_total": int(job.get("pages_total") or 0),
        "pages_done": int(job.get("pages_done") or 0),
        "pages_failed": int(job.get("pages_failed") or 0),
        "tables": int(job["tables"]) if str(job.get("tables") or "").isdigit() else None,
        "reason": job.get("reason") or None,
        "finished_at": job.get("finished_at") or None,
        "links": {"job": f"/v1/jobs/{job_id}", "result": f"/v1/jobs/{job_id}/result"},
    }


@dataclass
class Request:
    url: str  # the URL to connect to: the checked address in place of the host
    headers: dict[str, str]
    body: bytes
    sni_hostname: str | None = None  # https: the name TLS sends and the certificate must match


def build_request(url: str, job: dict[str, Any], secret: str, allowed: str) -> Request:
    """The signed request for `job`'s callback, aimed at a checked address (CallbackRefused)."""
    if not secret:
        raise CallbackRefused("no TABLESIGHT_API_CALLBACK_SECRET: callbacks are not sent unsigned")
    scheme, host, port = check_url(url, allowed)
    address = resolve_checked(host, port, allowed)
    body = json.dumps(payload(job), ensure_ascii=False, sort_keys=True).encode("utf-8")
    timestamp = str(int(time.time()))
    parts = urlsplit(url)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "tablesight-callback",
        TIMESTAMP_HEADER: timestamp,
        SIGNATURE_HEADER: sign(secret, timestamp, body),
        IDEMPOTENCY_HEADER: f"{job['job_id']}.{job.get('status')}",
    }
    # connect to the address just checked, never to a second lookup of the name (DNS rebinding);
    # https sends the name in SNI and verifies the certificate against it
    literal = f"[{address}]" if ":" in address else address
    target = urlunsplit((scheme, f"{literal}:{port}", parts.path or "/", parts.query, ""))
    headers["Host"] = parts.netloc
    return Request(target, headers, body, sni_hostname=host if scheme == "https" else None)
