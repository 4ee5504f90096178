"""Real parts for the queue tests: a redis-server, Celery worker processes, an S3 API server.

Every process is started in its own session (process group) and registered, so teardown
kills whole groups and an interpreter exit never leaves a worker or a Redis behind.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import redis
from helpers import free_port, wait_for

if TYPE_CHECKING:
    from worker.queue.client import JobClient

REPO = Path(__file__).resolve().parents[1]
REDIS_SERVER = "/usr/bin/redis-server"
_live: dict[int, subprocess.Popen] = {}


def _kill_all() -> None:
    for proc in list(_live.values()):
        _kill_group(proc)


atexit.register(_kill_all)


def _kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    if sig == signal.SIGKILL:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        _live.pop(proc.pid, None)


class RedisServer:
    """redis-server on a free loopback port; `persistent` turns on the append-only file."""

    def __init__(self, folder: Path, persistent: bool = False) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.persistent = persistent
        self.proc: subprocess.Popen | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> RedisServer:
        args = [
            REDIS_SERVER,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.folder),
            "--save",
            "",
            "--appendonly",
            "yes" if self.persistent else "no",
            "--protected-mode",
            "no",
        ]
        log = (self.folder / "redis.log").open("ab")
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        _live[self.proc.pid] = self.proc
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5)
        wait_for(lambda: _pings(client), 15, what="redis-server")
        client.close()
        return self

    def stop(self) -> None:
        """A clean shutdown (SIGTERM: the append-only file is flushed, as in a deploy)."""
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            _kill_group(self.proc)
        _live.pop(self.proc.pid, None)
        self.proc = None

    def restart(self, down_seconds: float = 1.0) -> None:
        self.stop()
        time.sleep(down_seconds)
        self.start()


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.exceptions.ConnectionError:
        return False


class Worker:
    """`tablesight worker` (a real Celery worker, prefork, concurrency 1) in its own process group."""

    def __init__(self, name: str, env: dict[str, str], log_dir: Path, queues: str | None = "docs,pages") -> None:
        self.name = f"{name}@test"
        self.env = env
        self.log = Path(log_dir) / f"{name}.log"
        self.queues = queues
        self.proc: subprocess.Popen | None = None

    def start(self, wait: bool = True) -> Worker:
        fh = self.log.open("ab")
        self._offset = self.log.stat().st_size
        cmd = [
            sys.executable,
            "-m",
            "worker.cli.main",
            "worker",
            "--hostname",
            self.name,
            *(["--queues", self.queues] if self.queues else []),  # None: the command's default
            "--concurrency",
            "1",
            "--loglevel",
            "INFO",
        ]
        self.proc = subprocess.Popen(
            cmd, cwd=REPO, env=self.env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
        )
        _live[self.proc.pid] = self.proc
        if wait:
            wait_for(lambda: self._ready(), 60, interval=0.1, what=f"worker {self.name} to be ready")
        return self

    def _ready(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise AssertionError(f"worker {self.name} exited with {self.proc.returncode}:\n{self.text()[-3000:]}")
        return " ready." in self.text()[self._offset :]

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def terminate(self, timeout: float = 60) -> int:
        """SIGTERM to the main process only (what an orchestrator sends): a warm shutdown."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self.kill()

    def kill(self) -> None:
        """kill -9 the whole worker: main process and pool children (a node lost)."""
        if self.proc is not None:
            _kill_group(self.proc)


