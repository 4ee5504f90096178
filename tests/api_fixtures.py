"""`tablesight serve` for real: a uvicorn subprocess on a free loopback port, its own process group."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
from queue_fixtures import REPO, _kill_group, _live, free_port, wait_for


class ApiServer:
    def __init__(self, env: dict[str, str], log_dir: Path, token: str | None = None) -> None:
        self.env = env
        self.port = free_port()
        self.log = Path(log_dir) / f"api-{self.port}.log"
        self.token = token
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, token: str | None = "default", **kwargs) -> httpx.Client:  # noqa: ANN003
        token = self.token if token == "default" else token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60, **kwargs)

    def start(self) -> ApiServer:
        cmd = [sys.executable, "-m", "worker.cli.main", "serve", "--port", str(self.port)]
        fh = self.log.open("ab")
        self.proc = subprocess.Popen(
            cmd, cwd=REPO, env=self.env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
        )
        _live[self.proc.pid] = self.proc
        wait_for(self._up, 60, interval=0.1, what="tablesight serve")
        return self

    def _up(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise AssertionError(f"tablesight serve exited with {self.proc.returncode}:\n{self.text()[-3000:]}")
        try:
            return httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self) -> None:
        if self.proc is not None:
            _kill_group(self.proc)
