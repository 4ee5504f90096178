"""Reading and replaying the Dockerfile without a Docker engine, for tests/test_docker.py.

`read_dockerfile` parses instructions (continuations, comments, heredoc-free RUN lines);
`Replay` runs the instructions that build the image's Python environment on this machine,
with container paths mapped to folders under a root.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

REPO = Path(__file__).resolve().parents[1]
DOCKER = REPO / "docker"
DOCKERFILE = DOCKER / "Dockerfile"

# ---- a small Dockerfile reader ------------------------------------------------------------


@dataclass
class Instruction:
    stage: str
    keyword: str
    args: str
    line: int


def read_dockerfile(path: Path = DOCKERFILE) -> list[Instruction]:
    """Instructions with continuation lines joined and comment lines dropped, as Docker does."""
    out: list[Instruction] = []
    stage, buf, start = "", "", 0
    for no, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not buf:
            start = no
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        keyword, _, args = buf.partition(" ")
        keyword, args = keyword.upper(), args.strip()
        if keyword == "FROM":
            parts = args.split()
            stage = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else f"<final:{parts[0]}>"
        out.append(Instruction(stage, keyword, args, start))
        buf = ""
    return out


def arg_defaults(instructions: list[Instruction]) -> dict[str, str]:
    return {
        name: value
        for i in instructions
        if i.keyword == "ARG" and "=" in i.args
        for name, _, value in [i.args.partition("=")]
    }


def env_pairs(args: str) -> list[tuple[str, str]]:
    return [tuple(token.split("=", 1)) for token in shlex.split(args)]  # type: ignore[misc]


def expand(text: str, env: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: env.get(m.group(1) or m.group(2), ""), text)


def strip_mounts(command: str) -> tuple[list[str], str]:
    mounts = []
    while command.startswith("--mount="):
        mount, _, command = command.partition(" ")
        mounts.append(mount)
        command = command.lstrip()
    return mounts, command


class Replay:
    """Run the Dockerfile's instructions for the image's Python environment on this machine.

    Container paths map to folders under `root`; the variant is `cpu` (the default build), with
    one substitution, see TORCH_SUBSTITUTE.
    """

    # The CPU image's torch layer comes from the PyTorch CPU index, which this machine cannot
    # reach. The GPU variant's file pins the same torch and torchvision (test_lock_files_are_
    # consistent) from PyPI, built with CUDA, plus the CUDA libraries: torch runs on the CPU
    # either way, and every other step is the CPU build's.
    TORCH_SUBSTITUTE: ClassVar[dict[str, str]] = {
        "docker/requirements-torch-cpu.txt": "docker/requirements-torch-gpu.txt"
    }
    SKIPPED: ClassVar[dict[str, str]] = {
        "apt-get": "system packages: poppler and tesseract come from this machine (.ci/setup)",
        "groupadd": "the user account: the test runs as the current user",
    }

    def __init__(self, root: Path) -> None:
        self.root = root
        self.paths = {
            "/opt/venv": root / "venv",
            "/build": root / "build",
            "/models": root / "models",
            "/data": root / "data",
            "/home/tablesight": root / "home",
            "/tmp/dist": root / "build/dist",
        }
        for p in self.paths.values():
            p.mkdir(parents=True, exist_ok=True)
        base = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
        shims = root / "base-python"  # `python` before the venv exists: this machine's CPython 3.11
        shims.mkdir()
        (shims / "python").symlink_to(base)
        keep = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("TABLESIGHT_", "VIRTUAL_ENV", "PYTHON", "CONDA", "HF_"))
        }
        keep["PATH"] = f"{shims}:{os.environ.get('PATH', '/usr/bin:/bin')}"
        # pip configuration, like the local mirror: no byte-compiling of every installed module
        # (the image compiles them at build; the replay only runs a worker from them)
        keep["PIP_NO_COMPILE"] = "1"
        self.base_env = keep
        self.env = dict(keep)
        self.cwd = root
        self.stages: set[str] = set()
        self.healthcheck: list[str] = []
        self.cmd: list[str] = []
        self.log: list[str] = []

    def host_path(self, text: str) -> str:
        for container, local in sorted(self.paths.items(), key=lambda kv: -len(kv[0])):
            text = re.sub(rf"(?<![\w/]){re.escape(container)}(?=/|\b|$)", str(local), text)
        return text

    def run(self, instructions: list[Instruction], stages: list[str], args: dict[str, str]) -> None:
        for ins in instructions:
            if ins.stage not in stages:
                continue
            scope = {**args, **self.env}
            if ins.keyword == "ENV":
                for key, value in env_pairs(ins.args):
                    self.env[key] = self.host_path(expand(value, scope))
            elif ins.keyword == "ARG":
                name, _, default = ins.args.partition("=")
                args.setdefault(name, default)
            elif ins.keyword == "WORKDIR":
                self.cwd = Path(self.host_path(ins.args))
            elif ins.keyword == "COPY":
                self.copy(ins, scope)
            elif ins.keyword == "RUN":
                self.shell(ins, scope)
            elif ins.keyword == "HEALTHCHECK":
                self.healthcheck = json.loads(ins.args.split(" CMD ", 1)[1])
            elif ins.keyword == "CMD":
                self.cmd = json.loads(ins.args)
            elif ins.keyword == "FROM":
                parent = expand(ins.args.split()[0], scope)
                if parent not in self.stages:  # a fresh base image: its own environment
                    self.env, self.cwd = dict(self.base_env), self.root
                self.stages.add(ins.stage)
            elif ins.keyword in ("USER", "STOPSIGNAL"):
                self.log.append(f"line {ins.line}: {ins.keyword} {ins.args} (not replayed)")
            else:
                raise AssertionError(f"line {ins.line}: the replay does not know {ins.keyword}")

    def link_layer(self, requirements: Path) -> bool:
        """Install the torch layer by linking this machine's installed copy of it, when every
        distribution the file pins is installed here at its pinned version (the test runs in
        that environment, built from the same pins): the same files, without unpacking 5 GB of
        CUDA wheels again, which cost most of this test's time. False (pip runs) otherwise.
        Files are hard links where the file system allows, else copies; scripts outside
        site-packages (`torchrun`) are left out: nothing in the image runs them."""
        import importlib.metadata as metadata

        pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==([^\s\\]+)", requirements.read_text(), re.M))
        dists = []
        for name, version in pins.items():
            try:
                dist = metadata.distribution(name)
            except metadata.PackageNotFoundError:
                return False
            if dist.version != version or not dist.files:
                return False
            dists.append(dist)
        site = self.paths["/opt/venv"] / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
        for dist in dists:
            for rel in dist.files or []:
                if str(rel).startswith(".."):
                    continue
                src, dst = Path(str(dist.locate_file(rel))), site / rel
                if not src.is_file():
                    continue
                dst.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(src, dst)
                except OSError:
                    shutil.copy2(src, dst)
        return True

    def copy(self, ins: Instruction, scope: dict[str, str]) -> None:
        parts = ins.args.split()
        if parts[0].startswith("--from="):  # the stage's files are already at the same local path
            assert self.host_path(parts[1]) == self.host_path(parts[2]), ins
            return
        *sources, dest = (expand(p, scope) for p in parts)
        target = self.cwd / dest
        for src in sources:
            origin = REPO / self.TORCH_SUBSTITUTE.get(src, src)
            if origin.is_dir():  # a folder's contents go into dest, as COPY does
                shutil.copytree(
                    origin, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
                )
            elif dest.endswith("/"):
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy(origin, target / Path(src).name)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(origin, target)

    def shell(self, ins: Instruction, scope: dict[str, str]) -> None:
        _, command = strip_mounts(ins.args)
        first = command.split()[0]
        if first in self.SKIPPED:
            self.log.append(f"line {ins.line}: {first}... skipped: {self.SKIPPED[first]}")
            return
        command = self.host_path(command)
        started = time.monotonic()
        torch_layer = re.fullmatch(r'pip install --no-deps -r "?(docker/requirements-torch-\S+\.txt)"?', command)
        if torch_layer and self.link_layer(self.cwd / expand(torch_layer.group(1), scope)):
            self.log.append(f"line {ins.line}: RUN {command[:90]}... linked, {time.monotonic() - started:.0f} s")
            return
        proc = subprocess.run(
            ["/bin/sh", "-c", command], cwd=self.cwd, env=scope, capture_output=True, text=True, timeout=900
        )
        self.log.append(f"line {ins.line}: RUN {command[:90]}... {time.monotonic() - started:.0f} s")
        assert proc.returncode == 0, (
            f"line {ins.line} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
