"""Peer tools for `tablesight eval pages`, each run in its own virtual environment.

A peer's packages clash with ours (numpy pins, opencv, torch imports), so each one gets a
throwaway venv under ~/.cache/tablesight/peers/<name>, created on first use from pinned
requirements, and a small runner script (in this folder) that reads a job as JSON and writes
the tables it found as JSON. Nothing here is imported by the pipeline.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from worker.evaluation.pages_eval import PageJob, Predicted, Tool

HERE = Path(__file__).resolve().parent
VENV_ROOT = Path("~/.cache/tablesight/peers").expanduser()
# name -> (pinned requirements installed with their dependencies, ones installed without, runner)
PEERS: dict[str, tuple[list[str], list[str], str]] = {
    "img2table": (["img2table==2.0.0"], [], "img2table_runner.py"),
    "rapid-table": (
        [
            "numpy<2",
            "opencv-python-headless",
            "onnxruntime",
            "pillow",
            "pyclipper",
            "shapely",
            "pyyaml",
            "six",
            "requests",
            "tqdm",
        ],
        ["rapid-table==1.0.3", "rapid-table-det==0.0.1", "rapidocr_onnxruntime==1.4.4"],
        "rapid_table_runner.py",
    ),
}


def venv_python(name: str) -> Path:
    """The peer's interpreter, creating and filling its venv on first use."""
    with_deps, no_deps, _ = PEERS[name]
    venv = VENV_ROOT / name
    python = venv / "bin" / "python"
    stamp = venv / ".tablesight-peer"
    want = json.dumps([with_deps, no_deps])
    if python.is_file() and stamp.is_file() and stamp.read_text() == want:
        return python
    print(f"eval: setting up {name} in {venv} (once)", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, *with_deps], check=True)
    if no_deps:
        subprocess.run([*pip, "--no-deps", *no_deps], check=True)
    stamp.write_text(want)
    return python


def peer_tool(name: str) -> Tool:
    """An adapter running the peer's runner on one job at a time."""
    from worker.evaluation.pages_eval import Predicted

    python = venv_python(name)
    runner = HERE / PEERS[name][2]

    def run(job: PageJob, mode: str, work: Path) -> dict[int, list[Predicted]]:
        request = {
            "pdf": str(job.pdf),
            "dpi": job.dpi,
            "mode": mode,
            "pages": job.pages,
            "images": {str(k): str(v) for k, v in job.images.items()},
            "words": _text_layer_words(job) if mode == "text" else {},
        }
        proc = subprocess.run(
            [str(python), str(runner)], input=json.dumps(request), capture_output=True, text=True, timeout=3600
        )
        if proc.returncode != 0:
            raise RuntimeError(" ".join(proc.stderr.split())[-300:])
        answer = json.loads(proc.stdout.strip().splitlines()[-1])
        out: dict[int, list[Predicted]] = {}
        for page, tables in answer["tables"].items():
            out[int(page)] = [Predicted(tuple(t["bbox"]), t["html"]) for t in tables]
        for page, reason in answer.get("failures", {}).items():
            print(f"warning: {name}: {Path(job.pdf).name} page {page}: {reason}", file=sys.stderr)
        return out

    return run


def _text_layer_words(job: PageJob) -> dict[str, list[dict[str, object]]]:
    """The PDF's own words per page in render pixels (for peers that take OCR results)."""
    from worker.inputs import open_document
    from worker.settings import Settings
    from worker.text_layer import pdf_words

    doc = open_document(Path(job.pdf), settings=Settings(_env_file=None))
    return {str(p): [{"text": w.text, "bbox": list(w.bbox)} for w in pdf_words(doc, p, job.dpi)] for p in job.pages}
