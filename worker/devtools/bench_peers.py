"""`tablesight bench --engine embedded --peers --data DIR`: ours against the tools a user would
pick instead, each as ONE fresh process over the same pages, with its accuracy from the same run.

The pages are the evaluation set's GT pages (worker.evaluation.pages_eval), rendered at the GT's
dpi without their text layer (scans), optionally degraded (`--degrade`, worker.devtools.degrade_hook).
Ours reads them as one image-only PDF with `tablesight extract`, as a CLI user would; the peers
(img2table + tesseract, rapid-table's own pipeline) read the page images in their own venvs with
their runners (worker.evaluation.peers), models loaded once per process. Steady state per page is
what the pages after the first cost once the process is warm: the peers' runners time each page;
ours reads page 1 and pages 2..N as two documents of one `extract` call, and the second one's
manifest says how long those pages took. Runs alternate (ABC CBA) and the best of the rounds counts.

Wall, CPU (user + system of the process and the subprocesses it waited for: tesseract,
pdftoppm) and peak RSS come from `os.wait4` on each child. TEDS is scored on the outputs of the
same processes, by pages_eval's scorer.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PEERS = ("img2table", "rapid-table")
OURS = "tablesight"


@dataclass
class PeerBenchOptions:
    data_dir: Path
    pages: int = 8  # the densest GT pages (most GT cells); 0: every page
    peers: tuple[str, ...] = PEERS
    engine: str = "embedded"
    rounds: int = 2
    degrade: str | None = None  # a degradation kind (worker.devtools.degrade_hook); None: clean renders
    seed: int = 0
    ocr: str | None = None  # our OCR engine by name (passed to the pipeline's OCR selection)
    variants: dict[str, dict[str, str]] = field(default_factory=lambda: {"": {}})  # ours: label -> env
    keep: Path | None = None


@dataclass
class Pages:
    """The benched pages: images, the one PDF of them, and which GT page each one is."""

    images: list[Path]
    pdfs: list[Path]  # page 1, then pages 2..N (ours reads both in one process)
    dpi: int
    source: list[tuple[Path, int]]  # (GT pdf, page) of image i
    tables: list[Any]  # worker.evaluation.pages_eval.GtPageTable of those pages


@dataclass
class ProcessRun:
    wall: float
    cpu: float
    peak_rss_mib: float
    out: Path


def select_pages(data_dir: Path, pages: int) -> list[Any]:
    """GT tables of the `pages` pages with the most GT cells (ties by name), every table of each."""
    from worker.evaluation.pages_eval import load_page_tables

    tables = load_page_tables(data_dir)
    if not tables:
        raise ValueError(f"no GT tables with source PDF pages under {data_dir} (*/gt.jsonl with 'pdf' and 'page')")
    cells: dict[tuple[Path, int], int] = defaultdict(int)
    for t in tables:
        cells[(t.pdf, t.page)] += max(1, len(t.cells_pt))
    chosen = set(sorted(cells, key=lambda k: (-cells[k], str(k[0]), k[1]))[: pages or len(cells)])
    return [t for t in tables if (t.pdf, t.page) in chosen]


def prepare_pages(tables: list[Any], out: Path, degrade: str | None, seed: int) -> Pages:
    """Render each page without its text layer at the GT dpi, degrade it, write PNGs and one PDF."""
    from worker.devtools.degrade_hook import degrader
    from worker.devtools.samples import make_scanned_pdf
    from worker.inputs import open_document
    from worker.settings import Settings

    dpis = {t.dpi for t in tables}
    if len(dpis) != 1:
        raise ValueError(f"the pages have several GT dpis {sorted(dpis)}: bench one at a time")
    dpi = dpis.pop()
    apply = degrader(degrade) if degrade else None
    source = sorted({(t.pdf, t.page) for t in tables}, key=lambda k: (str(k[0]), k[1]))
    out.mkdir(parents=True, exist_ok=True)
    images, paths = [], []
    settings = Settings(_env_file=None)
    for i, (pdf, page) in enumerate(source, 1):
        image = open_document(pdf, settings=settings).render(page, dpi)
        if apply is not None:
            image = apply(image, seed + i)
        path = out / f"page-{i:03d}.png"
        image.save(path)
        images.append(image)
        paths.append(path)
    pdfs = [make_scanned_pdf(out / "first.pdf", images[:1], dpi=dpi)]
    if len(images) > 1:
        pdfs.append(make_scanned_pdf(out / "rest.pdf", images[1:], dpi=dpi))
    return Pages(paths, pdfs, dpi, source, tables)


def run_process(
    cmd: list[str], out: Path, env: dict[str, str], stdin: str | None = None, cwd: str | None = None
) -> ProcessRun:
    """One fresh process, timed from outside; its rusage (with its reaped children) from wait4."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / "stdout").open("w") as so, (out / "stderr").open("w") as se:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=so, stderr=se, env=env, text=True, cwd=cwd)
        assert proc.stdin is not None
        proc.stdin.write(stdin or "")
        proc.stdin.close()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    if proc.returncode != 0:
        tail = (out / "stderr").read_text(errors="replace").strip()[-1500:]
        raise RuntimeError(f"{' '.join(cmd[:4])} ... exited {proc.returncode}: {tail}")
    return ProcessRun(wall, usage.ru_utime + usage.ru_stime, round(usage.ru_maxrss / 1024, 1), out)


