"""The PP-OCR engine: detection, then recognition of each line, then words with boxes.

Same output as models.ocr.ocr_words (tesseract): `Word`s in the caller's pixel frame
(`offset` shifts crop coordinates onto the page), confidence in 0..1, so the grid builder,
flags and stores cannot tell the engines apart except by what they read.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
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


@dataclass(frozen=True)
class DetectedLines:
    """One image's text lines, found and not yet read: the prepared pixels (grey and its
    3-channel copy, ruling lines erased) and each line's box (x0, y0, x1, y1) in its pixels."""

    grey: np.ndarray
    rgb: np.ndarray
    boxes: list[tuple[int, int, int, int]]


@dataclass
class PpOcr:
    """Detector + recogniser; `min_score` drops lines read with a lower mean probability
    (PaddleOCR's text_score), `rule_min_px` erases ruling lines at least that long first;
    `det_x_height` (px, 0: off) is the x-height `detect_lines` (the caption strips' line finder)
    detects at when an image's text is much larger, never below `det_min_scale` (1: never; set
    from the run's dpi, models.ppocr.scale); `crop_x_height` the same for `read` (table crops).
    The lines are always read from the image at its own size."""

    detector: TextDetector
    recogniser: TextRecogniser
    min_score: float = 0.5
    rule_min_px: int | None = None
    det_x_height: float = 0.0
    crop_x_height: float = 0.0
    det_min_scale: float = 1.0  # never reduced below this (models.ppocr.scale.dpi_floor of the run's dpi)
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    timings: Timings = field(default_factory=Timings)

    def __call__(self, image: Image.Image, offset: tuple[float, float] = (0, 0)) -> list[Word]:
        return self.read(image, offset=offset)

    def read(self, image: Image.Image, *, offset: tuple[float, float] = (0, 0)) -> list[Word]:
        """Words of `image`, boxes shifted by `offset`, top to bottom, left to right."""
        found = self._find_lines(image, self.crop_x_height)
        return [w for line in self.read_lines(found, range(len(found.boxes)), offset=offset) for w in line]

    def detect_lines(self, image: Image.Image) -> DetectedLines:
        """The text lines of `image` found (ruling lines erased first), not yet read: the caller
        may read only some of them (`read_lines`), e.g. the caption step the lines nearest a table.
        Large text is found on a copy reduced to `det_x_height`."""
        return self._find_lines(image, self.det_x_height)

    def _find_lines(self, image: Image.Image, det_x_height: float) -> DetectedLines:
        grey_image = image.convert("L")
        if self.rule_min_px is not None:
            from models.ocr import erase_rules

            grey_image = erase_rules(grey_image, self.rule_min_px)
        grey = np.asarray(grey_image)
        rgb = np.repeat(grey[:, :, None], 3, axis=2)
        started = time.perf_counter()
        scale = 1.0
        if det_x_height > 0 and self.det_min_scale < 1:
            from models.page_normalise import estimate_x_height
            from models.ppocr.scale import detection_scale

            scale = max(self.det_min_scale, detection_scale(estimate_x_height(grey_image), det_x_height))
        boxes = self.detector.detect(rgb, scale)
        self.timings.detect += time.perf_counter() - started
        self.timings.calls += 1
        kept = []
        for box in boxes:
            x0, y0, x1, y1 = _pixels(box, grey.shape)
            if x1 - x0 >= 2 and y1 - y0 >= 2:
                kept.append((x0, y0, x1, y1))
        return DetectedLines(grey, rgb, kept)

    def read_lines(
        self, found: DetectedLines, indices: Iterable[int], *, offset: tuple[float, float] = (0, 0)
    ) -> list[list[Word]]:
        """The words of the lines `indices` of `found` (one list per index, empty for a line read
        below `min_score`), boxes shifted by `offset`; the lines are recognised in one batched call."""
        chosen = [found.boxes[i] for i in indices]
        started = time.perf_counter()
        reads = self.recogniser.read([found.rgb[y0:y1, x0:x1] for x0, y0, x1, y1 in chosen]) if chosen else []
        self.timings.recognise += time.perf_counter() - started
        self.timings.lines += len(chosen)
        dx, dy = offset
        out: list[list[Word]] = []
        for (x0, y0, x1, y1), read in zip(chosen, reads):
            words: list[Word] = []
            if read.score >= self.min_score:
                for text, (a, b, c, d), conf in line_words(read, (x0, y0, x1, y1), found.grey[y0:y1, x0:x1]):
                    bbox = (round(a + dx, 2), round(b + dy, 2), round(c + dx, 2), round(d + dy, 2))
                    words.append(Word(text, bbox, round(conf, 4)))
            out.append(words)
        return out


def _pixels(box: TextBox, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    h, w = shape[:2]
    return (
        max(0, int(np.floor(box.x0))),
        max(0, int(np.floor(box.y0))),
        min(w, int(np.ceil(box.x1))),
        min(h, int(np.ceil(box.y1))),
    )
