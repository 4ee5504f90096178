"""What `tablesight bench` reports: per-variant summaries, output and model-output comparisons,
peak memory, and the printed table (worker.devtools.bench runs the variants)."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STAGE_ORDER = ("render", "text_layer", "detection", "structure", "ocr", "context", "reconstruct", "storage")
_VOLATILE = ("timings", "wall_seconds", "finished_at")  # differ between any two runs
# Numbers in stored records: boxes are rounded to 0.01 px and scores to 1e-3..1e-5, so a model
# difference of 1e-4 px (another kernel, thread count, runtime) can move the last digit by one step.
NUMERIC_TOLERANCE = 0.011
# The raw model outputs themselves: what another runtime (ONNX Runtime) must keep to.
MODEL_SCORE_TOLERANCE = 1e-4
MODEL_BOX_TOLERANCE_PX = 0.5


@dataclass
class Run:
    """One timed pass of one variant over every document."""

    wall: float
    pages: int
    stages: dict[str, float]
    store: Path
    cpu: float  # user + system seconds of the process and its finished subprocesses (tesseract, poppler)


def summarise(runs: list[Run]) -> dict[str, Any]:
    """One variant's rounds as the report gives them: medians, and the stages of the median run."""
    walls = [r.wall for r in runs]
    if not walls:
        return {
            "rounds_wall_s": [],
            "pages_per_s": None,
            "wall_s": None,
            "cpu_s_per_page": None,
            "stage_s": {},
            "peak_rss_mib": None,
        }
    wall = statistics.median(walls)
    mid = min(runs, key=lambda r: abs(r.wall - wall))  # stage times of the run nearest the median
    stages = {k: round(mid.stages[k], 3) for k in sorted(mid.stages, key=stage_key)}
    return {
        "pages_per_s": round(mid.pages / wall, 4),
        "wall_s": round(wall, 3),
        "rounds_wall_s": [round(w, 3) for w in walls],
        "cpu_s_per_page": round(statistics.median(r.cpu / r.pages for r in runs), 3),
        "stage_s": stages,
        "stage_s_total": round(sum(mid.stages.values()), 3),
        "peak_rss_mib": None,
    }


def stage_key(stage: str) -> tuple[int, str]:
    return (STAGE_ORDER.index(stage) if stage in STAGE_ORDER else len(STAGE_ORDER), stage)


def count_tables(store: Path) -> int:
    return sum(1 for _ in store.glob("*/tables/*.html"))


def compare_outputs(reference: Path, others: list[Path]) -> dict[str, Any]:
    """Every stored file of each run against the reference run: bytes, or JSON without timings.

    `identical`: every file equal. `equivalent`: equal but for numbers in JSON records (raw
    model scores and boxes) within NUMERIC_TOLERANCE, with every table's HTML equal: what a
    different kernel, thread count or batch makes of the models' own answers.
    """
    ref = _files(reference)
    differences: list[str] = []
    html_differ = 0
    numeric = 0.0
    for other in others:
        theirs = _files(other)
        for key in sorted(set(ref) | set(theirs)):
            if key not in ref or key not in theirs:
                differences.append(f"{other.name}: {key} only in {'the reference' if key in ref else other.name}")
                continue
            a, b = _content(reference / key), _content(other / key)
            if a == b:
                continue
            gap = _numeric_gap(a, b) if key.endswith(".json") else None
            html_differ += key.endswith(".html")
            differences.append(f"{other.name}: {key} differs" + (f" (numbers only, by {gap:.1e})" if gap else ""))
            numeric = max(numeric, gap if gap is not None else float("inf"))
    html = [k for k in ref if k.endswith(".html") and "/tables/" in k]
    return {
        "identical": not differences,
        "equivalent": not html_differ and numeric <= NUMERIC_TOLERANCE,
        "html_identical": not html_differ,
        "max_numeric_diff": numeric if numeric != float("inf") else None,
        "runs_compared": len(others),
        "files": len(ref),
        "tables": len(html),
        "differences": differences[:20],
        "n_differences": len(differences),
    }


