"""`tablesight bench api`: bounded load on `tablesight serve` over loopback, with faults.

Real parts only, all on 127.0.0.1: a redis-server, W `tablesight worker` processes and one
`tablesight serve`. For each client count N (10, 50, 100) N clients start at once; each
uploads its documents (a mix of small one-page PDFs and large ones, a page under several MB
of incompressible image), follows its job by server-sent events (even clients) or by polling
(odd ones), then fetches the manifest and the chunks. Mid-run, once half the uploads are
acknowledged, the API process is killed (SIGKILL) and started again on the same port, and
once a third of the documents are done one worker is killed (SIGKILL, its whole process
group) and replaced. Clients retry what failed with jittered backoff; sending the same
bytes again is the same job (deduplication), so a retry must not make a second one.

Reported per N: requests/s, p50/p99 latency of uploads, status polls and result fetches,
the API process's RSS (idle before the run, peak during the uploads, peak overall: uploads
stream to storage, so it stays flat however many are in flight), and documents lost (an
acknowledged upload that never completed), duplicated (more than one job for one document,
in the answers or in Redis) and failed uploads.

Page work: `embedded` runs the embedded engine's real ONNX models on every page; `stand-in`
(the queue bench's hook) stores an empty page record instead, for a quick run (the CI test).
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from worker.devtools.queue_bench import _free_port, _percentile, _Server, _stop, _wait, _Worker, proc_status_kib

LOOPBACK = "127.0.0.1"
TOKEN = "api-bench-token"


@dataclass
class ApiBenchOptions:
    clients: tuple[int, ...] = (10, 50, 100)
    docs_per_client: int = 1
    large_every: int = 5  # every 5th document is large
    large_mb: float = 6.0
    workers: int = 2
    work: str = "embedded"  # embedded | stand-in
    faults: bool = True
    deadline: float = 900.0  # seconds a level may take
    redis_server: str | None = None
    keep: Path | None = None


def small_pdf(seed: int) -> bytes:
    """A one-page PDF with a few lines of text; the seed makes each a new document."""
    from PIL import Image, ImageDraw

    image = Image.new("L", (850, 1100), 255)
    draw = ImageDraw.Draw(image)
    for i in range(6):
        draw.text((80, 100 + 40 * i), f"api bench document {seed} line {i}", fill=0)
    out = io.BytesIO()
    image.save(out, format="PDF", resolution=100.0, title=f"api bench {seed}")
    return out.getvalue()


def large_pdf(seed: int, megabytes: float) -> bytes:
    """A one-page PDF whose page is an incompressible image of about `megabytes` MB."""
    from PIL import Image

    side = int((megabytes * 1024 * 1024) ** 0.5 * 1.1)
    rng = random.Random(seed)
    image = Image.frombytes("L", (side, side), rng.randbytes(side * side))
    out = io.BytesIO()
    image.save(out, format="PDF", resolution=300.0, quality=95, title=f"api bench large {seed}")
    return out.getvalue()


class _Api:
    """`tablesight serve` on a fixed loopback port; restartable."""

    def __init__(self, env: dict[str, str], folder: Path, port: int) -> None:
        self.env, self.folder, self.port = env, folder, port
        self.proc: subprocess.Popen | None = None
        self.restarts = 0

    def start(self) -> None:
        import httpx

        cmd = [sys.executable, "-m", "worker.cli.main", "serve", "--host", LOOPBACK, "--port", str(self.port)]
        log = (self.folder / f"api-{self.restarts}.log").open("ab")
        self.proc = subprocess.Popen(cmd, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

        def up() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"tablesight serve exited with {self.proc.returncode}")
            try:
                return httpx.get(f"http://{LOOPBACK}:{self.port}/healthz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        _wait(up, 60, "tablesight serve", interval=0.1)

    def kill_and_restart(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.restarts += 1
        self.start()

    def rss_kib(self) -> int:
        return proc_status_kib(self.proc.pid, "VmRSS") if self.proc is not None else 0

    def stop(self) -> None:
        if self.proc is not None:
            _stop(self.proc, 10)


@dataclass
class _Doc:
    index: int
    data: bytes
    large: bool
    job_ids: list[str] = field(default_factory=list)
    status: str | None = None
    fetched: bool = False
    upload_failed: str | None = None


@dataclass
class _Level:
    n: int
    docs: list[_Doc]
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"upload": [], "status": [], "result": []})
    requests: int = 0
    errors: int = 0
    retries: int = 0
    acknowledged: int = 0
    completed: int = 0
    uploads_done: asyncio.Event = field(default_factory=asyncio.Event)


async def _request(level: _Level, kind: str, call: Callable[[], Any], deadline: float) -> Any:
    """One request, retried with jittered backoff on connection errors and 5xx (an API restart)."""
    import httpx

    delay = 0.2
    while True:
        t0 = time.perf_counter()
        try:
            response = await call()
            if response.status_code < 500:
                level.requests += 1
                if kind in level.latencies:
                    level.latencies[kind].append(time.perf_counter() - t0)
                return response
            level.errors += 1
        except (httpx.TransportError, httpx.StreamError):
            level.errors += 1
        if time.monotonic() > deadline:
            raise TimeoutError(f"{kind}: no answer before the deadline")
        level.retries += 1
        await asyncio.sleep(delay / 2 + random.uniform(0, delay / 2))
        delay = min(delay * 2, 3.0)


async def _follow_events(client: Any, level: _Level, job_id: str, deadline: float) -> str:
    """The job's status from its event stream (reconnecting when the API goes away)."""
    import httpx

    while time.monotonic() < deadline:
        try:
            async with client.stream("GET", f"/v1/jobs/{job_id}/events", timeout=None) as r:
                level.requests += 1
                if r.status_code != 200:
                    await asyncio.sleep(0.5)
                    continue
                kind = None
                async for line in r.aiter_lines():
                    if line.startswith("event: "):
                        kind = line[7:]
                    elif line.startswith("data: ") and kind == "end":
                        return str(json.loads(line[6:])["status"])
        except (httpx.TransportError, httpx.StreamError):
            level.errors += 1
        level.retries += 1
        await asyncio.sleep(0.3 + random.uniform(0, 0.3))
    raise TimeoutError("events: the job did not end before the deadline")


