"""The second OCR engine: PP-OCRv6 small text detection and recognition on onnxruntime.

The ONNX files come out of the pinned rapidocr wheel like the embedded engine's table models
(models.embedded.weights: sha256-checked, never downloaded at run time); the pre- and
post-processing is this package's own numpy (detect, recognise, words). Measured against
tesseract, and how the default was chosen: docs/ocr.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from models.ppocr.detect import DetectConfig
    from models.ppocr.engine import PpOcr
    from models.ppocr.recognise import RecogniseConfig


def load(
    models_dir: Path | None = None,
    *,
    threads: int = 0,
    device: str = "cpu",
    detect: DetectConfig | None = None,
    recognise: RecogniseConfig | None = None,
    min_score: float = 0.5,
    rule_min_px: int | None = None,
    det_x_height: float = 0.0,
    crop_x_height: float = 0.0,
) -> PpOcr:
    """The engine with its checked weights from MODELS_DIR/embedded (or the checkout's cache);
    a missing or corrupt file raises EmbeddedWeightsMissing naming the fix."""
    from models.embedded.weights import PPOCR_DET, PPOCR_REC, default_dir, locate
    from models.ppocr.detect import TextDetector
    from models.ppocr.engine import NAME, PpOcr
    from models.ppocr.recognise import TextRecogniser

    folder = default_dir(models_dir)
    det_path, rec_path = locate(PPOCR_DET, folder), locate(PPOCR_REC, folder)
    models: dict[str, dict[str, Any]] = {
        "ocr": {"id": NAME, "revision": PPOCR_REC.requirement},
        "ocr_detection": {"id": PPOCR_DET.name, "revision": PPOCR_DET.requirement, "sha256": PPOCR_DET.sha256},
        "ocr_recognition": {"id": PPOCR_REC.name, "revision": PPOCR_REC.requirement, "sha256": PPOCR_REC.sha256},
    }
    return PpOcr(
        TextDetector(det_path, threads=threads, device=device, config=detect),
        TextRecogniser(rec_path, threads=threads, device=device, config=recognise, sha256=PPOCR_REC.sha256),
        min_score=min_score,
        rule_min_px=rule_min_px,
        det_x_height=det_x_height,
        crop_x_height=crop_x_height,
        models=models,
    )