def _ours_cmd(pages: Pages, out: Path, engine: str) -> list[str]:
    cmd = [sys.executable, "-m", "worker.cli.main", "extract", *map(str, pages.pdfs), "--out", str(out / "store")]
    return cmd + ["--engine", engine, "--dpi", str(pages.dpi), "--no-progress"]


def _peer_job(pages: Pages) -> str:
    numbers = list(range(1, len(pages.images) + 1))
    return json.dumps(
        {
            "pdf": str(pages.pdfs[0]),
            "dpi": pages.dpi,
            "mode": "scan",
            "pages": numbers,
            "images": {str(n): str(pages.images[n - 1]) for n in numbers},
            "words": {},
        }
    )


@dataclass
class Outcome:
    """What one tool's run gave: tables by page (1..N), failures, stage seconds, steady s/page."""

    found: dict[int, list[Any]]
    failures: list[str]
    stages: dict[str, float]
    steady: float | None


def ours_outcome(pages: Pages, store: Path) -> Outcome:
    """Our tables by page and stage seconds from the manifests (page 1's document, then the rest's)."""
    from worker.evaluation.pages_eval import Predicted

    by_source = {}
    for path in store.glob("*/manifest.json"):
        manifest = json.loads(path.read_text(encoding="utf-8"))
        by_source[manifest["source"]] = (path.parent, manifest)
    if set(by_source) != {p.name for p in pages.pdfs}:
        raise RuntimeError(f"expected the manifests of {[p.name for p in pages.pdfs]} under {store}")
    found: dict[int, list[Any]] = defaultdict(list)
    stages: dict[str, float] = defaultdict(float)
    failures = []
    for offset, pdf in enumerate(pages.pdfs):
        folder, manifest = by_source[pdf.name]
        failures += [f"{pdf.name}: {e['reason']}" for e in manifest["errors"]]
        for stage, seconds in manifest["timings"].items():
            stages[stage] += seconds
        for entry in manifest["tables"]:
            html = (folder / "tables" / f"{entry['table_id']}.html").read_text(encoding="utf-8")
            found[int(entry["page"]) + offset].append(Predicted(tuple(entry["bbox"]), html))
    rest = by_source[pages.pdfs[-1].name][1]
    steady = rest["wall_seconds"] / (len(pages.images) - 1) if len(pages.pdfs) > 1 else None
    return Outcome(found, failures, dict(stages), steady)


