"""`tablesight bench`: pages per second of the pipeline against the naive loop, same inputs, same process.

Speed does not depend on the weights' values, so by default the models are full-size and
randomly initialised, and on generated pages the ground truth stands in for their answers
after they have run at full cost (worker.devtools.bench_inputs). With real weights the models answer.

The naive loop is how a first user writes it with transformers and our core: page by page,
render, detect (batch 1, fp32, `torch.no_grad`), crop, recognise structure (batch 1), OCR the
crop (the OCR engine the settings choose: PP-OCR where its weights are, else tesseract), rebuild,
write; no overlap, torch's and the OCR's default threads. The variants run
interleaved (ABBA...) so drifts in the host's load hit both alike; both write every output
file, and the files must be identical (timings aside). worker.devtools.bench_report says what came out.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worker.devtools import bench_process
from worker.devtools.bench_inputs import NaivePredictor, Recorder, bench_models, make_corpus, oracle_answers
from worker.devtools.bench_report import (
    Run,
    agreement,
    compare_outputs,
    count_tables,
    peak_rss_mib,
    stage_key,
    summarise,
)
from worker.devtools.naive_loop import cpu_seconds, naive_settings, run_naive
from worker.engines import offline_engine
from worker.settings import Settings

if TYPE_CHECKING:
    from models.random_init import Size

OFFLINE = offline_engine().name  # the variant named for the offline engine: the fast pipeline on it
# OFFLINE-<ocr>: the offline engine with that OCR engine, to time the OCR engines side by side
VARIANTS = ("naive", "fast", OFFLINE, f"{OFFLINE}-tesseract", f"{OFFLINE}-ppocr")


@dataclass
class BenchOptions:
    pages: int = 6  # generated pages; with `data_dir` the densest real pages taken (0: all)
    input_dir: Path | None = None
    data_dir: Path | None = None  # an evaluation set: its PDF pages rasterised (worker.devtools.bench_real)
    degrade: str | None = None  # a scan simulator kind applied to every page first (bench_degrade)
    strength: str = "moderate"
    process: bool = False  # also each variant as a fresh process (worker.devtools.bench_process)
    models: str = "auto"  # auto | random | real
    size: Size = "full"  # random models: full (real configuration) | tiny (tests, CI)
    answers: str = "auto"  # auto | oracle | model
    rounds: int = 1
    variants: tuple[str, ...] = VARIANTS
    rss: bool = False  # peak RSS of each variant in a fresh subprocess
    batch_sizes: tuple[int, ...] = ()
    device: str | None = None
    keep: Path | None = None
    seed: int = 0


@dataclass
class _Variant:
    name: str
    settings: Settings
    stages: Any  # worker.pipeline.Stages
    torch_threads: int
    runs: list[Run] = field(default_factory=list)
    stage_cpu: dict[str, float] = field(default_factory=dict)  # naive only: stages run one at a time


def _run_variant(variant: _Variant, paths: list[Path], store: Path, dpi: int) -> Run:
    """One timed pass over every document, on this variant's thread settings."""
    import torch

    from worker.pipeline import extract_documents
    from worker.storage import LocalStorage

    torch.set_num_threads(variant.torch_threads)
    storage = LocalStorage(store)
    stages: dict[str, float] = {}
    pages = 0
    cpu0 = cpu_seconds()
    t0 = time.perf_counter()
    done: Iterator[tuple[Path, dict[str, Any]]]
    if variant.name == "naive":  # one document after another, as a first user's loop goes
        done = ((p, run_naive(p, variant.stages, storage, variant.settings, dpi, variant.stage_cpu)) for p in paths)
    else:  # as `tablesight extract` runs several files: the short ones side by side
        done = extract_documents(paths, stages=variant.stages, storage=storage, settings=variant.settings, dpi=dpi)
    for path, manifest in done:
        if manifest["status"] != "complete":
            raise RuntimeError(f"{variant.name}: {path.name} {manifest['status']}: {manifest['errors'][:3]}")
        pages += len(manifest["pages_done"])
        for stage, seconds in manifest["timings"].items():
            stages[stage] = stages.get(stage, 0.0) + seconds
    return Run(time.perf_counter() - t0, pages, stages, store, cpu_seconds() - cpu0)


# --- the bench -------------------------------------------------------------------------


