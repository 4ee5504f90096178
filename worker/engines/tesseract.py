"""Tesseract as an OCR engine (models.ocr.ocr_words with the `ocr` settings group)."""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from typing import TYPE_CHECKING

from worker.core.types import Word

if TYPE_CHECKING:
    from PIL import Image

    from worker.settings import ModelSettings, OcrSettings


class TesseractOcr:
    """`ocr_words` with the language, page segmentation mode and threads of the settings.

    Ruling lines confuse tesseract, so lines longer than ~1/5 inch at the render dpi are erased first.
    """

    name = "tesseract"

    def __init__(self, settings: OcrSettings, dpi: int) -> None:
        self.lang = settings.lang
        self.psm = settings.psm
        self.threads = settings.threads or None
        from models.rules import rule_length

        self.rule_min_px = rule_length(dpi)

    @property
    def version(self) -> str:
        return _tesseract_version()

    def read(self, image: Image.Image) -> list[Word]:
        from models.ocr import ocr_words

        return ocr_words(image, lang=self.lang, psm=self.psm, rule_min_px=self.rule_min_px, threads=self.threads)

    __call__ = read  # Stages.ocr is a plain callable


def load(settings: OcrSettings, dpi: int, models: ModelSettings | None = None) -> TesseractOcr:
    return TesseractOcr(settings, dpi)


@lru_cache(maxsize=1)
def _tesseract_version() -> str:
    """`tesseract --version`'s first line's number; "unknown" when it cannot be run."""
    exe = shutil.which("tesseract")
    if exe is None:
        return "unknown"
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    first = (out.stdout or out.stderr).splitlines()[:1]
    return first[0].split()[-1] if first else "unknown"
