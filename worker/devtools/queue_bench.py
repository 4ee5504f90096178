"""`tablesight bench queue`: how the queue itself behaves with 1..W worker processes.

Real parts only: a fresh redis-server per worker count and real `tablesight worker`
processes (one node, concurrency 1, each: a pod's worth). The page work is the bench
stand-in (DevHooks.bench_stand_in_pages, worker.settings): page tasks store an empty record and count the
page, so what is measured is the queue: broker round trips, job state, the finaliser,
task events. For each worker count it reports

- throughput: pages per second from the first enqueue to the last manifest;
- enqueue-to-done latency per job (p50, p99): the job's creation to its manifest;
- Redis commands and bytes per page (INFO commandstats / stats deltas over the batch, the
  bench's own INFO calls taken out) and the idle rate (commands per second with the
  workers waiting), which is part of the total while the batch runs;
- Redis memory per finished job (used_memory delta over the batch) and, after the job
  TTL has passed (a short one here), what is left;
- counts that show nothing was lost or done twice: pages enqueued, pages counted done,
  page-task runs, finalisations per job (from the workers' logs and Redis).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Short limits so the bench's job keys and finaliser claims expire within about a minute.
BENCH_SETTINGS: dict[str, Any] = {
    "job_ttl_seconds": 60,
    "task_soft_time_limit": 10,
    "task_time_limit": 15,
    "retry_backoff_max": 5,
    "visibility_timeout": 30,
    "bench_stand_in_pages": 1,
    "log_level": "INFO",
}
_FINALISED = re.compile(r"\[job=([0-9a-f]{32})[^\]]*\] job (complete|partial|failed): ")
_PAGE_RUN = re.compile(r"tablesight\.pages\[([0-9a-f]{32})\.p(\d{4})\] succeeded in ")
_PREFIX = "tablesight"


@dataclass
class QueueBenchOptions:
    docs: int = 50
    pages: int = 4
    workers: tuple[int, ...] = (1, 2, 4, 8)
    expiry: bool = True  # wait out the job TTL and measure what is left in Redis
    split_state: bool = False  # job state on a second redis-server (TABLESIGHT_JOB_STATE_URL)
    redis_server: str | None = None
    keep: Path | None = None  # keep the logs and the stores here
    timeout: float = 600.0  # seconds a batch may take


class _Redis:
    """A raw RESP connection for the bench's own measurements: exact bytes in and out, so its
    INFO calls can be taken out of the server's totals, and no client library in the way."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.buf = b""
        self.sent = 0
        self.received = 0

    def call(self, *args: str) -> Any:
        parts = [f"*{len(args)}\r\n".encode()]
        for a in args:
            b = a.encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(b), b))
        data = b"".join(parts)
        self.sock.sendall(data)
        self.sent += len(data)
        return self._reply()

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            self._more()
        line, self.buf = self.buf.split(b"\r\n", 1)
        self.received += len(line) + 2
        return line

    def _more(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("redis closed the connection")
        self.buf += chunk

    def _reply(self) -> Any:
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b":"):
            return int(rest) if kind == b":" else rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._more()
            body, self.buf = self.buf[:n], self.buf[n + 2 :]
            self.received += n + 2
            return body.decode()
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise RuntimeError(f"unexpected reply {line[:40]!r}")

    def info(self) -> dict[str, Any]:
        """INFO all as a dict, with the bytes this call itself sent and received."""
        sent, received = self.sent, self.received
        text = self.call("INFO", "all")
        out: dict[str, Any] = {"_sent": self.sent - sent, "_received": self.received - received}
        for line in text.splitlines():
            if ":" in line and not line.startswith("#"):
                k, v = line.split(":", 1)
                out[k] = v
        return out

    def close(self) -> None:
        self.sock.close()


def _commands(info: dict[str, Any]) -> Counter[str]:
    """Calls per command from INFO commandstats, the bench's own INFO left out."""
    calls: Counter[str] = Counter()
    for k, v in info.items():
        if k.startswith("cmdstat_") and k != "cmdstat_info":
            calls[k[len("cmdstat_") :]] = int(v.split(",", 1)[0].split("=", 1)[1])
    return calls