async def _poll(client: Any, level: _Level, job_id: str, deadline: float) -> str:
    while True:
        r = await _request(level, "status", partial(client.get, f"/v1/jobs/{job_id}"), deadline)
        status = r.json().get("status") if r.status_code == 200 else None
        if status in ("complete", "partial", "failed", "cancelled"):
            return str(status)
        if time.monotonic() > deadline:
            raise TimeoutError("poll: the job did not end before the deadline")
        await asyncio.sleep(0.5)


async def _client(
    base: str, level: _Level, mine: list[_Doc], index: int, deadline: float, start: asyncio.Event
) -> None:
    import httpx

    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=120) as client:
        await start.wait()
        for doc in mine:
            files = {"file": (f"bench-{doc.index}.pdf", doc.data)}
            try:
                r = await _request(level, "upload", partial(client.post, "/v1/jobs", files=files), deadline)
            except TimeoutError as exc:
                doc.upload_failed = str(exc)
                continue
            if r.status_code not in (200, 202):
                doc.upload_failed = f"HTTP {r.status_code}: {r.text[:200]}"
                continue
            job = r.json()["jobs"][0]
            doc.job_ids.append(job["job_id"])
            level.acknowledged += 1
            if level.acknowledged == len(level.docs):
                level.uploads_done.set()
            follow = _follow_events if index % 2 == 0 else _poll
            try:
                doc.status = await follow(client, level, job["job_id"], deadline)
                res = await _request(level, "result", partial(client.get, f"/v1/jobs/{job['job_id']}/result"), deadline)
                chunks = await _request(
                    level, "result", partial(client.get, f"/v1/documents/{job['doc_id']}/chunks"), deadline
                )
                doc.fetched = res.status_code == 200 and chunks.status_code == 200
                if res.status_code == 200 and res.json().get("job_id") not in doc.job_ids:
                    doc.job_ids.append(res.json()["job_id"])  # the manifest came from another job
            except TimeoutError:
                pass
            level.completed += 1


def _settings(work: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "dpi": 72,
        "visibility_timeout": 60,  # a killed worker's tasks come back within about a minute
        "unacked_restore_interval": 5,
        "watchdog_interval": 10,  # a message a killed worker took unrecorded is sent again within ~90 s
        "task_soft_time_limit": 40,
        "task_time_limit": 50,
        "retry_backoff_max": 5,
        "log_level": "INFO",
        "api_tokens": TOKEN,
        "torch_threads": 1,
        "pipeline_lanes": 1,
    }
    if work == "stand-in":
        out["bench_stand_in_pages"] = 1
    else:
        out["engine"] = "embedded"
    return out


