"""Inputs of `tablesight bench`: the models (random-init, cached), generated scanned pages with
their ground truth, the naive predictor, and the recorder that answers with that truth.

Random weights find no real tables, so on generated pages the models run at full cost and
the ground truth then stands in for their answers ("oracle"): crops, OCR, reconstruction and
storage get the work a real page gives them, and speed does not depend on the weights.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image

from worker.settings import Settings

if TYPE_CHECKING:
    from models.random_init import Kind, Size

CORPUS_DPI = 200  # worker.devtools.samples draws Letter pages at 200 dpi


def bench_models(settings: Settings, models: str, size: Size) -> tuple[str, str, str]:
    """(detection ref, structure ref, kind): random-init models from the cache, or the real ones."""
    from models import weights

    if models == "auto":
        try:
            local = all(
                weights.resolve(ref, settings.models.models_dir).local
                for ref in (settings.models.detection_model, settings.models.structure_model)
            )
        except weights.WeightsNotFound:
            local = False
        models = "real" if local else "random"
    if models == "real":
        return settings.models.detection_model, settings.models.structure_model, "real"
    root = (settings.dev.bench_dir or Path.home() / ".cache" / "tablesight" / "bench") / size
    return str(_cached_model(root, "detection", size)), str(_cached_model(root, "structure", size)), f"random/{size}"


def _cached_model(root: Path, kind: Kind, size: Size) -> Path:
    """Build once (into a temporary folder renamed into place, so concurrent benches agree)."""
    from models.random_init import build_random_model

    target = root / kind
    if (target / "config.json").is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=f".{kind}-"))
    build_random_model(kind, tmp, size=size)
    try:
        os.rename(tmp, target)
    except OSError:  # another bench got there first
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def make_corpus(out_dir: Path, pages: int, seed: int = 0) -> Path:
    """One scanned PDF of `pages` pages with one or two tables each, and truth.json beside it."""
    from worker.devtools import samples

    layouts = [
        [samples.financial_table()],
        [samples.staffing_table(), samples.key_figures_table()],
        [samples.key_figures_table()],
        [samples.key_figures_table(), samples.financial_table()],
    ]
    out_dir.mkdir(parents=True, exist_ok=True)
    drawn = [
        samples.make_page(layouts[i % len(layouts)], title=f"Report section {i + 1}", seed=seed + i)
        for i in range(pages)
    ]
    samples.make_scanned_pdf(out_dir / "bench.pdf", [p.image for p in drawn], dpi=CORPUS_DPI, noise=True, seed=seed)
    truth = {
        "dpi": CORPUS_DPI,
        "documents": {
            "bench.pdf": [
                [
                    {
                        "box": list(box),
                        "cells": [
                            {k: c[k] for k in ("row", "col", "rowspan", "colspan", "text", "is_header", "text_bbox")}
                            for c in cells
                        ],
                    }
                    for box, cells in zip(p.table_boxes, p.tables)
                ]
                for p in drawn
            ]
        },
    }
    (out_dir / "truth.json").write_text(json.dumps(truth), encoding="utf-8")
    return out_dir


def fingerprint(image: Image.Image) -> str:
    """Identity of an image's pixels, cheaply: its size and a 128x128 nearest-neighbour sample."""
    sample = image.resize((128, 128), Image.Resampling.NEAREST).tobytes()
    return f"{image.width}x{image.height}:" + hashlib.blake2b(sample, digest_size=12).hexdigest()


class NaivePredictor:
    """transformers as documented: one image per call, `model(**inputs)` under `torch.no_grad`, fp32.

    Our preprocessing (resize, ImageNet norm) is kept: it is the model's contract, and another
    resize would give other answers, not a slower path to the same ones.
    """

    def __init__(self, runner: Any) -> None:
        self.runner, self.model_id, self.revision = runner, runner.model_id, runner.revision

    def predict(self, images: list[Image.Image], batch_size: int | None = None) -> list[list[dict[str, Any]]]:
        import torch

        from models.table_transformer import make_batch, normalize, postprocess

        out = []
        for image in images:
            pixels, mask = make_batch([image], self.runner.max_size)
            inputs = {
                "pixel_values": normalize(pixels, mask, torch.float32).to(self.runner.device),
                "pixel_mask": mask.to(self.runner.device),
            }
            with torch.no_grad():
                result = self.runner.model(**inputs)
            out += postprocess(result.logits, result.pred_boxes, [image.size], self.runner.id2label)
        return out


