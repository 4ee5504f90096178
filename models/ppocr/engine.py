"""The PP-OCR engine: detection, then recognition of each line, then words with boxes.

Same output as models.ocr.ocr_words (tesseract): `Word`s in the caller's pixel frame
(`offset` shifts crop coordinates onto the page), confidence in 0..1, so the grid builder,
flags and stores cannot tell the engines apart except by what they read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from models.ppocr.detect import TextBox, TextDetector
from models.ppocr.recognise import TextRecogniser
from models.ppocr.words import line_words
from worker.core.types import Word

NAME = "ppocr"


@dataclass
class Timings:
    """Seconds spent in each part since the last reset (the bench reads them)."""

    detect: float = 0.0
    recognise: float = 0.0
    lines: int = 0
    calls: int = 0

    def reset(self) -> None:
        self.detect = self.recognise = 0.0
        self.lines = self.calls = 0


@dataclass
class PpOcr:
    """Detector + recogniser; `min_score` drops lines read with a lower mean probability
    (PaddleOCR's text_score), `rule_min_px` erases ruling lines at least that long first."""

    detector: TextDetector
    recogniser: TextRecogniser
    min_score: float = 0.5
    rule_min_px: int | None = None
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    timings: Timings = field(default_factory=Timings)

    def __call__(self, image: Image.Image, offset: tuple[float, float] = (0, 0)) -> list[Word]:
        return self.read(image, offset=offset)

    def read(self, image: Image.Image, *, offset: tuple[float, float] = (0, 0)) -> list[Word]:
        """Words of `image`, boxes shifted by `offset`, top to bottom, left to right."""
        grey_image = image.convert("L")
        if self.rule_min_px is not None:
            from models.ocr import erase_rules

            grey_image = erase_rules(grey_image, self.rule_min_px)
        grey = np.asarray(grey_image)
        rgb = np.repeat(grey[:, :, None], 3, axis=2)
        started = time.perf_counter()
        boxes = self.detector.detect(rgb)
        detected = time.perf_counter()
        crops, kept = [], []
        for box in boxes:
            x0, y0, x1, y1 = _pixels(box, grey.shape)
            if x1 - x0 >= 2 and y1 - y0 >= 2:
                crops.append(rgb[y0:y1, x0:x1])
                kept.append((x0, y0, x1, y1))
        reads = self.recogniser.read(crops) if crops else []
        self.timings.detect += detected - started
        self.timings.recognise += time.perf_counter() - detected
        self.timings.lines += len(crops)
        self.timings.calls += 1
        dx, dy = offset
        words = []
        for (x0, y0, x1, y1), read in zip(kept, reads):
            if read.score < self.min_score:
                continue
            for text, (a, b, c, d), conf in line_words(read, (x0, y0, x1, y1), grey[y0:y1, x0:x1]):
                bbox = (round(a + dx, 2), round(b + dy, 2), round(c + dx, 2), round(d + dy, 2))
                words.append(Word(text, bbox, round(conf, 4)))
        return words


def _pixels(box: TextBox, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    h, w = shape[:2]
    return (
        max(0, int(np.floor(box.x0))),
        max(0, int(np.floor(box.y0))),
        min(w, int(np.ceil(box.x1))),
        min(h, int(np.ceil(box.y1))),
    )
