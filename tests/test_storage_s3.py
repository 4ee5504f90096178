"""S3 storage against a real S3 API (moto's server mode on a loopback port): the same contract
as the local folder, keys kept under the prefix, botocore errors mapped to transient or not."""

from __future__ import annotations

import http.server
import threading
import uuid

import boto3
import pytest
from moto.server import ThreadedMotoServer

from worker.storage import LocalStorage, Storage, StorageError, open_storage
from worker.storage.s3 import S3Storage


@pytest.fixture(scope="module")
def s3_endpoint():
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(autouse=True)
def aws_credentials(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)


def make_bucket(endpoint: str, name: str) -> None:
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket=name)


@pytest.fixture(params=["local", "s3"])
def store(request, tmp_path, s3_endpoint) -> Storage:
    if request.param == "local":
        return LocalStorage(tmp_path / "store")
    bucket = f"contract-{uuid.uuid4().hex[:12]}"
    make_bucket(s3_endpoint, bucket)
    return open_storage(f"s3://{bucket}/runs/one", s3_endpoint_url=s3_endpoint)


def test_the_same_contract_on_both_backends(store):
    store.put_bytes("abc/tables/p0001-t01.png", b"\x89PNG...", "image/png")
    store.put_text("abc/tables/p0001-t01.html", "<table></table>\n", "text/html; charset=utf-8")
    store.put_json("abc/manifest.json", {"status": "complete", "tables": [1, 2], "name": "é"})
    store.put_bytes("abd/manifest.json", b"{}")
    assert store.get_bytes("abc/tables/p0001-t01.png") == b"\x89PNG..."
    assert store.get_json("abc/manifest.json") == {"status": "complete", "tables": [1, 2], "name": "é"}
    assert store.exists("abc/manifest.json") and not store.exists("abc/nothing.json")
    assert store.list("abc") == ["abc/manifest.json", "abc/tables/p0001-t01.html", "abc/tables/p0001-t01.png"]
    assert store.list("ab") == [] and store.list("abc/tables") == [
        "abc/tables/p0001-t01.html",
        "abc/tables/p0001-t01.png",
    ]
    with pytest.raises(KeyError):
        store.get_bytes("abc/missing.json")
    store.put_json("abc/manifest.json", {"status": "failed"})  # a whole replacement, never a mix
    assert store.get_json("abc/manifest.json") == {"status": "failed"}
    assert store.location("abc/manifest.json").endswith("abc/manifest.json")


@pytest.mark.parametrize(
    "key",
    [
        "../escape",
        "abc/../../etc/passwd",
        "/abs/key",
        "abc//x",
        "abc/.hidden",
        "a b",
        "",
        "abc/",
        "x" * 600,
        "abc/\x00",
    ],
)
def test_keys_cannot_leave_the_prefix(store, key):
    with pytest.raises(StorageError):
        store.put_bytes(key, b"x")
    with pytest.raises(StorageError):
        store.get_bytes(key)


def test_prefix_isolation_and_locations(s3_endpoint):
    make_bucket(s3_endpoint, "shared-bucket")
    one = S3Storage.from_url("s3://shared-bucket/tenant-a", endpoint_url=s3_endpoint)
    two = S3Storage.from_url("s3://shared-bucket/tenant-b/", endpoint_url=s3_endpoint)
    bare = S3Storage.from_url("s3://shared-bucket", endpoint_url=s3_endpoint)
    one.put_bytes("doc/manifest.json", b"a")
    two.put_bytes("doc/manifest.json", b"b")
    assert one.get_bytes("doc/manifest.json") == b"a" and two.get_bytes("doc/manifest.json") == b"b"
    assert one.list("doc") == ["doc/manifest.json"]
    assert bare.list("tenant-a") == ["tenant-a/doc/manifest.json"]
    assert one.location("doc/manifest.json") == "s3://shared-bucket/tenant-a/doc/manifest.json"
    raw = boto3.client("s3", endpoint_url=s3_endpoint).get_object(
        Bucket="shared-bucket", Key="tenant-a/doc/manifest.json"
    )
    assert raw["Body"].read() == b"a"


@pytest.mark.parametrize("url", ["s3://", "s3:///prefix", "s3://Bad_Bucket/x", "s3://bucket/../x", "s3://b/x?y=1"])
def test_bad_urls_are_refused(url):
    with pytest.raises(StorageError):
        S3Storage.from_url(url)


def test_missing_bucket_is_permanent(s3_endpoint):
    store = S3Storage.from_url("s3://no-such-bucket/p", endpoint_url=s3_endpoint)
    with pytest.raises(StorageError) as info:
        store.put_bytes("doc/manifest.json", b"{}")
    assert info.value.transient is False and "NoSuchBucket" in str(info.value)
    with pytest.raises(StorageError) as info:
        store.list("doc")
    assert info.value.transient is False


def test_unreachable_endpoint_is_transient():
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = S3Storage("bucket", "p", endpoint_url=f"http://127.0.0.1:{port}", max_attempts=1, connect_timeout=1)
    with pytest.raises(StorageError) as info:
        store.put_bytes("doc/x.json", b"{}")
    assert info.value.transient is True


class _Answer(http.server.BaseHTTPRequestHandler):
    """An S3-like endpoint that answers every request with one fixed error."""

    protocol_version = "HTTP/1.1"  # answers `Expect: 100-continue` at once
    status, code = 503, "SlowDown"

    def _reply(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        body = (
            f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{self.code}</Code>"
            f"<Message>{self.code}</Message></Error>"
        ).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_PUT = do_HEAD = _reply

    def log_message(self, *args) -> None:
        pass


@pytest.mark.parametrize(
    "status,code,transient", [(503, "SlowDown", True), (500, "InternalError", True), (403, "AccessDenied", False)]
)
def test_error_answers_map_to_transient_or_permanent(status, code, transient):
    handler = type("Handler", (_Answer,), {"status": status, "code": code})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        store = S3Storage("bucket", "p", endpoint_url=f"http://127.0.0.1:{server.server_port}", max_attempts=1)
        with pytest.raises(StorageError) as info:
            store.put_bytes("doc/x.json", b"{}")
        assert info.value.transient is transient and code in str(info.value)
        with pytest.raises(StorageError) as info:
            store.get_bytes("doc/x.json")
        assert info.value.transient is transient
    finally:
        server.shutdown()
        server.server_close()
