"""`tablesight bench memory`: peak RSS of one worker process against the number of pages.

Each page count gets a generated scanned PDF (worker.devtools.bench_inputs.make_corpus: 1-2 tables a
page) read by a fresh process that runs the pipeline in process, as `tablesight extract` does. The
child reports its own high-water mark (VmHWM: the Python process with its models), its RSS after the
models loaded, and the largest `ru_maxrss` of its subprocesses (tesseract, pdftoppm), which is only an
upper bound: a child's count includes the parent's pages it shared between fork and exec. Flat in the page
count means the pipeline holds a bounded number of pages (PIPELINE_LANES groups), never the document.
Run as `python -m worker.devtools.bench_memory child ENGINE PDF OUT` it is that child.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from worker.devtools.bench_report import peak_rss_mib


def _status_mib(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _rss_mib() -> float:
    return _status_mib("VmRSS")


def child(engine: str, pdf: Path, out: Path) -> dict[str, Any]:
    """Load the engine, extract `pdf` in process, report memory (the child's side)."""
    from worker.pipeline import extract_document, load_stages
    from worker.settings import get_settings
    from worker.storage import LocalStorage

    settings = get_settings().replace(engine=engine)
    stages = load_stages(settings, engine=engine)
    loaded = _rss_mib()
    trace: list[tuple[float, float]] = []  # (VmHWM, VmRSS) as each page's result comes out
    manifest = extract_document(
        pdf,
        stages=stages,
        storage=LocalStorage(out),
        settings=settings,
        on_page=lambda _r: trace.append((_status_mib("VmHWM"), _rss_mib())),
    )
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = peak_rss_mib()
    return {
        "pages": len(manifest["pages_done"]),
        "tables": len(manifest["tables"]),
        "status": manifest["status"],
        "rss_after_load_mib": loaded,
        "peak_rss_mib": peak,
        # the first page by whose result the peak was reached (it holds after), and the RSS at the end
        "peak_by_page": next((i for i, (hwm, _) in enumerate(trace, 1) if hwm >= (peak or 0.0)), len(trace)),
        "rss_at_end_mib": trace[-1][1] if trace else loaded,
        "largest_subprocess_rss_mib_upper_bound": round(kids.ru_maxrss / 1024, 1),
    }


def run_memory(engine: str, counts: tuple[int, ...], seed: int = 0) -> dict[str, Any]:
    """One fresh process per page count, in increasing order; the report (JSON-able)."""
    from worker.devtools.bench_inputs import make_corpus

    rows = []
    with tempfile.TemporaryDirectory(prefix="tablesight-bench-memory-") as tmp:
        for n in counts:
            corpus = make_corpus(Path(tmp) / f"pages-{n}", n, seed)
            cmd = [sys.executable, "-m", "worker.devtools.bench_memory", "child", engine]
            cmd += [str(corpus / "bench.pdf"), str(Path(tmp) / f"out-{n}")]
            done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ}, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"memory child for {n} page(s) failed: {done.stderr.strip()[-1500:]}")
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    first, last = rows[0], rows[-1]
    return {
        "bench": "memory",
        "engine": engine,
        "rows": rows,
        "growth_mib": round(last["peak_rss_mib"] - first["peak_rss_mib"], 1),
        "growth_ratio": round(last["peak_rss_mib"] / first["peak_rss_mib"], 3),
    }


def format_memory_report(report: dict[str, Any]) -> str:
    lines = [
        f"tablesight bench memory: engine {report['engine']}, one fresh process per page count",
        f"{'pages':>6}{'tables':>8}{'after load MiB':>16}{'peak RSS MiB':>14}{'peak by page':>14}"
        f"{'RSS at end MiB':>16}{'subprocess MiB (bound)':>24}",
    ]
    for r in report["rows"]:
        lines.append(
            f"{r['pages']:>6}{r['tables']:>8}{r['rss_after_load_mib']:>16.0f}{r['peak_rss_mib']:>14.0f}"
            f"{r.get('peak_by_page', 0):>14}{r.get('rss_at_end_mib', 0):>16.0f}"
            f"{r['largest_subprocess_rss_mib_upper_bound']:>24.0f}"
        )
    lines.append(
        f"peak RSS growth, fewest to most pages: {report['growth_mib']:+.0f} MiB ({report['growth_ratio']:.2f}x)"
    )
    return "\n".join(lines)


if __name__ == "__main__" and len(sys.argv) == 5 and sys.argv[1] == "child":
    print(json.dumps(child(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))))