def worker_env(
    *, broker_url: str, storage_url: str, models: dict[str, Path], work_dir: Path, **settings: Any
) -> dict[str, str]:
    """Environment of a worker: TABLESIGHT_* settings, offline model hub, no inherited .env surprises."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLESIGHT_")}
    env.update(
        {
            "TABLESIGHT_BROKER_URL": broker_url,
            "TABLESIGHT_STORAGE_URL": storage_url,
            "TABLESIGHT_DETECTION_MODEL": str(models["same_table"]),
            "TABLESIGHT_STRUCTURE_MODEL": str(models["structure"]),
            "TABLESIGHT_DEVICE": "cpu",
            "TABLESIGHT_TORCH_THREADS": "1",
            "TABLESIGHT_DPI": "100",
            "TABLESIGHT_WORK_DIR": str(work_dir),
            # the stand-in detector's one table per page is what queue tests count; the ruled-grid
            # finder (tests/test_ruled_tables.py) would add the page's real ruled table beside it
            "TABLESIGHT_NORMALISE__RULED_TABLES": "false",
            "TABLESIGHT_NORMALISE__ALIGNED_TABLES": "false",  # nor the aligned-text finder its unruled ones
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update({f"TABLESIGHT_{k.upper()}": str(v) for k, v in settings.items()})
    return env


def settings_from_env(env: dict[str, str]):  # noqa: ANN201 - Settings
    """The Settings a client in this process uses to talk to workers started with `env`."""
    from worker.settings import Settings

    values = {k[len("TABLESIGHT_") :].lower(): v for k, v in env.items() if k.startswith("TABLESIGHT_")}
    return Settings(_env_file=None, **values)


def sample_pdf(path: Path, pages: int, seed: int = 0) -> Path:
    """A scanned PDF of `pages` pages, each with one table; distinct content per seed."""
    from worker.devtools.samples import financial_table, key_figures_table, make_page, make_scanned_pdf, staffing_table

    specs = [financial_table, staffing_table, key_figures_table]
    images = [
        make_page([specs[(i + seed) % 3]()], title=f"Document {seed} page {i + 1}", seed=seed * 100 + i).image
        for i in range(pages)
    ]
    return make_scanned_pdf(path, images, dpi=200)


def progress_log(client: Any, job_id: str, timeout: float, poll: float = 0.05) -> tuple[dict, list[dict]]:
    """Poll a job until it ends; returns the last status and every status seen on the way."""
    from worker.queue.state import TERMINAL

    seen: list[dict] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = client.status(job_id)
        seen.append(st)
        if st["status"] in TERMINAL:
            return st, seen
        time.sleep(poll)
    raise AssertionError(f"job {job_id} did not finish in {timeout} s: {seen[-1] if seen else None}")


@dataclass
class Cluster:
    """A redis-server, the worker processes on it and a client: what a queue test talks to."""

    root: Path
    server: RedisServer
    env: dict[str, str]
    client: JobClient
    workers: list[Worker] = field(default_factory=list)
    vision: Any = None  # the stand-in vision server, when the test started one

    @property
    def store(self) -> Path:
        return self.root / "store"

    def add_worker(self, name: str | None = None, queues: str | None = "docs,pages") -> Worker:
        """Start one more worker (named w1, w2, ... unless told) and keep it for teardown."""
        worker = Worker(name or f"w{len(self.workers) + 1}", self.env, self.root, queues=queues).start()
        self.workers.append(worker)
        return worker


@contextmanager
def start_cluster(
    root: Path,
    models: dict[str, Path],
    *,
    workers: int = 1,
    queues: str | None = "docs,pages",
    persistent: bool = False,
    client_settings: dict[str, Any] | None = None,
    **settings: Any,
) -> Iterator[Cluster]:
    """Redis, `workers` workers started with `settings` (TABLESIGHT_* names) and a client; all
    stopped at the end. `client_settings` overrides the client's own settings only."""
    from worker.queue.client import JobClient

    server = RedisServer(root / "redis", persistent=persistent).start()
    env = worker_env(
        broker_url=server.url(0), storage_url=str(root / "store"), models=models, work_dir=root / "work", **settings
    )
    client_cfg = settings_from_env(env)
    client = JobClient(client_cfg.replace(**client_settings) if client_settings else client_cfg)
    cluster = Cluster(root, server, env, client)
    try:
        for _ in range(workers):
            cluster.add_worker(queues=queues)
        yield cluster
    finally:
        client.close()
        for w in cluster.workers:
            w.kill()
        server.stop()
