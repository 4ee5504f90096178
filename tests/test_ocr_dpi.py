"""One set of loaded OCR models serves pages of any resolution: PP-OCR's caption strips are never
found below 144 dpi's size at the run's dpi (worker.pipeline.stages.Stages.at_dpi); the ruling-line
length stays the loaded one."""

from __future__ import annotations

from models.ppocr.engine import PpOcr
from models.rules import rule_length
from worker.engines.ocr import FillFlattened
from worker.engines.ppocr import PpOcrEngine
from worker.engines.tesseract import TesseractOcr
from worker.pipeline.stages import Stages
from worker.settings import OcrSettings


def test_rule_length_is_a_fifth_of_an_inch() -> None:
    assert rule_length(144) == 28
    assert rule_length(300) == 60
    assert rule_length(36) == 10


def test_ppocr_at_another_dpi_shares_its_models_and_timings() -> None:
    detector, recogniser = object(), object()
    engine = PpOcrEngine(PpOcr(detector, recogniser, rule_min_px=28, det_x_height=12.0))  # type: ignore[arg-type]
    assert engine.at_dpi(144) is engine
    other = engine.at_dpi(300).engine
    assert other.rule_min_px == 28  # the loaded length (a fifth of an inch per run: measured, not kept)
    assert other.detector is detector and other.recogniser is recogniser
    assert other.timings is engine.engine.timings and other.det_x_height == 12.0
    assert other.det_min_scale == 0.48  # caption strips at 300 dpi may be found at 144 dpi's size


def test_stages_at_a_dpi_rebind_the_engines_reader_and_keep_a_tests_own() -> None:
    pp = PpOcrEngine(PpOcr(object(), object(), rule_min_px=28))  # type: ignore[arg-type]
    flat = FillFlattened(pp)
    stages = Stages(structure=object(), detector=None, ocr=flat.read, ocr_engine=flat)  # type: ignore[arg-type]
    assert stages.at_dpi(144) is stages
    at300 = stages.at_dpi(300)
    assert isinstance(at300.ocr_engine, FillFlattened)
    assert at300.ocr_engine.engine.engine.det_min_scale == 0.48  # type: ignore[attr-defined]
    assert getattr(at300.ocr, "__self__", None) is at300.ocr_engine  # still the engine's own read
    tess = FillFlattened(TesseractOcr(OcrSettings(), 144))  # no at_dpi: kept as it is
    assert Stages(structure=object(), detector=None, ocr=tess.read, ocr_engine=tess).at_dpi(300).ocr_engine is tess  # type: ignore[arg-type]
    own = Stages(structure=object(), detector=None, ocr=lambda image: [], ocr_engine=flat)  # type: ignore[arg-type]
    assert own.at_dpi(300) is own
