"""The OCR engine registry: readers of words from an image, by name, and `auto` settled in one place.

An OCR engine meets `OcrEngine`: `read(image)` gives `Word`s in the image's pixel frame with a
confidence in 0..1, and `name`/`version` say which reader and release produced them (for the
manifest). The pipeline calls `read` on table crops without a text layer.

Adding one (e.g. PP-OCR in models/ppocr/): write a factory `load(settings: OcrSettings, dpi: int)
-> OcrEngine` in its own module, and add one line to `BUILT_IN` below,
`"ppocr": "models.ppocr.engine:load"` (imported only when chosen), or call
`register_ocr_engine("ppocr", load)` at run time. To let `auto` choose it, change
`resolve_ocr_engine`, the one place that settles `auto`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from worker.core.types import Word

if TYPE_CHECKING:
    from PIL import Image

    from worker.settings import OcrSettings

AUTO = "auto"


class OcrEngine(Protocol):
    """Reads the words of one image (a table crop or a page strip)."""

    name: str  # the registry key, e.g. "tesseract"
    version: str  # the reader's own version, e.g. "5.3.0"

    def read(self, image: Image.Image) -> list[Word]: ...


OcrFactory = Callable[["OcrSettings", int], OcrEngine]  # (its settings group, render dpi) -> engine

# name -> "module:factory", imported on first use (torch-free start-up; a missing optional
# dependency fails only when that engine is chosen).
BUILT_IN: dict[str, str] = {
    "tesseract": "worker.engines.tesseract:load",
}
_LOADED: dict[str, OcrFactory] = {}


def register_ocr_engine(name: str, factory: OcrFactory) -> None:
    """Add an OCR engine at run time (a plug-in, a test's reader)."""
    if name == AUTO:
        raise ValueError(f"{AUTO!r} is not an OCR engine name")
    _LOADED[name] = factory


def ocr_engine_names() -> tuple[str, ...]:
    return tuple(dict.fromkeys([*BUILT_IN, *_LOADED]))


def resolve_ocr_engine(name: str) -> tuple[str, str]:
    """(engine name, one-line reason) for the OCR setting; `auto` is tesseract for now."""
    if name != AUTO:
        if name not in ocr_engine_names():
            raise ValueError(f"unknown OCR engine {name!r} (choose one of {', '.join([*ocr_engine_names(), AUTO])})")
        return name, f"OCR__ENGINE={name}"
    return "tesseract", "auto: tesseract (the only OCR engine auto chooses so far)"


def _factory(name: str) -> OcrFactory:
    if name not in _LOADED:
        module, _, attr = BUILT_IN[name].partition(":")
        _LOADED[name] = getattr(importlib.import_module(module), attr)
    return _LOADED[name]


def load_ocr_engine(settings: OcrSettings, dpi: int) -> OcrEngine:
    """The OCR engine the `ocr` settings group chooses, ready to read crops rendered at `dpi`."""
    name, _ = resolve_ocr_engine(settings.engine)
    return _factory(name)(settings, dpi)
