"""ONNX Runtime against torch on the same Table Transformer and images: the largest score and
box differences (the contract: 1e-4 and 0.5 px) and CPU seconds per image at one thread,
interleaved. Full-size random-weight models by default (the bench's cache), real pages.

    python -m worker.devtools.bench_onnx DEV --pages 4
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def compare(data_dir: Path, pages: int, dpi: int, size: str) -> dict[str, Any]:
    """Detection on whole pages and structure on their middle crops, torch then ONNX per image."""
    import torch

    from models.table_transformer import (
        DETECTION_LABELS,
        DETECTION_MAX_SIZE,
        STRUCTURE_MAX_SIZE,
        TableTransformer,
    )
    from worker.core.types import STRUCTURE_LABELS
    from worker.devtools.bench_inputs import bench_models
    from worker.devtools.bench_real import ONE_TABLE_BOX, real_corpus
    from worker.devtools.bench_report import agreement
    from worker.inputs import open_document
    from worker.settings import get_settings

    torch.set_num_threads(1)
    settings = get_settings()
    det_ref, str_ref, _ = bench_models(settings, "random", size)  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory(prefix="tablesight-onnx-") as tmp:
        corpus = real_corpus(data_dir, Path(tmp), pages, dpi)
        images = []
        for pdf in sorted(corpus.glob("*.pdf")):
            doc = open_document(pdf, settings=settings)
            images += [doc.render(p, dpi) for p in range(1, doc.page_count + 1)]
    cx, cy, w, h = ONE_TABLE_BOX
    crops = [
        im.crop(
            (
                int((cx - w / 2) * im.width),
                int((cy - h / 2) * im.height),
                int((cx + w / 2) * im.width),
                int((cy + h / 2) * im.height),
            )
        )
        for im in images
    ]
    report: dict[str, Any] = {"images": len(images), "dpi": dpi, "models": size}
    for kind, ref, max_size, labels, inputs in (
        ("detection", det_ref, DETECTION_MAX_SIZE, DETECTION_LABELS, images),
        ("structure", str_ref, STRUCTURE_MAX_SIZE, STRUCTURE_LABELS, crops),
    ):
        runners = {
            runtime: TableTransformer.load(
                ref, device="cpu", runtime=runtime, max_size=max_size, expected_labels=labels, threads=1
            )
            for runtime in ("torch", "onnx")
        }
        out: dict[str, dict[str, list]] = {"torch": {}, "onnx": {}}
        cpu = {"torch": 0.0, "onnx": 0.0}
        for runner in runners.values():  # warm-up: first calls build kernels
            runner.predict([inputs[0]])
        for i, image in enumerate(inputs):
            for runtime in ("torch", "onnx") if i % 2 == 0 else ("onnx", "torch"):
                c0 = time.process_time()
                out[runtime][str(i)] = runners[runtime].predict([image])[0]
                cpu[runtime] += time.process_time() - c0
        report[kind] = {
            **agreement(out["torch"], out["onnx"]),
            "cpu_s_per_image": {k: round(v / len(inputs), 3) for k, v in cpu.items()},
        }
    return report


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m worker.devtools.bench_onnx", description=__doc__)
    parser.add_argument("data", type=Path, help="an evaluation set with PDF pages (e.g. the dev set)")
    parser.add_argument("--pages", type=int, default=4, help="the densest N pages (default 4)")
    parser.add_argument("--dpi", type=int, default=200)
    parser.add_argument("--size", choices=("full", "tiny"), default="full", help="random models' size")
    args = parser.parse_args(argv)
    report = compare(args.data, args.pages, args.dpi, args.size)
    print(f"{report['images']} page(s) at {report['dpi']} dpi, {report['models']} random-weight models, 1 thread")
    for kind in ("detection", "structure"):
        r = report[kind]
        print(
            f"{kind}: max |d score| {r['max_score_diff']:.1e}, max |d box| {r['max_box_diff_px']:.1e} px "
            f"(within 1e-4 / 0.5 px: {r['within_tolerance']}); CPU s per image torch "
            f"{r['cpu_s_per_image']['torch']:.2f}, onnx {r['cpu_s_per_image']['onnx']:.2f}"
        )
    return 0 if all(report[k]["within_tolerance"] for k in ("detection", "structure")) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