def peer_outcome(stdout: Path) -> Outcome:
    from worker.evaluation.pages_eval import Predicted

    answer = json.loads(stdout.read_text(encoding="utf-8").strip().splitlines()[-1])
    found = {int(p): [Predicted(tuple(t["bbox"]), t["html"]) for t in ts] for p, ts in answer["tables"].items()}
    page_s = answer.get("timing", {}).get("page_s", [])
    steady = sum(page_s[1:]) / (len(page_s) - 1) if len(page_s) > 1 else None
    return Outcome(found, [f"page {p}: {r}" for p, r in answer.get("failures", {}).items()], {}, steady)


def run_peer_bench(options: PeerBenchOptions, log: Callable[[str], None] = lambda _m: None) -> dict[str, Any]:
    """Prepare the pages, run every tool interleaved in fresh processes, score, report (JSON-able)."""
    from worker.devtools.degrade_hook import source as degrade_source
    from worker.evaluation.pages_eval import score

    if options.rounds < 1:
        raise ValueError("rounds must be at least 1")
    work = Path(tempfile.mkdtemp(prefix="tablesight-bench-peers-"))
    try:
        tables = select_pages(options.data_dir, options.pages)
        log(f"rendering {len({(t.pdf, t.page) for t in tables})} page(s) ({options.degrade or 'clean'})")
        pages = prepare_pages(tables, work / "pages", options.degrade, options.seed)
        base_env = {**os.environ, "TABLESIGHT_DEVICE": "cpu", **ocr_env(options.ocr)}
        tools: dict[str, Callable[[Path], ProcessRun]] = {}
        variant_env: dict[str, dict[str, str]] = {}
        for label, env in options.variants.items():
            name = OURS + (f"[{label}]" if label else "")
            tools[name] = _ours_runner(pages, options.engine, {**base_env, **env})
            variant_env[name] = env
        for peer in options.peers:
            tools[peer] = _peer_runner(pages, peer, base_env)
        runs: dict[str, list[ProcessRun]] = {n: [] for n in tools}
        load_before = os.getloadavg()
        order = list(tools)
        for r in range(options.rounds):
            for name in order if r % 2 == 0 else order[::-1]:
                run = tools[name](work / f"{name}-{r}")
                runs[name].append(run)
                log(f"round {r + 1}: {name} {run.wall:.1f} s wall, {run.cpu:.1f} s CPU")
        load_after = os.getloadavg()
        n_pages = len(pages.images)
        report: dict[str, Any] = {
            "bench": "peers",
            "corpus": {
                "pages": n_pages,
                "tables": len(pages.tables),
                "dpi": pages.dpi,
                "degrade": options.degrade or "none",
                "degrade_source": degrade_source() if options.degrade else None,
                "source": [f"{pdf.name} p{page}" for pdf, page in pages.source],
            },
            "engine": options.engine,
            "ocr": options.ocr or "default",
            "rounds": options.rounds,
            "cores": len(os.sched_getaffinity(0)),
            "load_avg": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in load_after]},
            "tools": {},
        }
        for name, done in runs.items():
            best = min(done, key=lambda x: x.wall)
            outcomes = [
                ours_outcome(pages, x.out / "store") if name in variant_env else peer_outcome(x.out / "stdout")
                for x in done
            ]
            outcome = outcomes[done.index(best)]
            results: dict[tuple[Path, int], dict[int, list[Any]]] = {(pdf, pages.dpi): {} for pdf, _ in pages.source}
            for i, (pdf, page) in enumerate(pages.source, 1):
                results[(pdf, pages.dpi)][page] = outcome.found.get(i, [])
            summary = score(pages.tables, results, "scan", best.wall, outcome.failures)["summary"]
            steadies = [o.steady for o in outcomes if o.steady is not None]
            report["tools"][name] = {
                "wall_s": round(best.wall, 2),
                "rounds_wall_s": [round(x.wall, 2) for x in done],
                "cpu_s": round(best.cpu, 2),
                "rounds_cpu_s": [round(x.cpu, 2) for x in done],
                "steady_s_per_page": round(min(steadies), 3) if steadies else None,
                "peak_rss_mib": max(x.peak_rss_mib for x in done),
                "stage_s": {k: round(v, 2) for k, v in outcome.stages.items()},
                "env": variant_env.get(name, {}),
                **{k: summary[k] for k in ("teds", "teds_struct", "recall", "precision")},
                "failures": summary["failures"],
            }
        ours = next(iter(report["tools"]))
        report["ratios"] = {
            f"{other}/{ours} {kind}": round(report["tools"][other][key] / report["tools"][ours][key], 2)
            for other in report["tools"]
            if other != ours
            for kind, key in (("wall", "wall_s"), ("CPU", "cpu_s"))
        }
        if options.keep:
            shutil.copytree(work, options.keep, dirs_exist_ok=True)
        return report
    finally:
        shutil.rmtree(work, ignore_errors=True)


