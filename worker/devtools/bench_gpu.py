"""`tablesight bench --device cuda --engine embedded,tatr`: pages/s and GPU memory per batch size,
in one short run, so that a lent GPU machine is measured in minutes.

For each engine the models load once on the device; for each batch size B the detector reads B
page images and the structure model B table crops in one call (after one untimed call of the same
shape), repeated until `min_seconds` have passed. Pages/s is B over the two calls' time; GPU memory
is torch's peak allocation (Table Transformer) and the device's used memory (onnxruntime's CUDA
arena, which torch cannot see). A last pass runs the whole pipeline (OCR on the CPU included) at
the settings' own batch sizes. With `--device cpu` (`--gpu-sweep`) the same runs on the CPU, as a
check of the script and a baseline.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from worker.settings import Settings

DEFAULT_BATCH_SIZES = (1, 8, 32)


@dataclass
class GpuBenchOptions:
    engines: tuple[str, ...] = ("embedded", "tatr")
    device: str = "cuda"
    batch_sizes: tuple[int, ...] = DEFAULT_BATCH_SIZES
    pages: int = 4  # distinct pages (cycled up to the largest batch)
    data_dir: Path | None = None  # real pages (the evaluation set) instead of generated ones
    models: str = "auto"  # Table Transformer weights: auto | random | real (worker.devtools.bench_inputs)
    size: str = "full"
    min_seconds: float = 2.0


class DeviceUnavailable(RuntimeError):
    """The device asked for cannot be used here (no CUDA, or a runtime without its provider)."""


def check_device(device: str, engines: tuple[str, ...]) -> str:
    """The concrete device, or DeviceUnavailable saying what is missing for which engine."""
    from models.device import resolve_device

    try:
        resolved = resolve_device(device)
    except ValueError as exc:
        raise DeviceUnavailable(f"{exc} (a GPU machine with the NVIDIA driver: see docs/speed.md)") from None
    if resolved.startswith("cuda") and "embedded" in engines:
        import onnxruntime as ort

        if "CUDAExecutionProvider" not in ort.get_available_providers():
            raise DeviceUnavailable(
                "the embedded engine on CUDA needs onnxruntime-gpu (pip install 'tablesight[gpu]'); this "
                f"onnxruntime {ort.__version__} has {', '.join(ort.get_available_providers())}"
            )
    return resolved


def gpu_memory() -> dict[str, float | None]:
    """Torch's peak allocation and the device's used memory, MiB (None off CUDA)."""
    import torch

    if not torch.cuda.is_available():
        return {"torch_peak_mib": None, "device_used_mib": None}
    free, total = torch.cuda.mem_get_info()
    return {
        "torch_peak_mib": round(torch.cuda.max_memory_allocated() / 2**20, 1),
        "device_used_mib": round((total - free) / 2**20, 1),
    }


def _timed(fn: Callable[[], Any], min_seconds: float) -> float:
    """Seconds per call of `fn`, after one untimed call, over at least `min_seconds` (and 2 calls)."""
    fn()
    calls, t0 = 0, time.perf_counter()
    while calls < 2 or time.perf_counter() - t0 < min_seconds:
        fn()
        calls += 1
    return (time.perf_counter() - t0) / calls


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def page_images(options: GpuBenchOptions, work: Path, dpi: int) -> tuple[list[Image.Image], Path]:
    """The distinct pages as images, and the folder of their PDF(s) for the pipeline pass."""
    from worker.inputs import open_document
    from worker.settings import Settings

    if options.data_dir is not None:
        from worker.devtools.bench_real import real_corpus

        corpus = real_corpus(options.data_dir, work / "corpus", options.pages, dpi)
    else:
        from worker.devtools.bench_inputs import make_corpus

        corpus = make_corpus(work / "corpus", options.pages)
    images = []
    for pdf in sorted(corpus.glob("*.pdf")):
        doc = open_document(pdf, settings=Settings(_env_file=None))
        images += [doc.render(p, dpi) for p in range(1, doc.page_count + 1)]
    return images, corpus


def _engine_settings(base: Settings, engine: str, options: GpuBenchOptions, work: Path) -> Settings:
    update: dict[str, Any] = {"engine": engine, "device": options.device, "cpu_batch_size": 0}
    if engine == "tatr":
        from worker.devtools.bench_inputs import bench_models

        det, struct, kind = bench_models(base, options.models, options.size)  # type: ignore[arg-type]
        if kind.startswith("random"):  # random weights find no table: one per page, as real pages have
            from worker.devtools.bench_real import one_table_detector

            det = str(one_table_detector(Path(det), Path(det).parent))
        update |= {"detection_model": det, "structure_model": struct}
    return base.replace(**update)


def sweep_engine(
    engine: str, settings: Settings, pages: list[Image.Image], corpus: Path, options: GpuBenchOptions, work: Path
) -> dict[str, Any]:
    """One engine: batch-size rows and a whole-pipeline pass."""
    import torch

    from worker.pipeline import extract_document, load_stages
    from worker.storage import LocalStorage

    stages = load_stages(settings, engine=engine)
    assert stages.detector is not None
    device = options.device
    largest = max(options.batch_sizes)
    batch = [pages[i % len(pages)] for i in range(largest)]
    w, h = pages[0].size  # the middle of the page as the table crop: the models' cost, not their answers
    crops = [im.crop((int(0.08 * w), int(0.18 * h), int(0.92 * w), int(0.82 * h))) for im in batch]
    rows = []
    for b in options.batch_sizes:
        if device.startswith("cuda"):
            torch.cuda.reset_peak_memory_stats()

        def detect(b: int = b) -> None:
            stages.detector.predict(batch[:b], b)  # type: ignore[union-attr]
            _sync(device)

        def structure(b: int = b) -> None:
            stages.structure.predict(crops[:b], b)
            _sync(device)

        det_s, str_s = _timed(detect, options.min_seconds), _timed(structure, options.min_seconds)
        rows.append(
            {
                "batch_size": b,
                "detection_pages_per_s": round(b / det_s, 3),
                "structure_crops_per_s": round(b / str_s, 3),
                "models_pages_per_s": round(b / (det_s + str_s), 3),  # one table per page
                **gpu_memory(),
            }
        )
    store = LocalStorage(work / f"pipeline-{engine}")
    paths = sorted(corpus.glob("*.pdf"))
    extract_document(paths[0], stages=stages, storage=store, settings=settings)  # warm
    n, t0 = 0, time.perf_counter()
    for path in paths:
        n += len(extract_document(path, stages=stages, storage=store, settings=settings)["pages_done"])
    wall = time.perf_counter() - t0
    return {
        "engine": engine,
        "models": stages.models(),
        "batches": rows,
        "pipeline": {"pages": n, "pages_per_s": round(n / wall, 3), "wall_s": round(wall, 2)},
    }


def run_gpu_bench(
    options: GpuBenchOptions, settings: Settings, log: Callable[[str], None] = lambda _m: None
) -> dict[str, Any]:
    """Check the device, then sweep each engine (see the module docstring)."""
    options.device = check_device(options.device, options.engines)
    work = Path(tempfile.mkdtemp(prefix="tablesight-bench-gpu-"))
    try:
        pages, corpus = page_images(options, work, settings.inputs.dpi)
        report: dict[str, Any] = {
            "bench": "gpu",
            "device": options.device,
            "device_name": _device_name(options.device),
            "pages": len(pages),
            "batch_sizes": list(options.batch_sizes),
            "engines": [],
        }
        for engine in options.engines:
            log(f"{engine} on {options.device}: batch sizes {', '.join(map(str, options.batch_sizes))}")
            engine_settings = _engine_settings(settings, engine, options, work)
            report["engines"].append(sweep_engine(engine, engine_settings, pages, corpus, options, work))
        return report
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _device_name(device: str) -> str:
    import platform

    if device.startswith("cuda"):
        import torch

        return str(torch.cuda.get_device_name(device))
    return platform.processor() or platform.machine()


def format_gpu_report(report: dict[str, Any]) -> str:
    lines = [f"tablesight bench (GPU sweep): {report['device']} ({report['device_name']}), {report['pages']} page(s)"]
    lines.append(
        f"{'engine':<10}{'batch':>6}{'det pages/s':>13}{'struct crops/s':>16}{'pages/s':>9}"
        f"{'torch peak MiB':>16}{'device MiB':>12}"
    )
    for e in report["engines"]:
        for r in e["batches"]:
            peak = "-" if r["torch_peak_mib"] is None else f"{r['torch_peak_mib']:.0f}"
            used = "-" if r["device_used_mib"] is None else f"{r['device_used_mib']:.0f}"
            lines.append(
                f"{e['engine']:<10}{r['batch_size']:>6}{r['detection_pages_per_s']:>13.2f}"
                f"{r['structure_crops_per_s']:>16.2f}{r['models_pages_per_s']:>9.2f}{peak:>16}{used:>12}"
            )
        p = e["pipeline"]
        lines.append(f"{e['engine']:<10} whole pipeline (OCR on CPU): {p['pages_per_s']:.2f} pages/s over {p['pages']}")
    return "\n".join(lines)