def _delta(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Server figures between snapshots a and b, less the bench's INFO call a."""
    calls = _commands(b) - _commands(a)
    return {
        "commands": sum(calls.values()),
        "by_command": dict(calls.most_common()),
        "net_input_bytes": int(b["total_net_input_bytes"]) - int(a["total_net_input_bytes"]) - a["_sent"],
        "net_output_bytes": int(b["total_net_output_bytes"]) - int(a["total_net_output_bytes"]) - a["_received"],
        "used_memory": int(b["used_memory"]) - int(a["used_memory"]),
        "cpu_s": _cpu(b) - _cpu(a),
    }


def _cpu(info: dict[str, Any]) -> float:
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Server:
    def __init__(self, binary: str, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", ""]
        args += ["--appendonly", "no", "--protected-mode", "no"]
        log = (folder / "redis.log").open("ab")
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        _wait(lambda: _pings(self.port), 20, "redis-server")
        self.conn = _Redis(self.port)
        self.empty = self.conn.info()  # an empty server with one client: what expiry returns to

    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        self.conn.close()
        _stop(self.proc, 10)


def _pings(port: int) -> bool:
    try:
        c = _Redis(port)
        try:
            return c.call("PING") == "PONG"
        finally:
            c.close()
    except OSError:
        return False


def _wait(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def _stop(proc: subprocess.Popen, timeout: float) -> None:
    """SIGTERM (a warm shutdown), then SIGKILL to the whole process group."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


class _Worker:
    """`tablesight worker --queues docs,pages --concurrency 1` in its own process group."""

    def __init__(self, name: str, env: dict[str, str], folder: Path) -> None:
        self.name = name
        self.log = folder / f"{name.split('@')[0]}.log"
        cmd = [sys.executable, "-m", "worker.cli.main", "worker", "--hostname", name]
        cmd += ["--queues", "docs,pages", "--concurrency", "1", "--loglevel", "INFO"]
        with self.log.open("ab") as fh:
            self.proc = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)

    def ready(self) -> bool:
        if self.proc.poll() is not None:
            raise RuntimeError(f"worker {self.name} exited with {self.proc.returncode}: {self.text()[-2000:]}")
        return " ready." in self.text()

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def kill(self) -> None:
        """SIGKILL to its whole process group: a node lost mid-task (its task stays unacknowledged)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    def peak_rss_kib(self) -> dict[str, int]:
        """Peak resident memory (VmHWM) of the main process and of its pool child(ren)."""
        main = _hwm(self.proc.pid)
        children = [_hwm(int(c)) for c in _children(self.proc.pid)]
        return {"main": main, "child": max(children, default=0)}


def _children(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


def _hwm(pid: int) -> int:
    return proc_status_kib(pid, "VmHWM")


def proc_status_kib(pid: int, key: str) -> int:
    """A memory line of /proc/PID/status (VmRSS, VmHWM, ...) in KiB; 0 once the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{key}:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def bench_pdf(seed: int, pages: int) -> bytes:
    """A small PDF of `pages` blank pages; the seed in its title makes each one a new document."""
    from PIL import Image

    images = [Image.new("L", (170, 220), 255) for _ in range(pages)]
    out = io.BytesIO()
    images[0].save(out, format="PDF", save_all=True, append_images=images[1:], title=f"queue bench {seed}")
    return out.getvalue()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def run_queue_bench(options: QueueBenchOptions, log: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Run the batch once per worker count; returns the report (JSON-able)."""
    binary = options.redis_server or shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(binary).exists():
        raise FileNotFoundError(f"redis-server not found ({binary}); install it or pass --redis-server")
    root = Path(tempfile.mkdtemp(prefix="tablesight-queue-bench-"))
    runs: list[dict[str, Any]] = []
    servers: list[_Server] = []
    state_servers: list[_Server] = []  # where the job keys live: the broker's server unless split
    try:
        for n_workers in options.workers:
            folder = root / f"w{n_workers}"
            server = _Server(binary, folder / "redis")
            servers.append(server)
            state = _Server(binary, folder / "redis-state") if options.split_state else None
            if state is not None:
                servers.append(state)
            state_servers.append(state or server)
            log(f"{n_workers} worker(s): redis on port {server.port}" + (f", state on {state.port}" if state else ""))
            runs.append(_one_run(options, n_workers, server, folder, seed=len(runs), log=log, state=state))
        if options.expiry:
            _measure_expiry(state_servers, runs, log)
    finally:
        for s in servers:
            s.stop()
        if options.keep is not None:
            shutil.copytree(root, options.keep, dirs_exist_ok=True)
        shutil.rmtree(root, ignore_errors=True)
    return {
        "config": {
            "docs": options.docs,
            "pages_per_doc": options.pages,
            "workers": list(options.workers),
            "split_state": options.split_state,
            "settings": {k: v for k, v in BENCH_SETTINGS.items()},
            "cpus": os.cpu_count(),
            "load_average_after": list(os.getloadavg()),
            "command": f"tablesight bench queue --docs {options.docs} --pages {options.pages} "
            f"--workers {','.join(map(str, options.workers))}" + (" --split-state" if options.split_state else ""),
        },
        "runs": runs,
    }


def _env(server: _Server, folder: Path, state: _Server | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLESIGHT_")}
    env.update(
        {
            "TABLESIGHT_BROKER_URL": server.url(),
            "TABLESIGHT_STORAGE_URL": str(folder / "store"),
            "TABLESIGHT_WORK_DIR": str(folder / "work"),
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update({f"TABLESIGHT_{k.upper()}": str(v) for k, v in BENCH_SETTINGS.items()})
    if state is not None:
        env["TABLESIGHT_JOB_STATE_URL"] = state.url()
    return env


def _one_run(
    options: QueueBenchOptions,
    n_workers: int,
    server: _Server,
    folder: Path,
    seed: int,
    log: Callable[[str], None],
    state: _Server | None = None,
) -> dict[str, Any]:
    from worker.outputs import doc_id_for
    from worker.queue.client import JobClient
    from worker.queue.finish import job_manifest_key
    from worker.settings import Settings

    env = _env(server, folder, state)
    values: dict[str, Any] = {k[len("TABLESIGHT_") :].lower(): v for k, v in env.items() if k.startswith("TABLESIGHT_")}
    settings = Settings(_env_file=None, **values)
    store = Path(settings.store.storage_url)
    backlog = _backlog(server, settings)
    workers = [_Worker(f"qb{n_workers}-{i}@bench", env, folder) for i in range(n_workers)]
    client = JobClient(settings)
    try:
        _wait(lambda: all(w.ready() for w in workers), 120 + 15 * n_workers, f"{n_workers} worker(s) to start")
        # warm-up: every pool child has run a document and a page task before the clock starts
        warm = [client.enqueue(bench_pdf(10_000 * (seed + 1) + i, 1), name="warm-up") for i in range(2 * n_workers)]
        _wait(lambda: all((client.state.get(j) or {}).get("status") == "complete" for j in warm), 120, "the warm-up")
        time.sleep(1.0)
        idle_a = server.conn.info()
        time.sleep(2.0)
        idle = _delta(idle_a, server.conn.info())
        idle_rate = idle["commands"] / 2.0

        pdfs = [bench_pdf(1_000_000 * (seed + 1) + i, options.pages) for i in range(options.docs)]
        before = server.conn.info()
        state_before = state.conn.info() if state is not None else None
        t0 = time.time()
        enqueued: dict[str, tuple[float, str]] = {}
        for i, pdf in enumerate(pdfs):
            t = time.time()
            job = client.enqueue(pdf, name=f"bench-{i}.pdf")
            enqueued[job] = (t, doc_id_for(hashlib.sha256(pdf).hexdigest()))
        enqueue_s = time.time() - t0
        paths = {j: store / job_manifest_key(doc, j) for j, (_, doc) in enqueued.items()}
        _wait(lambda: all(p.exists() for p in paths.values()), options.timeout, "the batch", interval=0.02)
        wall = time.time() - t0
        time.sleep(0.3)  # the state transition follows the manifest write
        after = server.conn.info()
        batch = _delta(before, after)
        state_batch = _delta(state_before, state.conn.info()) if state is not None and state_before else None
        log(f"{n_workers} worker(s): {options.docs * options.pages} pages in {wall:.2f} s")

        finished, latencies = [], []
        for j, (t, _) in enqueued.items():
            m = json.loads(paths[j].read_text())
            created = float((client.state.get(j) or {})["created_ts"])
            finished.append(created + m["wall_seconds"])
            latencies.append(created + m["wall_seconds"] - t)
        counts = _counts(client, workers, enqueued, options.pages)
        job_keys, persistent = _job_keys(state or server)
        rss = [w.peak_rss_kib() for w in workers]
    finally:
        client.close()
        for w in workers:
            _stop(w.proc, 30)
    pages = options.docs * options.pages
    busy_s = max(finished) - t0
    return {
        "workers": n_workers,
        "docs": options.docs,
        "pages": pages,
        "enqueue_s": round(enqueue_s, 3),
        "wall_s": round(busy_s, 3),
        "pages_per_s": round(pages / busy_s, 2),
        "latency_s": {
            "p50": round(_percentile(latencies, 50), 3),
            "p99": round(_percentile(latencies, 99), 3),
            "max": round(max(latencies), 3),
        },
        "redis": {
            "commands": batch["commands"],
            "commands_per_page": round(batch["commands"] / pages, 1),
            "by_command_per_page": {k: round(v / pages, 2) for k, v in batch["by_command"].items()},
            "net_input_bytes_per_page": round(batch["net_input_bytes"] / pages),
            "net_output_bytes_per_page": round(batch["net_output_bytes"] / pages),
            "cpu_ms_per_page": round(batch["cpu_s"] * 1000 / pages, 3),
            "idle_commands_per_s": round(idle_rate, 1),
            "idle_commands_in_batch_est": round(idle_rate * wall),
            "used_memory_before": int(before["used_memory"]),
            "memory_per_job_bytes": round(batch["used_memory"] / options.docs),
            "keys_after": _dbsize(after),
            "job_keys_after": job_keys,
            "job_keys_without_ttl": persistent,  # 0: every job key expires, so job memory comes back
            "backlog_bytes_per_page_task": backlog,
        },
        "state": None if state_batch is None else _figures(state_batch, pages, options.docs),
        "worker_peak_rss_mib": {
            "main": round(max(r["main"] for r in rss) / 1024, 1),
            "child": round(max(r["child"] for r in rss) / 1024, 1),
        },
        "counts": counts,
    }


def _figures(d: dict[str, Any], pages: int, docs: int) -> dict[str, Any]:
    """Per-page and per-job figures of one server over the batch (the job-state server when split)."""
    return {
        "commands": d["commands"],
        "commands_per_page": round(d["commands"] / pages, 1),
        "by_command_per_page": {k: round(v / pages, 2) for k, v in d["by_command"].items()},
        "net_input_bytes_per_page": round(d["net_input_bytes"] / pages),
        "net_output_bytes_per_page": round(d["net_output_bytes"] / pages),
        "cpu_ms_per_page": round(d["cpu_s"] * 1000 / pages, 3),
        "memory_per_job_bytes": round(d["used_memory"] / docs),
    }


def _backlog(server: _Server, settings: Any, n: int = 500) -> int:
    """Redis memory per waiting page task: `n` page-task messages sent as the document task sends
    them, to the list named after the queue, with no worker running; then removed again."""
    from worker.queue.app import PAGES_TASK, make_app

    app = make_app(settings)
    before = server.conn.info()
    try:
        with app.producer_pool.acquire(block=True) as producer:
            for i in range(n):
                app.send_task(
                    PAGES_TASK, args=("0" * 32, [i + 1]), task_id=f"{'0' * 32}.p{i + 1:04d}", producer=producer
                )
        waiting = server.conn.call("LLEN", settings.queue.pages)
        after = server.conn.info()
    finally:
        server.conn.call("DEL", settings.queue.pages)
        app.close()
    if waiting != n:
        raise RuntimeError(f"sent {n} page tasks but the `{settings.queue.pages}` list holds {waiting}")
    return round((int(after["used_memory"]) - int(before["used_memory"])) / n)


def _scan(server: _Server, pattern: str) -> list[str]:
    cursor, keys = "0", []
    while True:
        cursor, batch = server.conn.call("SCAN", cursor, "MATCH", pattern, "COUNT", "1000")
        keys += batch
        if cursor == "0":
            return keys


def _job_keys(server: _Server) -> tuple[int, int]:
    """Job-state keys in Redis, and how many of them have no TTL."""
    keys = _scan(server, f"{_PREFIX}:*")
    return len(keys), sum(1 for k in keys if server.conn.call("TTL", k) == -1)


def _dbsize(info: dict[str, Any]) -> int:
    db = info.get("db0", "keys=0")
    return int(db.split(",", 1)[0].split("=", 1)[1])


def _counts(client: Any, workers: list[_Worker], enqueued: dict[str, tuple[float, str]], pages: int) -> dict[str, Any]:
    """Nothing lost, nothing done twice: from Redis (each job's done set and status) and from
    the workers' logs (page-task runs, finalisations)."""
    text = "".join(w.text() for w in workers)
    finals = Counter(j for j, _ in _FINALISED.findall(text) if j in enqueued)
    runs = Counter((j, p) for j, p in _PAGE_RUN.findall(text) if j in enqueued)
    done = sum(len(client.state.done_pages(j)) for j in enqueued)
    statuses = Counter((client.state.get(j) or {}).get("status") for j in enqueued)
    return {
        "jobs": len(enqueued),
        "jobs_complete": statuses.get("complete", 0),
        "pages_enqueued": len(enqueued) * pages,
        "pages_done": done,
        "pages_lost": len(enqueued) * pages - done,
        "page_task_runs": sum(runs.values()),
        "page_tasks_run_twice": sum(1 for c in runs.values() if c > 1),
        "finalisations": sum(finals.values()),
        "duplicate_finalisations": sum(c - 1 for c in finals.values() if c > 1),
        "jobs_not_finalised": len(enqueued) - len(finals),
    }


def _measure_expiry(servers: list[_Server], runs: list[dict[str, Any]], log: Callable[[str], None]) -> None:
    """Wait until the job keys have expired on every server; record what memory is left."""
    ttl = BENCH_SETTINGS["job_ttl_seconds"]
    log(f"waiting for the job TTL ({ttl} s) to pass")

    def left(s: _Server) -> int:
        return len(_scan(s, f"{_PREFIX}:*"))

    t0 = time.monotonic()
    try:
        _wait(lambda: all(left(s) == 0 for s in servers), ttl * 3, "the job keys to expire", interval=1.0)
    except TimeoutError:
        pass
    for s, r in zip(servers, runs):
        info = s.conn.info()
        r["redis"]["job_keys_after_expiry"] = left(s)
        r["redis"]["keys_after_expiry"] = _dbsize(info)
        # against the same server when it was new and empty (one client, as now)
        r["redis"]["used_memory_after_expiry_delta"] = int(info["used_memory"]) - int(s.empty["used_memory"])
        # the keys' share of it (used_memory less the server's own overhead: buffers, dict tables, scripts)
        r["redis"]["dataset_after_expiry_delta"] = int(info["used_memory_dataset"]) - int(
            s.empty["used_memory_dataset"]
        )
        r["redis"]["expiry_wait_s"] = round(time.monotonic() - t0, 1)


def format_queue_report(report: dict[str, Any]) -> str:
    """The table `tablesight bench queue` prints."""
    c = report["config"]
    lines = [
        f"queue bench: {c['docs']} docs x {c['pages_per_doc']} pages per worker count, stand-in pages "
        f"(no model work), {c['cpus']} CPUs, load average after {c['load_average_after'][0]:.1f}",
        f"{'workers':>7} {'pages/s':>8} {'p50 s':>7} {'p99 s':>7} {'cmd/page':>8} {'in B/pg':>8} {'out B/pg':>8} "
        f"{'cpu ms/pg':>9} {'idle cmd/s':>10} {'mem/job':>8} {'after TTL':>9} {'lost':>4} {'dup fin':>7} "
        f"{'runs':>5} {'RSS MiB':>9}",
    ]
    for r in report["runs"]:
        red, n = r["redis"], r["counts"]
        after = red.get("used_memory_after_expiry_delta")
        lines.append(
            f"{r['workers']:>7} {r['pages_per_s']:>8.1f} {r['latency_s']['p50']:>7.2f} {r['latency_s']['p99']:>7.2f} "
            f"{red['commands_per_page']:>8.1f} {red['net_input_bytes_per_page']:>8} "
            f"{red['net_output_bytes_per_page']:>8} {red['cpu_ms_per_page']:>9.3f} {red['idle_commands_per_s']:>10.1f} "
            f"{red['memory_per_job_bytes']:>8} {'-' if after is None else after:>9} {n['pages_lost']:>4} "
            f"{n['duplicate_finalisations']:>7} {n['page_task_runs']:>5} "
            f"{r['worker_peak_rss_mib']['main']:>4.0f}+{r['worker_peak_rss_mib']['child']:<4.0f}"
        )
    lines.append(
        "cpu ms/pg: redis-server CPU time per page; mem/job: Redis used_memory growth per finished job "
        "(bytes); after TTL: used_memory once the job keys expired, against the new empty server; "
        "runs: page-task executions (= pages when none ran twice); RSS: peak of a worker's main + pool process"
    )
    if report["runs"]:
        r = report["runs"][-1]
        lines.append(
            f"a waiting page task holds {r['redis']['backlog_bytes_per_page_task']} bytes of Redis memory; "
            f"enqueueing {r['docs']} documents took {r['enqueue_s']:.2f} s"
        )
    for r in report["runs"]:
        st = r.get("state")
        if st:
            red = r["redis"]
            lines.append(
                f"  W={r['workers']} split: broker {red['commands_per_page']} cmd/page, {red['cpu_ms_per_page']:.3f} "
                f"ms/page, {red['memory_per_job_bytes']} B/job | job state {st['commands_per_page']} cmd/page, "
                f"{st['cpu_ms_per_page']:.3f} ms/page, {st['memory_per_job_bytes']} B/job"
            )
    top = report["runs"][-1]["redis"]["by_command_per_page"] if report["runs"] else {}
    if top:
        lines.append("commands per page (last run): " + ", ".join(f"{k} {v}" for k, v in list(top.items())[:12]))
    return "\n".join(lines)
