"""https callbacks go to the address that was checked, with the name in SNI and the
certificate verified against it (a real TLS server on loopback, a private CA made here)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from helpers import isolated_settings

from worker.queue.callback_tasks import _Retryable, deliver
from worker.queue.callbacks import SIGNATURE_HEADER, TIMESTAMP_HEADER, build_request, resolve_checked, verify

SECRET = "s3cret"


def _pem(path: Path, obj: Any) -> Path:
    path.write_bytes(obj.public_bytes(serialization.Encoding.PEM))
    return path


def _certs(folder: Path, name: str) -> tuple[Path, Path, Path]:
    """A CA, and a server certificate for `name` signed by it: (ca.pem, cert.pem, key.pem)."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "tablesight test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(2)
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key_pem = folder / f"{name}.key"
    key_pem.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return _pem(folder / "ca.pem", ca), _pem(folder / f"{name}.pem", cert), key_pem


class _Receiver:
    """An HTTPS server on the address `localhost` is checked to, recording each POST."""

    def __init__(self, address: str, cert: Path, key: Path) -> None:
        self.posts: list[tuple[dict[str, str], bytes]] = []
        posts = self.posts

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server interface
                body = self.rfile.read(int(self.headers["Content-Length"]))
                posts.append((dict(self.headers), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        family = ThreadingHTTPServer.address_family
        if ipaddress.ip_address(address).version == 6:
            import socket

            family = socket.AF_INET6

        class Server(ThreadingHTTPServer):
            address_family = family

        self.server = Server((address, 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def address() -> str:
    return resolve_checked("localhost", 443, "localhost,127.0.0.0/8,::1")


@pytest.fixture
def receiver(tmp_path: Path, address: str) -> Iterator[tuple[_Receiver, Path]]:
    ca, cert, key = _certs(tmp_path, "localhost")
    r = _Receiver(address, cert, key)
    yield r, ca
    r.close()


def _job() -> dict[str, Any]:
    return {"job_id": "a" * 32, "doc_id": "d" * 16, "status": "complete", "pages_total": 1, "pages_done": 1}


def _settings(ca: Path) -> Any:
    return isolated_settings(
        api={"callback_secret": SECRET, "callback_hosts": "localhost,127.0.0.0/8,::1", "callback_ca_file": str(ca)}
    )


def test_https_callback_connects_to_the_checked_address_and_verifies_the_name(receiver, address):
    server, ca = receiver
    job = _job() | {"callback_url": f"https://localhost:{server.port}/hook?x=1"}
    req = build_request(job["callback_url"], job, SECRET, "localhost,127.0.0.0/8,::1")
    literal = f"[{address}]" if ":" in address else address
    assert req.url == f"https://{literal}:{server.port}/hook?x=1"  # no second lookup of the name
    assert req.sni_hostname == "localhost" and req.headers["Host"] == f"localhost:{server.port}"

    assert deliver(job, _settings(ca)) == 204
    [(headers, body)] = server.posts
    assert headers["Host"] == f"localhost:{server.port}"
    assert verify(SECRET, headers[TIMESTAMP_HEADER], body, headers[SIGNATURE_HEADER])
    assert json.loads(body)["job_id"] == job["job_id"]


def test_a_certificate_for_another_name_is_refused(tmp_path, address):
    ca, cert, key = _certs(tmp_path, "elsewhere.test")
    server = _Receiver(address, cert, key)
    try:
        job = _job() | {"callback_url": f"https://localhost:{server.port}/hook"}
        with pytest.raises(_Retryable, match="CERTIFICATE_VERIFY_FAILED|certificate"):
            deliver(job, _settings(ca))
        assert server.posts == []
    finally:
        server.close()
