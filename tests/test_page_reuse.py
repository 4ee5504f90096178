"""A stored page is reused only under the settings that wrote it (worker.queue.page_reuse)."""

from __future__ import annotations

from helpers import isolated_settings

from worker.queue.page_reuse import output_settings
from worker.queue.state import options_hash


def _hash(**overrides: object) -> str:
    return options_hash({"dpi": 144, "settings": output_settings(isolated_settings(**overrides))})


def test_settings_that_change_a_page_change_the_reuse_marker():
    base = _hash()
    assert _hash(ocr={"engine": "tesseract"}) != _hash(ocr={"engine": "ppocr"})
    assert _hash(normalise={"deskew": False}) != base
    assert _hash(refine={"spans": False}) != base
    assert _hash(detection={"threshold": 0.5}) != base


def test_settings_that_change_only_speed_or_the_service_keep_it():
    base = _hash()
    assert _hash(ocr={"threads": 2}) == base
    assert _hash(embedded={"threads": 3}) == base
    assert _hash(queue={"visibility_timeout": 999}) == base
    assert _hash(api={"port": 9999}) == base
