"""Table Transformer (torch, or ONNX Runtime on CPU): the engine for a machine that has its weights."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from worker.core.detections import padded_box
from worker.core.reconstruct import reconstruct
from worker.core.replay import TATR
from worker.core.types import StructureObject, Word
from worker.engines.base import BuiltGrid, LoadedModels

if TYPE_CHECKING:
    from PIL import Image

    from worker.core.detections import TableBox
    from worker.settings import DetectionSettings, Settings


class TableTransformerEngine:
    """Detection and structure by Table Transformer; the grid by the core's reconstruction."""

    name = TATR
    title = "Table Transformer"
    downloads_from_hub = True

    def options(self, settings: Settings) -> DetectionSettings:
        return settings.detection

    def problem(self, settings: Settings) -> str | None:
        from models.hub_probe import tatr_problem

        return tatr_problem(settings.models)

    def load(self, settings: Settings, detect: bool, threads: int) -> LoadedModels:
        from models.device import configure_threads
        from models.table_transformer import load_detector, load_structure

        detector = load_detector(settings.models, threads) if detect else None
        loaded = LoadedModels(load_structure(settings.models, threads), detector, threads=configure_threads)
        configure_threads(threads)
        return loaded

    def detection_threshold(self, settings: Settings) -> float:
        return settings.detection.threshold

    def crop_box(self, box: TableBox, page_size: tuple[int, int], settings: Settings) -> tuple[int, int, int, int]:
        d = settings.detection
        return padded_box(box.bbox, page_size, d.crop_padding, d.crop_padding_min_px)

    def build_grid(
        self, raw: list[dict[str, Any]], words: list[Word], crop: Image.Image, dpi: int, settings: Settings
    ) -> BuiltGrid:
        """Objects -> grid; ruling lines found on the crop (a numpy step in models/) refine it."""
        from models.rules import crop_rules

        structure = [StructureObject(o["label"], float(o["score"]), tuple(o["bbox"])) for o in raw]
        lines = crop_rules(crop, dpi) if settings.refine.lines else None
        s = settings.structure
        grid = reconstruct(
            structure, words, crop.size, s.thresholds(), s.duplicate_overlap, lines, settings.refine.rules()
        )
        return BuiltGrid(grid, structure=structure, lines=lines)
