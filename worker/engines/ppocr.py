"""PP-OCRv6 as an OCR engine (models.ppocr with the `ocr` and `models` settings groups)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

    from PIL import Image

    from models.ppocr.engine import DetectedLines, PpOcr
    from worker.core.types import Word
    from worker.settings import ModelSettings, OcrSettings


class PpOcrEngine:
    """The detector + recogniser with the settings' sizing, batch, threads and score floor.

    Ruling lines longer than ~1/5 inch at the render dpi are erased, as for tesseract (fills are
    flattened before any engine reads: worker.engines.ocr.FillFlattened).
    `weights` names the two ONNX files with their sha256 for the manifest.
    """

    name = "ppocr"

    def __init__(self, engine: PpOcr) -> None:
        self.engine = engine
        self.weights: dict[str, dict[str, Any]] = {
            k: v for k, v in engine.models.items() if k != "ocr"
        }  # ocr_detection, ocr_recognition

    @property
    def version(self) -> str:
        from models.embedded.weights import PPOCR_REC

        return PPOCR_REC.requirement

    def read(self, image: Image.Image) -> list[Word]:
        return self.engine.read(image)

    def at_dpi(self, dpi: int) -> PpOcrEngine:
        """The engine for pages at `dpi`: the same sessions, caption strips' and table crops' lines
        found no smaller than 144 dpi's size there (itself when that is its floor already). The ruling-line length stays
        the one loaded for INPUTS__DPI: a fifth of an inch at each run's dpi was measured and not
        kept (photocopy TEDS -0.044 on seed 0: docs/speed.md, Round 8)."""
        from dataclasses import replace

        from models.ppocr.scale import dpi_floor

        if self.engine.det_min_scale == dpi_floor(dpi):
            return self
        return PpOcrEngine(replace(self.engine, det_min_scale=dpi_floor(dpi)))

    __call__ = read  # Stages.ocr is a plain callable

    def detect_lines(self, image: Image.Image) -> DetectedLines:
        """Find the text lines first, read some later (worker.engines.ocr.LineReader)."""
        return self.engine.detect_lines(image)

    def read_lines(self, found: DetectedLines, indices: Iterable[int]) -> list[list[Word]]:
        return self.engine.read_lines(found, indices)


def load(settings: OcrSettings, dpi: int, models: ModelSettings | None = None) -> PpOcrEngine:
    import models.ppocr as ppocr
    from models.ppocr.detect import DetectConfig
    from models.ppocr.recognise import RecogniseConfig
    from models.rules import rule_length

    engine = ppocr.load(
        models.models_dir if models is not None else None,
        threads=settings.threads,
        device=models.device if models is not None else "cpu",
        detect=DetectConfig(min_side=settings.ppocr_det_min_side, tile_pixels=settings.ppocr_det_tile_pixels),
        recognise=RecogniseConfig(batch_size=settings.ppocr_rec_batch_size, lexicon=settings.ppocr_lexicon),
        min_score=settings.ppocr_min_score,
        rule_min_px=rule_length(dpi),
        det_x_height=settings.ppocr_strip_x_height,
        crop_x_height=settings.ppocr_crop_x_height,
    )
    return PpOcrEngine(engine).at_dpi(dpi)
