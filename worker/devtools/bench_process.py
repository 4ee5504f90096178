"""The whole process, as a CLI user pays it: each variant in a fresh interpreter (imports, model
load, every page), interleaved, timed from outside.

`naive` is the loop a first user writes (worker.devtools.naive_loop.run_naive: torch, batch 1, page
by page, no caption capture); `fast` is `tablesight extract` with the settings as they are.
Run as `python -m worker.devtools.bench_process naive --out DIR FILE...` it is the naive child.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _command(variant: str, paths: list[Path], out: Path) -> list[str]:
    files = [str(p) for p in paths]
    if variant == "naive":
        return [sys.executable, "-m", "worker.devtools.bench_process", "naive", "--out", str(out), *files]
    return [sys.executable, "-m", "worker.cli.main", "extract", "--out", str(out), "--no-progress", *files]


def whole_process(
    variants: list[str], paths: list[Path], work: Path, rounds: int, env: dict[str, str]
) -> dict[str, Any]:
    """Each variant `rounds` times in a fresh process, ABBA..., with wall and CPU seconds."""
    from worker.devtools.bench_report import compare_outputs

    walls: dict[str, list[float]] = {v: [] for v in variants}
    cpus: dict[str, list[float]] = {v: [] for v in variants}
    stores: dict[str, list[Path]] = {v: [] for v in variants}
    for r in range(rounds):
        for v in variants if r % 2 == 0 else variants[::-1]:
            out = work / f"process-{v}-{r}"
            cpu0, t0 = _children_cpu(), time.perf_counter()
            done = subprocess.run(
                _command(v, paths, out), env={**os.environ, **env}, capture_output=True, text=True, check=False
            )
            walls[v].append(time.perf_counter() - t0)
            cpus[v].append(_children_cpu() - cpu0)
            if done.returncode != 0:
                raise RuntimeError(f"whole-process {v} failed: {done.stderr.strip()[-2000:]}")
            stores[v].append(out)
    report: dict[str, Any] = {
        "commands": {v: " ".join(_command(v, [Path("FILE...")], Path("OUT"))) for v in variants},
        "variants": {
            v: {
                "wall_s": round(statistics.median(walls[v]), 3),
                "rounds_wall_s": [round(w, 3) for w in walls[v]],
                "cpu_s": round(statistics.median(cpus[v]), 3),
            }
            for v in variants
        },
    }
    if set(variants) == {"naive", "fast"}:
        report["speedup"] = round(report["variants"]["naive"]["wall_s"] / report["variants"]["fast"]["wall_s"], 3)
        report["cpu_ratio"] = round(report["variants"]["naive"]["cpu_s"] / report["variants"]["fast"]["cpu_s"], 3)
        # the naive loop reads no captions, so only the tables themselves can be compared
        report["html_identical"] = compare_outputs(stores["naive"][0], stores["fast"][:1])["html_identical"]
    return report


def _naive_main(argv: list[str]) -> int:
    """The naive child: import, load the models, run the naive loop over FILEs into --out."""
    parser = argparse.ArgumentParser(prog="bench_process naive")
    parser.add_argument("variant", choices=("naive",))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args(argv)

    import torch

    from worker.devtools.bench_inputs import NaivePredictor
    from worker.devtools.naive_loop import naive_settings, run_naive
    from worker.pipeline import Stages, load_stages
    from worker.settings import get_settings
    from worker.storage import LocalStorage

    settings = naive_settings(get_settings(), torch.get_num_threads(), context_capture=False)
    loaded = load_stages(settings)
    assert loaded.detector is not None
    stages = Stages(NaivePredictor(loaded.structure), NaivePredictor(loaded.detector), loaded.ocr)
    storage = LocalStorage(args.out)
    for path in args.files:
        manifest = run_naive(path, stages, storage, settings, settings.inputs.dpi)
        if manifest["status"] != "complete":
            print(f"{path.name}: {manifest['status']}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(_naive_main(sys.argv[1:]))