def ocr_env(name: str | None) -> dict[str, str]:
    """The environment that selects our OCR engine `name`; a clear error when there is no selection."""
    if not name:
        return {}
    from worker.settings import Settings

    settings = Settings(_env_file=None)
    group = getattr(settings, "ocr", None)
    if group is None or not hasattr(group, "engine"):
        if name == "tesseract":
            return {}  # the only OCR before engines are selectable by name
        raise ValueError(f"--ocr {name}: these settings have no OCR engine selection yet (only tesseract)")
    return {"TABLESIGHT_OCR__ENGINE": name}


def _ours_runner(pages: Pages, engine: str, env: dict[str, str]) -> Callable[[Path], ProcessRun]:
    # `python -m` puts the working directory first on sys.path: run in the checkout that PYTHONPATH names
    checkout = env.get("PYTHONPATH", "").split(os.pathsep)[0] or None

    def run(out: Path) -> ProcessRun:
        return run_process(_ours_cmd(pages, out, engine), out, env, cwd=checkout)

    return run


def _peer_runner(pages: Pages, peer: str, env: dict[str, str]) -> Callable[[Path], ProcessRun]:
    from worker.evaluation.peers import HERE, PEERS, venv_python

    python, runner = venv_python(peer), HERE / PEERS[peer][2]

    def run(out: Path) -> ProcessRun:
        return run_process([str(python), str(runner)], out, env, _peer_job(pages))

    return run


def format_peer_report(report: dict[str, Any]) -> str:
    """The report as a plain-text table."""
    c = report["corpus"]
    lines = [
        f"tablesight bench --peers: {c['pages']} page(s), {c['tables']} GT table(s), {c['dpi']} dpi, "
        f"degrade {c['degrade']}; engine {report['engine']}, OCR {report['ocr']}; each tool one fresh process, "
        f"{report['rounds']} round(s) interleaved, best counts; {report['cores']} core(s), load "
        f"{report['load_avg']['before'][0]} -> {report['load_avg']['after'][0]}",
        f"{'tool':<28}{'wall s':>8}{'CPU s':>8}{'s/page':>8}{'RSS MiB':>9}{'TEDS':>7}{'struct':>7}{'recall':>7}",
    ]
    for name, t in report["tools"].items():
        steady = "-" if t["steady_s_per_page"] is None else f"{t['steady_s_per_page']:.2f}"
        lines.append(
            f"{name:<28}{t['wall_s']:>8.1f}{t['cpu_s']:>8.1f}{steady:>8}{t['peak_rss_mib']:>9.0f}"
            f"{t['teds']:>7.3f}{t['teds_struct']:>7.3f}{t['recall']:>7.2f}"
        )
        if t["stage_s"]:
            lines.append("  stages s: " + ", ".join(f"{k} {v:.1f}" for k, v in t["stage_s"].items()))
        for failure in t["failures"][:3]:
            lines.append(f"  failure: {failure}")
    lines += [f"{k}: {v:.2f}x" for k, v in report["ratios"].items()]
    return "\n".join(lines)
