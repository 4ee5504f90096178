"""How many pool threads read crops beside the model lanes (worker.overlap.subprocess_threads):
where the OCR is a model run in process (PP-OCR) or the engine's models are a small share of a
page (embedded), every core; beside the Table Transformer with tesseract, what the lanes leave."""

from __future__ import annotations

import pytest

import worker.overlap as overlap
from worker.settings import Settings


@pytest.fixture
def four_cores(monkeypatch):
    monkeypatch.setattr(overlap, "usable_cores", lambda: 4)


def test_the_pool_beside_the_table_transformer_and_tesseract_takes_what_the_lanes_leave(four_cores):
    assert overlap.subprocess_threads(Settings(), lanes=2, engine="tatr", ocr="tesseract") == 2
    assert overlap.subprocess_threads(Settings(), lanes=4, engine="tatr", ocr="tesseract") == 1


def test_ppocr_or_the_embedded_engine_get_every_core(four_cores):
    assert overlap.subprocess_threads(Settings(), lanes=2, engine="tatr", ocr="ppocr") == 4
    assert overlap.subprocess_threads(Settings(), lanes=2, engine="embedded", ocr="tesseract") == 4


def test_the_setting_wins(four_cores):
    settings = Settings().replace(lanes={"subprocess_threads": 3})
    assert overlap.subprocess_threads(settings, lanes=2, engine="tatr", ocr="ppocr") == 3
