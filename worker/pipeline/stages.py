"""The model-backed parts of a run, passed in rather than imported, so tests and the bench
can bring their own and torch is imported only when real models load."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from PIL import Image

from worker.core.totals import Reading
from worker.core.types import BBox, Word
from worker.engines import LEGACY_ENGINE, Detector, Predictor, get_engine, resolve_engine
from worker.engines.ocr import OcrEngine, load_ocr_engine
from worker.overlap import torch_threads
from worker.settings import Settings

__all__ = ["Predictor", "Stages", "load_stages"]


@dataclass
class Stages:
    """The model-backed parts; tests and the bench pass their own."""

    structure: Predictor  # the engine's StructureModel: its raw output is the engine's own
    detector: Detector | None  # None: every page is one table (`--tables page`)
    ocr: Callable[[Image.Image], list[Word]]
    threads: Callable[[int], None] | None = None  # sets torch's thread count (see process_pages)
    engine: str = LEGACY_ENGINE  # the registered engine (worker.engines) whose raw output `structure` emits
    ocr_engine: OcrEngine | None = None  # what `ocr` reads with, for the manifest (None: a test's reader)
    # second reader of single cells for OCR'd totals that do not add up; None: the `read_cells` of
    # the OCR engine OCR__CELL_READER names (worker.engines.ocr), loaded when first needed
    cell_reader: Callable[[Image.Image, Sequence[BBox]], list[Reading | None]] | None = None

    def at_dpi(self, dpi: int) -> Stages:
        """These stages with the OCR engine set for pages at `dpi` (PP-OCR: the smallest scale its
        caption strips' and table crops' lines are found at): one set of loaded models serves pages of any
        resolution (the queue's jobs, the eval's kinds), loaded for INPUTS__DPI. A test's own
        reader is kept as it is."""
        engine = self.ocr_engine
        at = getattr(engine, "at_dpi", None)
        if engine is None or at is None or getattr(self.ocr, "__self__", None) is not engine:
            return self
        other = at(dpi)
        return self if other is engine else replace(self, ocr=other.read, ocr_engine=other)

    def models(self) -> dict[str, Any]:
        out = {"structure": _model_entry(self.structure)}
        if self.detector is not None:
            out["detection"] = _model_entry(self.detector)
        if self.ocr_engine is not None:
            out["ocr"] = {"id": self.ocr_engine.name, "revision": self.ocr_engine.version}
            out |= getattr(self.ocr_engine, "weights", {})  # pinned OCR model files with their sha256 (PP-OCR)
        return out


def _model_entry(model: Predictor | Detector) -> dict[str, Any]:
    entry = {"id": model.model_id, "revision": model.revision}
    sha256 = getattr(model, "sha256", None)  # the embedded engine's weights are pinned by hash
    return entry | ({"sha256": sha256} if sha256 else {})


def load_stages(settings: Settings, tables: str = "detect", engine: str | None = None) -> Stages:
    """Load the models of the engine (`engine` or ENGINE, `auto` settled by the registry) and the
    OCR engine of the `ocr` group; lazily imported: torch and onnxruntime live in models/."""
    chosen, _ = resolve_engine(engine or settings.models.engine, settings)
    chosen = get_engine(chosen.name)
    ocr = load_ocr_engine(settings.ocr, settings.inputs.dpi, settings.models)
    loaded = chosen.load(settings, tables == "detect", torch_threads(settings))
    return Stages(
        loaded.structure, loaded.detector, ocr.read, threads=loaded.threads, engine=chosen.name, ocr_engine=ocr
    )