def run_bench(
    options: BenchOptions, settings: Settings, log: Callable[[str], None] = lambda _m: None
) -> dict[str, Any]:
    """Build or find the models and inputs, run the variants interleaved, compare, report (JSON-able)."""
    import torch

    from models.device import resolve_device
    from worker.overlap import subprocess_threads, torch_threads
    from worker.pipeline import Stages, load_stages

    default_threads = torch.get_num_threads()  # before any loader sets it: what a first user gets
    work = Path(tempfile.mkdtemp(prefix="tablesight-bench-"))
    try:
        det_ref, str_ref, model_kind = bench_models(settings, options.models, options.size)
        base = settings.replace(
            **{
                # the outputs must equal the naive loop's, which OCRs each crop and strip on its own: one
                # OCR pass per page (OCR__PAGE_PASS) reads other crops, so other words (bench --peers measures it)
                "ocr": {"page_pass": False},
                # the naive loop has no page normalisation, and the oracle answers know the rendered pages
                # as they are: normalise (and clean the detector's input) only for simulated scans
                **({} if options.degrade else {"normalise": {"pages": False, "clean": False}}),
                "detection_model": det_ref,
                "structure_model": str_ref,
                **({"device": options.device} if options.device else {}),
            }
        )
        if options.data_dir is not None:
            from worker.devtools.bench_real import real_corpus

            log(f"rasterising the {options.pages or 'all'} densest page(s) of {options.data_dir} (no text layer)")
            corpus, source = (
                real_corpus(options.data_dir, work / "corpus", options.pages, base.inputs.dpi),
                "real scans",
            )
        elif options.input_dir is not None:
            corpus, source = options.input_dir, "input"
        else:
            log(f"generating {options.pages} scanned page(s)")
            corpus, source = make_corpus(work / "corpus", options.pages, options.seed), "generated"
        if options.degrade:  # simulated scans of the same pages (worker.devtools.bench_degrade)
            from worker.devtools.bench_degrade import degrade_corpus

            if corpus == options.input_dir:  # never rewrite the user's own files
                corpus = Path(shutil.copytree(corpus, work / "corpus-input"))
            log(f"degrading the pages: {options.degrade} ({options.strength}, seed {options.seed})")
            degrade_corpus(corpus, options.degrade, options.strength, options.seed, base.inputs.dpi)
        paths = sorted(corpus.glob("*.pdf"))
        if not paths:
            raise ValueError(f"no PDF files in {corpus}")
        truth_file = corpus / "truth.json"
        truth = json.loads(truth_file.read_text(encoding="utf-8")) if truth_file.is_file() else None
        dpi = truth["dpi"] if truth else base.inputs.dpi
        answers = options.answers
        if answers == "auto":
            answers = "oracle" if truth and model_kind != "real" else "model"
        if answers == "oracle" and not truth:
            raise ValueError("--answers oracle needs generated pages (or an --input folder with their truth.json)")
        if answers == "model" and model_kind.startswith("random"):
            from worker.devtools.bench_real import one_table_detector

            det_ref = str(one_table_detector(Path(det_ref), Path(det_ref).parent))
            base = base.replace(**{"detection_model": det_ref})
        det_answers = str_answers = None
        if answers == "oracle":
            log("rendering the pages once for the oracle's answers")
            assert truth is not None  # checked above: oracle answers need the generated truth
            det_answers, str_answers = oracle_answers(paths, truth, base, dpi)

        log(f"loading models ({model_kind})")
        variants: dict[str, _Variant] = {}
        if "naive" in options.variants:
            plain = naive_settings(base, default_threads, base.context.capture)
            loaded = load_stages(plain)
            stages = Stages(
                structure=Recorder(NaivePredictor(loaded.structure), str_answers, "structure"),
                detector=Recorder(NaivePredictor(loaded.detector), det_answers, "detection"),
                ocr=loaded.ocr,
            )
            variants["naive"] = _Variant("naive", plain, stages, default_threads)
        if "fast" in options.variants:
            loaded = load_stages(base)
            stages = Stages(
                structure=Recorder(loaded.structure, str_answers, "structure"),
                detector=Recorder(loaded.detector, det_answers, "detection"),
                ocr=loaded.ocr,
                threads=loaded.threads,
            )
            # the pool production sizes from the OCR engine it loaded (these stages carry only its reader:
            # with the engine, at_dpi and the strips read line by line would part from the naive loop's outputs)
            ocr_pool = subprocess_threads(base, ocr=loaded.ocr_engine.name if loaded.ocr_engine else None)
            variants["fast"] = _Variant(
                "fast", base.replace(lanes={"subprocess_threads": ocr_pool}), stages, torch_threads(base)
            )
        if OFFLINE in options.variants:  # real pretrained ONNX models: they give their own answers
            offline = base.replace(engine=OFFLINE)
            variants[OFFLINE] = _Variant(OFFLINE, offline, load_stages(offline, engine=OFFLINE), torch_threads(base))
        for ocr in ("tesseract", "ppocr"):  # OCR engines side by side (docs/ocr.md)
            name = f"{OFFLINE}-{ocr}"
            if name in options.variants:
                chosen = base.replace(engine=OFFLINE, ocr={"engine": ocr})
                variants[name] = _Variant(name, chosen, load_stages(chosen, engine=OFFLINE), torch_threads(base))

        after_load = peak_rss_mib()
        log("warming up (not timed)")
        for v in variants.values():
            _warm_up(v, paths[0], work / f"warm-{v.name}", dpi)
        load_before = os.getloadavg()
        order = list(variants.values())
        for r in range(options.rounds):
            for v in order if r % 2 == 0 else order[::-1]:  # ABBA...: drifts in load hit both alike
                run = _run_variant(v, paths, work / f"{v.name}-{r}", dpi)
                v.runs.append(run)
                log(f"round {r + 1}: {v.name} {run.pages} page(s) in {run.wall:.1f} s")
        load_after = os.getloadavg()

        report: dict[str, Any] = {
            "bench_version": 1,
            "corpus": {
                "source": source if not options.degrade else f"{source}, degraded {options.degrade}/{options.strength}",
                "documents": len(paths),
                "pages": order[0].runs[0].pages if order[0].runs else 0,
                "tables": count_tables(order[0].runs[0].store) if order[0].runs else 0,
                "dpi": dpi,
            },
            "models": {"kind": model_kind, "detection": det_ref, "structure": str_ref},
            "answers": answers,
            "device": resolve_device(base.models.device),
            "rounds": options.rounds,
            "load_avg": {"before": [round(x, 2) for x in load_before], "after": [round(x, 2) for x in load_after]},
            "variants": {name: summarise(v.runs) for name, v in variants.items()},
            "config": {
                "naive": {
                    "torch_threads": default_threads,
                    "batch_size": 1,
                    "dtype": "float32",
                    "overlap": False,
                    "ocr_threads": "tesseract default",
                    "inference_runtime": "torch",
                    "context_capture": base.context.capture,
                },
                "fast": {
                    "torch_threads": torch_threads(base),
                    "pipeline_lanes": base.lanes.pipeline_lanes,
                    "subprocess_threads": variants["fast"].settings.lanes.subprocess_threads
                    if "fast" in variants
                    else subprocess_threads(base),
                    "ocr_threads": base.ocr.threads,
                    "cpu_batch_size": base.models.cpu_batch_size,
                    "detection_batch_size": base.models.detection_batch_size,
                    "structure_batch_size": base.models.structure_batch_size,
                    "channels_last": base.models.channels_last,
                    "half_precision": base.models.half_precision,
                    "inference_runtime": base.models.inference_runtime,
                    "context_capture": base.context.capture,
                },
            },
            "process_peak_rss_mib": peak_rss_mib(),
            "process_peak_rss_after_load_mib": after_load,  # imports (torch ~0.9 GiB), models, oracle renders
        }
        tables = report["corpus"]["tables"]
        for name, v in variants.items():
            summary = report["variants"][name]
            if tables and v.runs:
                summary["cpu_s_per_table"] = round(statistics.median(r.cpu for r in v.runs) / tables, 3)
            if tables and v.stage_cpu:
                runs = len(v.runs)
                summary["stage_cpu_s_per_table"] = {
                    k: round(sec / (runs * tables), 3)
                    for k, sec in sorted(v.stage_cpu.items(), key=lambda kv: stage_key(kv[0]))
                }
        if OFFLINE in variants and "fast" in variants:
            report["embedded_vs_tatr"] = round(
                report["variants"][OFFLINE]["pages_per_s"] / report["variants"]["fast"]["pages_per_s"], 3
            )
        if {"naive", "fast"} <= set(variants) and all(v.runs for v in variants.values()):
            naive, fast = variants["naive"], variants["fast"]
            report["speedup"] = round(
                report["variants"]["fast"]["pages_per_s"] / report["variants"]["naive"]["pages_per_s"], 3
            )
            report["outputs"] = compare_outputs(naive.runs[0].store, [r.store for r in fast.runs + naive.runs[1:]])
            report["model_agreement"] = {
                kind: agreement(getattr(naive.stages, attr).raw, getattr(fast.stages, attr).raw)
                for kind, attr in (("detection", "detector"), ("structure", "structure"))
            }
        if options.process:
            log(f"whole process: each variant in a fresh interpreter, {options.rounds} round(s) interleaved")
            env = {
                "TABLESIGHT_DETECTION_MODEL": det_ref,
                "TABLESIGHT_STRUCTURE_MODEL": str_ref,
                "TABLESIGHT_DEVICE": resolve_device(base.models.device),
                "TABLESIGHT_DPI": str(dpi),
                "TABLESIGHT_OCR__PAGE_PASS": "false",
            }
            report["whole_process"] = bench_process.whole_process(list(variants), paths, work, options.rounds, env)
        if options.rss:
            for name in variants:
                log(f"peak RSS of {name} in a fresh process")
                child = _child_rss(name, corpus, options, answers)
                report["variants"][name]["peak_rss_mib"] = child["process_peak_rss_mib"]
                report["variants"][name]["peak_rss_after_load_mib"] = child["process_peak_rss_after_load_mib"]
        if options.batch_sizes and "fast" in variants:
            reference = variants["naive"].runs[0].store if "naive" in variants else None
            report["batch_sweep"] = [
                _sweep(variants["fast"], paths, work / f"sweep-{b}", dpi, b, reference) for b in options.batch_sizes
            ]
        if options.keep:
            shutil.copytree(work, options.keep, dirs_exist_ok=True)
        return report
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _warm_up(variant: _Variant, path: Path, store: Path, dpi: int) -> None:
    """First calls build oneDNN kernels and fill caches; keep them out of the timed rounds."""
    import torch

    from worker.inputs import open_document
    from worker.pipeline import process_pages
    from worker.storage import LocalStorage

    torch.set_num_threads(variant.torch_threads)
    doc = open_document(path, settings=variant.settings)
    if variant.name == "naive":
        image = doc.render(1, dpi)
        variant.stages.detector.inner.predict([image], 1)
        variant.stages.structure.inner.predict([image.crop((0, 0, image.width, image.height // 4))], 1)
        variant.stages.ocr(image.crop((0, 0, image.width, image.height // 8)))
    else:
        pages = list(range(1, min(doc.page_count, variant.settings.lanes.pipeline_lanes) + 1))  # as many lanes as timed
        list(
            process_pages(
                doc,
                pages,
                doc_id="warm-up",
                stages=variant.stages,
                storage=LocalStorage(store),
                settings=variant.settings,
                dpi=dpi,
            )
        )


def _child_rss(variant: str, corpus: Path, options: BenchOptions, answers: str) -> dict[str, Any]:
    """Run one variant alone in a fresh interpreter: its VmHWM is that variant's peak, honestly."""
    cmd = [
        sys.executable,
        "-m",
        "worker.cli.main",
        "bench",
        "--input",
        str(corpus),
        "--variants",
        variant,
        "--rounds",
        "1",
        "--models",
        options.models,
        "--size",
        options.size,
        "--answers",
        answers,
        "--json",
        "-",
    ]
    if options.device:
        cmd += ["--device", options.device]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench child for {variant} failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)


def _sweep(
    fast: _Variant, paths: list[Path], store: Path, dpi: int, batch: int, reference: Path | None
) -> dict[str, Any]:
    """The fast variant with detection and structure batches of `batch` (and no CPU cap).

    A lane batches at most its group, min(batch, pages / lanes): give it pages >= lanes x batch.
    Padded batches shift model outputs slightly, so with the models' own answers the outputs
    may differ from the naive loop's; the row says whether they did.
    """
    import torch

    from models.device import resolve_device

    saved = (
        fast.settings,
        [
            (s, s.max_batch)
            for s in (fast.stages.detector.inner, fast.stages.structure.inner)
            if hasattr(s, "max_batch")
        ],
    )
    fast.settings = fast.settings.replace(**{"detection_batch_size": batch, "structure_batch_size": batch})
    for runner, _ in saved[1]:
        runner.max_batch = None
    cuda = resolve_device(fast.settings.models.device).startswith("cuda")
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    try:
        run = _run_variant(fast, paths, store, dpi)
    finally:
        fast.settings = saved[0]
        for runner, cap in saved[1]:
            runner.max_batch = cap
    return {
        "batch_size": batch,
        "pages_per_s": round(run.pages / run.wall, 4),
        "wall_s": round(run.wall, 3),
        "gpu_peak_mib": round(torch.cuda.max_memory_allocated() / 2**20, 1) if cuda else None,
        "html_identical": compare_outputs(reference, [store])["html_identical"] if reference else None,
    }
