"""The service stack for the issue-24 tests: a real redis-server, a real Celery worker running
the embedded engine (pretrained ONNX models out of pinned wheels, so tables have real
structure), `tablesight serve` in a subprocess, local storage or S3 (moto in server mode),
and a loopback receiver for job callbacks that records what it was sent."""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
from api_fixtures import ApiServer
from queue_fixtures import RedisServer, Worker, worker_env

from worker.storage import LocalStorage, Storage

TOKEN = "svc-token-0123456789"
SECRET = "callback-secret-for-tests"
AWS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """An HTTP server on 127.0.0.1: `/ok` answers 200, `/flaky` 500 twice then 200, `/redirect`
    302 to `/ok-after-redirect`, `/gone` 410. Every request is kept in `received`."""

    received: list[Received] = field(default_factory=list)
    flaky_left: int = 2

    def __post_init__(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server interface
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if self.path == "/flaky" and receiver.flaky_left > 0:
                    receiver.flaky_left -= 1
                    self.send_response(500)
                elif self.path == "/redirect":
                    self.send_response(302)
                    self.send_header("Location", f"http://127.0.0.1:{receiver.port}/ok-after-redirect")
                elif self.path == "/gone":
                    self.send_response(410)
                else:
                    self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def at(self, path: str) -> list[Received]:
        return [r for r in self.received if r.path == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Stack:
    backend: str
    http: ApiServer
    worker: Worker
    redis: RedisServer
    storage: Storage
    env: dict[str, str]
    root: Path
    receiver: Receiver
    moto: Any = None

    def stop(self) -> None:
        self.http.stop()
        self.worker.kill()
        self.redis.stop()
        self.receiver.close()
        if self.moto is not None:
            self.moto.stop()


def start_stack(backend: str, root: Path, tiny_models: dict[str, Path], **settings: Any) -> Stack:
    """Everything running; `settings` become TABLESIGHT_* of both the worker and the API."""
    import os

    from worker.storage.s3 import S3Storage

    receiver = Receiver()
    redis = RedisServer(root / "redis").start()
    moto = None
    extra: dict[str, Any] = {}
    if backend == "s3":
        from moto.server import ThreadedMotoServer

        os.environ.update(AWS)
        moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        moto.start()
        host, port = moto.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        # a bucket of its own: moto's backend is shared by every server started in this process
        bucket = f"svc-{uuid.uuid4().hex[:12]}"
        boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=bucket)
        storage_url = f"s3://{bucket}/svc"
        extra["s3_endpoint_url"] = endpoint
        storage: Storage = S3Storage.from_url(storage_url, endpoint_url=endpoint)
    else:
        storage_url = str(root / "store")
        storage = LocalStorage(root / "store")
    env = worker_env(
        broker_url=redis.url(0),
        storage_url=storage_url,
        models=tiny_models,
        work_dir=root / "work",
        engine="embedded",
        api_callback_hosts="127.0.0.1",
        api_callback_secret=SECRET,
        api_callback_backoff_base=0.2,
        api_callback_backoff_max=1.0,
        api_callback_retries=4,
        api_events_interval=0.1,
        **extra,
        **settings,
    )
    if backend == "s3":
        env.update(AWS)
    worker = Worker(f"svc-{backend}", env, root, queues="docs,pages").start()
    api_env = {**env, "TABLESIGHT_API_TOKENS": TOKEN, "TABLESIGHT_LOG_LEVEL": "INFO"}
    http = ApiServer(api_env, root, token=TOKEN).start()
    return Stack(backend, http, worker, redis, storage, api_env, root, receiver, moto)