def _env(redis_url: str, folder: Path, work: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLESIGHT_")}
    env.update(
        {
            "TABLESIGHT_BROKER_URL": redis_url,
            "TABLESIGHT_STORAGE_URL": str(folder / "store"),
            "TABLESIGHT_WORK_DIR": str(folder / "work"),
            "PYTHONUNBUFFERED": "1",
            "HF_HUB_OFFLINE": "1",
        }
    )
    env.update({f"TABLESIGHT_{k.upper()}": str(v) for k, v in _settings(work).items()})
    return env


def _redis_jobs_per_doc(server: _Server) -> dict[str, int]:
    counts: dict[str, int] = {}
    cursor = "0"
    while True:
        cursor, keys = server.conn.call("SCAN", cursor, "MATCH", "tablesight:job:*", "COUNT", "1000")
        for key in keys:
            if key.count(":") == 2:
                doc = server.conn.call("HGET", key, "doc_id")
                if doc:
                    counts[doc] = counts.get(doc, 0) + 1
        if cursor == "0":
            return counts


def run_api_bench(options: ApiBenchOptions, log: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Every client count in turn, on one stack; returns the report (JSON-able)."""
    binary = options.redis_server or shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(binary).exists():
        raise FileNotFoundError(f"redis-server not found ({binary}); install it or pass --redis-server")
    root = Path(tempfile.mkdtemp(prefix="tablesight-api-bench-"))
    server = _Server(binary, root / "redis")
    env = _env(server.url(), root, options.work)
    api = _Api(env, root, _free_port())
    workers: list[_Worker] = []
    runs = []
    try:
        workers = [_Worker(f"bench{i}@api", env, root) for i in range(options.workers)]
        _wait(lambda: all(w.ready() for w in workers), 120, "workers")
        api.start()
        seed = 0
        for n in options.clients:
            log(f"{n} client(s), {n * options.docs_per_client} document(s)")
            run, seed = _one_level(options, n, seed, api, workers, env, root, server, log)
            runs.append(run)
    finally:
        api.stop()
        for w in workers:
            w.kill()
        server.stop()
        if options.keep is not None:
            shutil.copytree(root, options.keep, dirs_exist_ok=True)
        shutil.rmtree(root, ignore_errors=True)
    command = (
        f"tablesight bench api --clients {','.join(map(str, options.clients))} "
        f"--docs-per-client {options.docs_per_client} --api-workers {options.workers} --work {options.work} "
        f"--large-mb {options.large_mb:g}" + ("" if options.faults else " --no-faults")
    )
    return {
        "config": {
            "clients": list(options.clients),
            "docs_per_client": options.docs_per_client,
            "large_every": options.large_every,
            "large_mb": options.large_mb,
            "workers": options.workers,
            "work": options.work,
            "faults": options.faults,
            "cpus": os.cpu_count(),
            "command": command,
        },
        "runs": runs,
    }


def _one_level(
    options: ApiBenchOptions,
    n: int,
    seed: int,
    api: _Api,
    workers: list[_Worker],
    env: dict[str, str],
    root: Path,
    server: _Server,
    log: Callable[[str], None],
) -> tuple[dict[str, Any], int]:
    docs = []
    for _ in range(n * options.docs_per_client):
        large = options.large_every > 0 and seed % options.large_every == options.large_every - 1
        data = large_pdf(seed, options.large_mb) if large else small_pdf(seed)
        docs.append(_Doc(seed, data, large))
        seed += 1
    samples: list[tuple[float, int, str]] = []
    phase = {"name": "idle"}
    stop_sampling = threading.Event()

    def sample() -> None:
        while not stop_sampling.is_set():
            samples.append((time.monotonic(), api.rss_kib(), phase["name"]))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    time.sleep(0.5)
    faults: list[str] = []
    level = asyncio.run(_drive(options, n, docs, api, workers, env, root, phase, faults, log))
    stop_sampling.set()
    sampler.join()
    per_doc = _redis_jobs_per_doc(server)
    return _figures(level, docs, samples, per_doc, faults), seed


async def _drive(
    options: ApiBenchOptions,
    n: int,
    docs: list[_Doc],
    api: _Api,
    workers: list[_Worker],
    env: dict[str, str],
    root: Path,
    phase: dict[str, str],
    faults: list[str],
    log: Callable[[str], None],
) -> _Level:
    level = _Level(n, docs)
    start = asyncio.Event()
    deadline = time.monotonic() + options.deadline
    base = f"http://{LOOPBACK}:{api.port}"
    per = options.docs_per_client
    tasks = [
        asyncio.create_task(_client(base, level, docs[i * per : (i + 1) * per], i, deadline, start)) for i in range(n)
    ]
    t0 = time.monotonic()
    phase["name"] = "uploads"
    start.set()
    restarted = killed = False
    while not all(t.done() for t in tasks):
        await asyncio.sleep(0.05)
        if level.uploads_done.is_set() and phase["name"] == "uploads":
            phase["name"] = "processing"
        if options.faults and not restarted and level.acknowledged >= len(docs) / 2:
            restarted = True
            await asyncio.to_thread(api.kill_and_restart)
            faults.append(f"API SIGKILL and restart after {level.acknowledged}/{len(docs)} uploads")
            log(faults[-1])
        if options.faults and not killed and level.completed >= len(docs) / 3:
            killed = True
            victim = workers.pop(0)
            victim.kill()
            faults.append(f"worker {victim.name} SIGKILL after {level.completed}/{len(docs)} documents")
            log(faults[-1])
            replacement = _Worker(f"bench{len(faults)}x{n}@api", env, root)
            workers.append(replacement)
    for t in tasks:
        await t  # re-raise a client's unexpected error
    level.latencies["wall"] = [time.monotonic() - t0]
    if phase["name"] == "uploads":
        phase["name"] = "processing"
    return level


def _figures(
    level: _Level, docs: list[_Doc], samples: list[tuple[float, int, str]], per_doc: dict[str, int], faults: list[str]
) -> dict[str, Any]:
    from worker.outputs import doc_id_for

    wall = level.latencies["wall"][0]
    idle = [rss for _, rss, p in samples if p == "idle" and rss]
    uploads = [rss for _, rss, p in samples if p == "uploads" and rss]
    every = [rss for _, rss, _ in samples if rss]

    def ms(kind: str, q: float) -> float:
        return round(_percentile(level.latencies[kind], q) * 1000, 1)

    import hashlib

    lost = [d.index for d in docs if d.job_ids and not (d.status == "complete" and d.fetched)]
    dup_answers = [d.index for d in docs if len(set(d.job_ids)) > 1]
    dup_redis = [d.index for d in docs if per_doc.get(doc_id_for(hashlib.sha256(d.data).hexdigest()), 0) > 1]
    large = [d for d in docs if d.large]
    return {
        "clients": level.n,
        "documents": len(docs),
        "large_documents": len(large),
        "large_mb": round(sum(len(d.data) for d in large) / max(1, len(large)) / 1e6, 2),
        "wall_seconds": round(wall, 2),
        "requests": level.requests,
        "requests_per_second": round(level.requests / wall, 1) if wall else 0.0,
        "latency_ms": {
            k: {"p50": ms(k, 50), "p99": ms(k, 99), "n": len(level.latencies[k])}
            for k in ("upload", "status", "result")
        },
        "errors_retried": level.retries,
        "api_rss_mib": {
            "idle": round(max(idle, default=0) / 1024, 1),
            "peak_during_uploads": round(max(uploads, default=0) / 1024, 1),
            "peak": round(max(every, default=0) / 1024, 1),
        },
        "faults": faults,
        "documents_lost": len(lost),
        "documents_duplicated": len(set(dup_answers) | set(dup_redis)),
        "uploads_failed": sum(1 for d in docs if d.upload_failed),
        "lost_indices": lost[:20],
    }


def format_api_report(report: dict[str, Any]) -> str:
    c = report["config"]
    lines = [
        f"`{c['command']}` ({c['cpus']} CPUs; {c['workers']} workers, page work: {c['work']}; "
        f"1 document in {c['large_every']} large)",
        "",
        "| clients | docs (large, MB each) | wall s | requests/s | upload p50/p99 ms | status p50/p99 ms "
        "| result p50/p99 ms | API RSS MiB idle / uploads peak / peak | lost | duplicated | failed uploads | faults |",
        "|---:|---|---:|---:|---|---|---|---|---:|---:|---:|---|",
    ]
    for r in report["runs"]:
        lat = r["latency_ms"]
        rss = r["api_rss_mib"]
        lines.append(
            f"| {r['clients']} | {r['documents']} ({r['large_documents']}, {r['large_mb']}) | {r['wall_seconds']} "
            f"| {r['requests_per_second']} | {lat['upload']['p50']} / {lat['upload']['p99']} "
            f"| {lat['status']['p50']} / {lat['status']['p99']} | {lat['result']['p50']} / {lat['result']['p99']} "
            f"| {rss['idle']} / {rss['peak_during_uploads']} / {rss['peak']} | {r['documents_lost']} "
            f"| {r['documents_duplicated']} | {r['uploads_failed']} | {'; '.join(r['faults']) or 'none'} |"
        )
    return "\n".join(lines)
