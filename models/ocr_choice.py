"""Which OCR engine reads a crop: tesseract (models.ocr) or PP-OCRv6 (models.ppocr).

`OCR_ENGINE=tesseract|ppocr|auto`. `auto` is the measured choice (docs/ocr.md): PP-OCR where
its weights are present, since it read more words right than tesseract on every table engine
and image kind measured, and tesseract when they are absent (with the reason logged by the
caller). An explicit `ppocr` without its weights fails with the fixing command.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PIL import Image

from worker.core.types import Word

if TYPE_CHECKING:
    from worker.settings import Settings

TESSERACT, PPOCR = "tesseract", "ppocr"
OCR_ENGINES = (TESSERACT, PPOCR, "auto")


def choose_ocr_engine(settings: Settings) -> tuple[str, str]:
    """(engine, one-line reason) for the OCR_ENGINE setting; only `auto` looks for files."""
    if settings.ocr_engine != "auto":
        return settings.ocr_engine, f"TABLESIGHT_OCR_ENGINE={settings.ocr_engine}"
    from models.embedded.weights import OCR_MODELS, EmbeddedWeightsMissing, default_dir, locate

    try:
        for model in OCR_MODELS:
            locate(model, default_dir(settings.models_dir))
    except EmbeddedWeightsMissing as exc:
        return TESSERACT, f"PP-OCR weights unavailable ({exc})"
    return PPOCR, "PP-OCR weights found"


class OcrReader:
    """An OCR engine as the pipeline calls it: crop in, words out; `models` names it (and its
    weights' hashes) for the manifest."""

    def __init__(self, name: str, read: Callable[[Image.Image], list[Word]], models: dict[str, Any]) -> None:
        self.name, self._read, self.models = name, read, models

    def __call__(self, image: Image.Image) -> list[Word]:
        return self._read(image)


def load_ocr(settings: Settings, engine: str | None = None, threads: int | None = None) -> OcrReader:
    """The OCR engine `engine` (default: OCR_ENGINE, `auto` resolved), set up as the pipeline
    reads crops: ruling lines longer than ~1/5 inch at DPI erased first."""
    name = engine or choose_ocr_engine(settings)[0]
    rule_min_px = max(10, settings.dpi // 5)
    per_call = settings.ocr_threads if threads is None else threads
    if name == PPOCR:
        import models.ppocr as ppocr
        from models.ppocr.detect import DetectConfig
        from models.ppocr.recognise import RecogniseConfig

        engine_ = ppocr.load(
            settings.models_dir,
            threads=per_call,
            device=settings.device,
            detect=DetectConfig(min_side=settings.ppocr_det_min_side),
            recognise=RecogniseConfig(batch_size=settings.ppocr_rec_batch_size),
            min_score=settings.ppocr_min_score,
            rule_min_px=rule_min_px,
        )
        return OcrReader(PPOCR, engine_.read, engine_.models)
    if name != TESSERACT:
        raise ValueError(f"unknown OCR engine {name!r}; known: {', '.join(OCR_ENGINES)}")
    from models.ocr import ocr_words

    def read(image: Image.Image) -> list[Word]:
        return ocr_words(
            image, lang=settings.ocr_lang, psm=settings.ocr_psm, rule_min_px=rule_min_px, threads=per_call or None
        )

    return OcrReader(TESSERACT, read, {"ocr": {"id": TESSERACT, "revision": _tesseract_version()}})


def _tesseract_version() -> str | None:
    try:
        import pytesseract

        return str(pytesseract.get_tesseract_version())
    except Exception:  # noqa: BLE001 - a missing binary surfaces on the first read, with its fix
        return None