class Recorder:
    """Runs the wrapped predictor at full cost and keeps its raw answers by image; answers with
    `answers[fingerprint]` (the oracle) when given, else with the model's own."""

    def __init__(self, inner: Any, answers: dict[str, list[dict[str, Any]]] | None, kind: str) -> None:
        self.inner, self.answers, self.kind = inner, answers, kind
        self.model_id, self.revision = inner.model_id, inner.revision
        self.raw: dict[str, list[dict[str, Any]]] = {}

    def predict(self, images: list[Image.Image], batch_size: int | None = None) -> list[list[dict[str, Any]]]:
        raw = self.inner.predict(images, batch_size)
        out = []
        for image, objects in zip(images, raw):
            key = fingerprint(image)
            self.raw[key] = objects
            if self.answers is None:
                out.append(objects)
            elif key in self.answers:
                out.append([dict(o) for o in self.answers[key]])
            else:
                raise RuntimeError(
                    f"bench oracle: a {self.kind} input it does not know ({key}); did the "
                    "pipeline's cropping change? `--answers model` runs without the oracle"
                )
        return out


def oracle_answers(
    paths: list[Path], truth: dict[str, Any], settings: Settings, dpi: int
) -> tuple[dict[str, list], dict[str, list]]:
    """Ground truth as detector and structure answers, keyed by the fingerprint of the page image
    and of each crop exactly as the pipeline cuts it (same functions, same settings)."""
    from worker.core.detections import padded_box, select_tables
    from worker.core.geometry import iou
    from worker.evaluation.dataset import GtCell
    from worker.evaluation.oracle import oracle_from_cells
    from worker.inputs import open_document

    detection: dict[str, list] = {}
    structure: dict[str, list] = {}
    for path in paths:
        doc = open_document(path, settings=settings)
        for page_no, tables in enumerate(truth["documents"][path.name], 1):
            image = doc.render(page_no, dpi)
            answer = [{"label": "table", "score": 1.0, "bbox": t["box"]} for t in tables]
            _register(detection, fingerprint(image), answer)
            for box in select_tables(
                answer,
                threshold=settings.detection.threshold,
                rotated_threshold=settings.detection.rotated_threshold,
                merge_iou=settings.detection.merge_iou,
                page_size=image.size,
            ):
                table = max(tables, key=lambda t: iou(tuple(t["box"]), box.bbox))
                crop_box = padded_box(
                    box.bbox, image.size, settings.detection.crop_padding, settings.detection.crop_padding_min_px
                )
                crop = image.crop(crop_box)
                x0, y0 = crop_box[:2]
                cells = [
                    GtCell(
                        c["row"],
                        c["col"],
                        c["rowspan"],
                        c["colspan"],
                        c["text"],
                        (
                            c["text_bbox"][0] - x0,
                            c["text_bbox"][1] - y0,
                            c["text_bbox"][2] - x0,
                            c["text_bbox"][3] - y0,
                        ),
                        c["is_header"],
                    )
                    for c in table["cells"]
                ]
                n_rows = max(c.row + c.rowspan for c in cells)
                n_cols = max(c.col + c.colspan for c in cells)
                header = max((c.row + c.rowspan for c in cells if c.is_header), default=0)
                oracle = oracle_from_cells(cells, n_rows, n_cols, crop.size, header_rows=header)
                _register(
                    structure,
                    fingerprint(crop),
                    [{"label": o.label, "score": o.score, "bbox": list(o.bbox)} for o in oracle.objects],
                )
    return detection, structure


def _register(table: dict[str, list], key: str, answer: list) -> None:
    if key in table and table[key] != answer:
        raise RuntimeError(f"bench oracle: two different images share the fingerprint {key}")
    table[key] = answer
