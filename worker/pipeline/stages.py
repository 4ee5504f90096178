"""The model-backed parts of a run, passed in rather than imported, so tests and the bench
can bring their own and torch is imported only when real models load."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from PIL import Image

from worker.core.types import Word
from worker.overlap import torch_threads
from worker.settings import Settings


class Predictor(Protocol):
    """A detection or structure model: images in, plain objects (label, score, bbox) out."""

    model_id: str
    revision: str | None

    def predict(self, images: list[Image.Image], batch_size: int | None = None) -> list[list[dict[str, Any]]]: ...


@dataclass
class Stages:
    """The model-backed parts; tests and the bench pass their own."""

    structure: Predictor
    detector: Predictor | None  # None: every page is one table (`--tables page`)
    ocr: Callable[[Image.Image], list[Word]]
    threads: Callable[[int], None] | None = None  # sets torch's thread count (see process_pages)
    engine: str = "tatr"  # what `structure` emits: tatr objects, or embedded tokens with cell boxes

    def models(self) -> dict[str, Any]:
        out = {"structure": _model_entry(self.structure)}
        if self.detector is not None:
            out["detection"] = _model_entry(self.detector)
        return out


def _model_entry(model: Predictor) -> dict[str, Any]:
    entry = {"id": model.model_id, "revision": model.revision}
    sha256 = getattr(model, "sha256", None)  # the embedded engine's weights are pinned by hash
    return entry | ({"sha256": sha256} if sha256 else {})


def load_stages(settings: Settings, tables: str = "detect", engine: str | None = None) -> Stages:
    """Load the models of the engine (`engine` or ENGINE; lazily imported: torch lives in models/)."""
    from models.engine import EMBEDDED, choose_engine
    from models.ocr import ocr_words

    def ocr(image: Image.Image) -> list[Word]:
        # ruling lines confuse tesseract: erase runs longer than ~1/5 inch at this dpi
        return ocr_words(
            image,
            lang=settings.ocr_lang,
            psm=settings.ocr_psm,
            rule_min_px=max(10, settings.dpi // 5),
            threads=settings.ocr_threads or None,
        )

    engine = engine or settings.engine
    if engine == "auto":
        engine, _ = choose_engine(settings)
    if engine == EMBEDDED:
        from models import embedded

        threads = settings.embedded_threads or torch_threads(settings)  # onnxruntime's per call, as torch's per lane
        found: Predictor | None = embedded.load_detector(settings, threads) if tables == "detect" else None
        return Stages(embedded.load_structure(settings, threads), found, ocr, engine=EMBEDDED)
    from models.device import configure_threads  # torch: imported for Table Transformer only (~0.5 GiB RSS)
    from models.table_transformer import load_detector, load_structure

    detector = load_detector(settings) if tables == "detect" else None
    stages = Stages(structure=load_structure(settings), detector=detector, ocr=ocr, threads=configure_threads)
    configure_threads(torch_threads(settings))
    return stages
