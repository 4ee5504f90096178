"""The OCR engine registry: readers of words from an image, by name, and `auto` settled in one place.

An OCR engine meets `OcrEngine`: `read(image)` gives `Word`s in the image's pixel frame with a
confidence in 0..1, and `name`/`version` say which reader and release produced them (for the
manifest). The pipeline calls `read` on table crops without a text layer.

Adding one: write a factory `load(settings: OcrSettings, dpi: int, models: ModelSettings | None)
-> OcrEngine` in its own module (`models` carries the weights folder and device for engines
with model files), and add one line to `BUILT_IN` below (imported only when chosen), or call
`register_ocr_engine(name, load)` at run time. `resolve_ocr_engine` is the one place that
settles `auto`: PP-OCR (worker.engines.ppocr) when its weights are present, else tesseract,
as measured in docs/ocr.md.
An engine that also has `read_cells(image, boxes)` can be the second reader of doubted totals
(`OCR__CELL_READER`). One with `at_dpi(dpi)` is set for each run's resolution (PP-OCR: the
smallest scale it finds lines at; worker.pipeline.stages.Stages.at_dpi). One that finds
lines before it reads them (`LineReader`: PP-OCR) lets the caption step read only the strip
lines nearest a table (worker.pipeline.context).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from worker.core.totals import Reading
from worker.core.types import BBox, Word

if TYPE_CHECKING:
    from PIL import Image

    from worker.settings import ModelSettings, OcrSettings

AUTO = "auto"


class OcrEngine(Protocol):
    """Reads the words of one image (a table crop or a page strip)."""

    name: str  # the registry key, e.g. "tesseract"
    version: str  # the reader's own version, e.g. "5.3.0"

    def read(self, image: Image.Image) -> list[Word]: ...


class CellReader(Protocol):
    """An OCR engine that can also read given boxes of an image one by one (a second reading of
    the cells a total doubts, worker.pipeline.numbers): per box a `Reading` or None."""

    name: str

    def read_cells(self, image: Image.Image, boxes: Sequence[BBox]) -> list[Reading | None]: ...


class LineReader(Protocol):
    """An OCR engine that finds an image's text lines first (`detect_lines`: an opaque value with
    `boxes`, each line's (x0, y0, x1, y1) in the image's pixels) and reads the ones asked for
    later (`read_lines`: the words of each, in the image's frame; empty for a line it drops)."""

    def detect_lines(self, image: Image.Image) -> Any: ...

    def read_lines(self, found: Any, indices: Iterable[int]) -> list[list[Word]]: ...


def line_reader(engine: object) -> LineReader | None:
    """`engine` as a LineReader when it can find lines before reading them, else None."""
    if callable(getattr(engine, "detect_lines", None)) and callable(getattr(engine, "read_lines", None)):
        return engine  # type: ignore[return-value]
    return None


# (its settings group, render dpi, the models group or None) -> engine
OcrFactory = Callable[["OcrSettings", int, "ModelSettings | None"], OcrEngine]

# name -> "module:factory", imported on first use (torch-free start-up; a missing optional
# dependency fails only when that engine is chosen).
BUILT_IN: dict[str, str] = {
    "tesseract": "worker.engines.tesseract:load",
    "ppocr": "worker.engines.ppocr:load",
    "tesseract-digits": "models.cell_readers:load",  # a cell reader (read_cells), not chosen by auto
}
_LOADED: dict[str, OcrFactory] = {}


def register_ocr_engine(name: str, factory: OcrFactory) -> None:
    """Add an OCR engine at run time (a plug-in, a test's reader)."""
    if name == AUTO:
        raise ValueError(f"{AUTO!r} is not an OCR engine name")
    _LOADED[name] = factory


def ocr_engine_names() -> tuple[str, ...]:
    return tuple(dict.fromkeys([*BUILT_IN, *_LOADED]))


def resolve_ocr_engine(name: str, models_dir: Path | None = None) -> tuple[str, str]:
    """(engine name, one-line reason) for the OCR setting. `auto` is PP-OCR when its two files
    are present and right in MODELS_DIR/embedded (or the checkout's cache): it read more words
    right than tesseract on every image kind measured (docs/ocr.md); else tesseract."""
    if name != AUTO:
        if name not in ocr_engine_names():
            raise ValueError(f"unknown OCR engine {name!r} (choose one of {', '.join([*ocr_engine_names(), AUTO])})")
        return name, f"OCR__ENGINE={name}"
    from models.embedded.weights import OCR_MODELS, EmbeddedWeightsMissing, default_dir, locate

    try:
        for entry in OCR_MODELS:
            locate(entry, default_dir(models_dir))
    except EmbeddedWeightsMissing as exc:
        return "tesseract", f"auto: tesseract, PP-OCR weights unavailable ({exc})"
    return "ppocr", "auto: ppocr (its weights are present)"


def _factory(name: str) -> OcrFactory:
    if name not in _LOADED:
        module, _, attr = BUILT_IN[name].partition(":")
        _LOADED[name] = getattr(importlib.import_module(module), attr)
    return _LOADED[name]


class FillFlattened:
    """An engine whose every image has its shaded and coloured fills flattened first
    (`models.fills`, `ocr.flatten_fills`): one place for every engine, chosen at load time.
    Everything but `read` (name, version, weights, read_cells) is the engine's own."""

    def __init__(self, engine: OcrEngine) -> None:
        self.engine = engine

    def read(self, image: Image.Image) -> list[Word]:
        from models.fills import flatten_fills

        return self.engine.read(flatten_fills(image))

    __call__ = read  # Stages.ocr is a plain callable

    @property
    def detect_lines(self) -> Callable[[Image.Image], Any]:
        """The engine's line finder, on the flattened image (AttributeError when it has none)."""
        from models.fills import flatten_fills

        detect = self.engine.detect_lines  # type: ignore[attr-defined]
        return lambda image: detect(flatten_fills(image))

    def at_dpi(self, dpi: int) -> FillFlattened:
        """This wrapper around the engine set for pages at `dpi` (itself when nothing changes)."""
        at = getattr(self.engine, "at_dpi", None)
        other = at(dpi) if at is not None else self.engine
        return self if other is self.engine else FillFlattened(other)

    def __getattr__(self, name: str) -> object:
        if name == "engine":  # not set yet (a copy being unpickled): never recurse
            raise AttributeError(name)
        return getattr(self.engine, name)


def load_ocr_engine(settings: OcrSettings, dpi: int, models: ModelSettings | None = None) -> OcrEngine:
    """The OCR engine the `ocr` settings group chooses, ready to read crops rendered at `dpi`;
    `models` gives engines with weights their folder and device."""
    name, _ = resolve_ocr_engine(settings.engine, models.models_dir if models is not None else None)
    engine = _factory(name)(settings, dpi, models)
    return FillFlattened(engine) if settings.flatten_fills else engine  # type: ignore[return-value]


def load_cell_reader(settings: OcrSettings, dpi: int) -> CellReader | None:
    """The second cell reader the `ocr` group names (`cell_reader`), or None for "none"."""
    name = settings.cell_reader
    if name in ("", "none"):
        return None
    if name not in ocr_engine_names():
        raise ValueError(f"unknown cell reader {name!r} (choose one of {', '.join(ocr_engine_names())}, none)")
    engine = _factory(name)(settings, dpi, None)
    if not callable(getattr(engine, "read_cells", None)):
        raise ValueError(f"OCR engine {name!r} cannot read cells (it has no read_cells)")
    return engine  # type: ignore[return-value]