def _numeric_gap(a: Any, b: Any) -> float | None:
    """Largest difference between the numbers of two JSON values equal in everything else; None if not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return 0.0 if a == b else None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b)
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return None
        gaps = [_numeric_gap(a[k], b[k]) for k in a]
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return None
        gaps = [_numeric_gap(x, y) for x, y in zip(a, b)]
    else:
        return 0.0 if a == b else None
    known = [g for g in gaps if g is not None]
    return None if len(known) < len(gaps) else max(known, default=0.0)


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))


def _content(path: Path) -> Any:
    data = path.read_bytes()
    if path.suffix != ".json":
        return data
    value = json.loads(data)
    if isinstance(value, dict):
        for key in _VOLATILE:
            value.pop(key, None)
    return value


def agreement(a: dict[str, list[dict[str, Any]]], b: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """How far the two variants' raw model outputs are apart on the same images (numerics only:
    channels-last, threads and batching reorder float sums)."""
    common = sorted(set(a) & set(b))
    score = box = 0.0
    for key in common:
        sa = sorted(o["score"] for o in a[key])
        sb = sorted(o["score"] for o in b[key])
        score = max(score, max((abs(x - y) for x, y in zip(sa, sb)), default=0.0))
        for o in a[key]:  # nearest same-label box: a tie in score may swap the order
            near = min(
                (max(abs(u - v) for u, v in zip(o["bbox"], q["bbox"])) for q in b[key] if q["label"] == o["label"]),
                default=0.0,
            )
            box = max(box, near)
    return {
        "images": len(common),
        "max_score_diff": score,
        "max_box_diff_px": round(box, 6),
        "within_tolerance": score <= MODEL_SCORE_TOLERANCE and box <= MODEL_BOX_TOLERANCE_PX,
    }


def peak_rss_mib() -> float | None:
    """This process's resident-memory high-water mark (VmHWM), MiB; None off Linux."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def format_report(report: dict[str, Any]) -> str:
    """The report as a plain-text table (what the JSON says, for people)."""
    c, names = report["corpus"], list(report["variants"])
    lines = [
        f"tablesight bench: {c['pages']} page(s), {c['tables']} table(s) in {c['documents']} document(s) "
        f"({c['source']}, {c['dpi']} dpi); models {report['models']['kind']}, answers {report['answers']}, "
        f"device {report['device']}, {report['rounds']} round(s) interleaved; load "
        f"{report['load_avg']['before'][0]} -> {report['load_avg']['after'][0]}"
    ]
    rows = [
        ("pages/s", "pages_per_s", "{:.3f}"),
        ("wall s (median)", "wall_s", "{:.2f}"),
        ("CPU s per page", "cpu_s_per_page", "{:.2f}"),
    ]
    lines.append(f"{'':<22}" + "".join(f"{n:>12}" for n in names))
    for label, key, fmt in rows:
        lines.append(f"{label:<22}" + "".join(f"{_fmt(report['variants'][n][key], fmt):>12}" for n in names))
    stages = sorted({s for n in names for s in report["variants"][n]["stage_s"]}, key=stage_key)
    for stage in stages:
        lines.append(
            f"  {stage + ' s':<20}"
            + "".join(f"{_fmt(report['variants'][n]['stage_s'].get(stage), '{:.2f}'):>12}" for n in names)
        )
    lines.append(
        f"{'  sum of stages s':<22}"
        + "".join(f"{_fmt(report['variants'][n].get('stage_s_total'), '{:.2f}'):>12}" for n in names)
    )
    if any(report["variants"][n].get("cpu_s_per_table") is not None for n in names):
        lines.append(
            f"{'CPU s per table':<22}"
            + "".join(f"{_fmt(report['variants'][n].get('cpu_s_per_table'), '{:.2f}'):>12}" for n in names)
        )
    for n in names:
        if report["variants"][n].get("stage_cpu_s_per_table"):
            per = report["variants"][n]["stage_cpu_s_per_table"]
            lines.append(f"{n} CPU s per table by stage: " + ", ".join(f"{k} {v:.2f}" for k, v in per.items()))
    if any(report["variants"][n]["peak_rss_mib"] for n in names):
        lines.append(
            f"{'peak RSS MiB (alone)':<22}"
            + "".join(f"{_fmt(report['variants'][n]['peak_rss_mib'], '{:.0f}'):>12}" for n in names)
        )
        lines.append(
            f"{'  of which at load':<22}"
            + "".join(f"{_fmt(report['variants'][n].get('peak_rss_after_load_mib'), '{:.0f}'):>12}" for n in names)
        )
    else:
        lines.append(
            f"peak RSS MiB: {_fmt(report['process_peak_rss_mib'], '{:.0f}')} for this process, all variants "
            "(--rss: each variant alone in a fresh process)"
        )
    if "speedup" in report:
        lines.append(f"speed-up fast/naive: {report['speedup']:.2f}x (pages/s of the median round)")
        o = report["outputs"]
        if o["identical"]:
            verdict = "identical"
        elif o["equivalent"]:
            verdict = (
                f"HTML identical; {o['n_differences']} JSON record(s) differ in raw model numbers only "
                f"(max {o['max_numeric_diff']:.1e})"
            )
        else:
            verdict = f"{o['n_differences']} DIFFERENCE(S): " + "; ".join(o["differences"][:5])
        lines.append(
            f"outputs: {o['files']} files ({o['tables']} tables) against {o['runs_compared']} other run(s): {verdict}"
        )
        a = report["model_agreement"]
        lines.append(
            "raw model outputs fast vs naive: "
            + "; ".join(
                f"{k} max |d score| {v['max_score_diff']:.1e}, max |d box| {v['max_box_diff_px']:.2e} px"
                for k, v in a.items()
            )
            + f" (within {MODEL_SCORE_TOLERANCE:g} / {MODEL_BOX_TOLERANCE_PX:g} px: "
            + str(all(v["within_tolerance"] for v in a.values()))
            + ")"
        )
    whole = report.get("whole_process")
    if whole:
        lines.append(
            "whole process (fresh interpreter per run, imports + model load): "
            + ", ".join(f"{n} {v['wall_s']:.1f} s wall / {v['cpu_s']:.1f} s CPU" for n, v in whole["variants"].items())
        )
        if "speedup" in whole:
            lines.append(
                f"speed-up, whole process: {whole['speedup']:.2f}x wall, {whole['cpu_ratio']:.2f}x CPU "
                f"(naive without caption capture); table HTML identical: {whole['html_identical']}"
            )
    if "embedded_vs_tatr" in report:
        lines.append(
            f"embedded engine / Table Transformer (fast): {report['embedded_vs_tatr']:.2f}x pages/s "
            f"(Table Transformer models: {report['models']['kind']}, answers {report['answers']})"
        )
    cfg = report["config"]
    if "fast" in cfg and "fast" in report["variants"]:
        f = cfg["fast"]
        lines.append(
            f"fast: {f['pipeline_lanes']} lanes x {f['torch_threads']} torch thread(s), "
            f"{f['subprocess_threads']} subprocess thread(s), tesseract {f['ocr_threads'] or 'default'} thread(s), "
            f"CPU batch cap {f['cpu_batch_size'] or 'none'}, channels-last {f['channels_last']}"
        )
    if "naive" in report["variants"]:
        lines.append(
            f"naive: batch 1, fp32, torch.no_grad, {cfg['naive']['torch_threads']} torch thread(s), "
            "tesseract default threads, no overlap"
        )
    for row in report.get("batch_sweep", []):
        gpu = f", GPU peak {row['gpu_peak_mib']:.0f} MiB" if row["gpu_peak_mib"] is not None else ""
        same = {True: ", HTML identical", False: ", HTML DIFFERS", None: ""}[row["html_identical"]]
        lines.append(f"fast, batch {row['batch_size']}: {row['pages_per_s']:.3f} pages/s{gpu}{same}")
    return "\n".join(lines)


def _fmt(value: Any, fmt: str) -> str:
    return "-" if value is None else fmt.format(value)
