"""PP-OCRv6 text detection (DB, "differentiable binarisation"): where the text lines are.

The model's contract, as PaddleOCR trains it: a BGR image with both sides a multiple of 32,
scaled to [-1, 1] (mean 0.5, std 0.5 per channel), in NCHW; out comes a probability map of
"text kernel" (a shrunk text region) of the same size. Post-processing, written here in
numpy: threshold the map, grow it by a pixel, take connected regions, keep those whose mean
probability clears `box_thresh`, and grow each kernel back by the DB unclip distance
(area * ratio / perimeter) to cover the whole line. Table crops are upright (the page is
deskewed before the crop), so boxes are axis-aligned rectangles rather than rotated ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from models.ppocr.components import box_means, component_boxes
from models.ppocr.tiles import tiled_map

STRIDE = 32  # the network downsamples five times
# how far the boxes stand off the text, in the model's input pixels: lines found on 300-dpi dev
# crops reduced to 0.48-0.71 came out 3.5 x (1/s - 1) px wider a side than found at full size
# (median over 1,902 matched lines of 45 crops, a seed no evaluation uses: docs/speed.md, Round 10)
STANDOFF_PX = 3.5


@dataclass(frozen=True, slots=True)
class TextBox:
    """One detected text line, in the input image's pixels (x1, y1 exclusive)."""

    x0: float
    y0: float
    x1: float
    y1: float
    score: float


@dataclass(frozen=True, slots=True)
class DetectConfig:
    """DB post-processing thresholds (PaddleOCR's defaults) and the input sizing.

    `min_side`: images whose shorter side is below it are scaled up to it (PaddleOCR's own
    default is 736, meant for photos); 0 keeps the scale. `max_side` caps the longer side.
    `scale` multiplies the image first (1 = as given). What each costs and buys: docs/ocr.md.
    `tile_pixels`: inputs larger than this are run in overlapping tiles of at most this many
    pixels (`tile_overlap` apart at the seams; models.ppocr.tiles), so one call's memory stays
    bounded whatever the crop's size; 0 runs every input whole.
    """

    thresh: float = 0.3
    box_thresh: float = 0.5
    unclip_ratio: float = 1.6
    min_kernel_px: int = 3
    min_side: int = 0
    max_side: int = 2016
    scale: float = 1.0
    tile_pixels: int = 512 * 1024
    tile_overlap: int = 128


class TextDetector:
    """The DB detector on one onnxruntime session."""

    def __init__(self, path: Path, threads: int = 0, device: str = "cpu", config: DetectConfig | None = None) -> None:
        from models.embedded.session import open_session, run

        self.session = open_session(path, threads=threads, device=device)
        self.input_name = self.session.get_inputs()[0].name
        self._call = run  # shrinks the CPU arena after each call (models.embedded.session)
        self.config = config or DetectConfig()

    def input_size(self, width: int, height: int, scale: float = 1.0) -> tuple[int, int]:
        """The (width, height) the image is resized to: scaled (by the config's scale times
        `scale`), then rounded to the stride."""
        cfg = self.config
        ratio = cfg.scale * scale
        short, long = min(width, height) * ratio, max(width, height) * ratio
        if cfg.min_side and short < cfg.min_side:
            ratio *= cfg.min_side / max(short, 1)
            long = max(width, height) * ratio
        if cfg.max_side and long > cfg.max_side:
            ratio *= cfg.max_side / long
        return (
            max(STRIDE, round(width * ratio / STRIDE) * STRIDE),
            max(STRIDE, round(height * ratio / STRIDE) * STRIDE),
        )

    def probability_map(self, rgb: np.ndarray, scale: float = 1.0) -> np.ndarray:
        """The model's text-kernel probability at its input size (h', w'). PIL's bilinear resize
        filters over the reduction's footprint, so a reduced copy's thin strokes fade, not vanish."""
        height, width = rgb.shape[:2]
        size = self.input_size(width, height, scale)
        image = Image.fromarray(rgb)
        if size != (width, height):
            image = image.resize(size, Image.Resampling.BILINEAR)
        bgr = np.asarray(image, dtype=np.float32)[:, :, ::-1]
        tensor = np.ascontiguousarray(((bgr / 255.0 - 0.5) / 0.5).transpose(2, 0, 1)[None])
        return tiled_map(tensor, self._run, self.config.tile_pixels, self.config.tile_overlap)

    def _run(self, tensor: np.ndarray) -> np.ndarray:
        (out,) = self._call(self.session, {self.input_name: tensor})
        return np.asarray(out[0, 0], dtype=np.float32)

    def detect(self, rgb: np.ndarray, scale: float = 1.0) -> list[TextBox]:
        """Text line boxes of an (h, w, 3) uint8 image, top to bottom then left to right, in its
        pixels; the model reads it resized by `scale` (models.ppocr.scale)."""
        height, width = rgb.shape[:2]
        if height < 2 or width < 2:
            return []
        return self.boxes(self.probability_map(rgb, scale), width, height, reduced=scale < 1)

    def boxes(self, prob: np.ndarray, width: int, height: int, reduced: bool = False) -> list[TextBox]:
        """DB post-processing of a probability map into boxes in a `width` x `height` image.

        `reduced`: the map is of a copy reduced for detection (models.ppocr.scale). The boxes stand
        off the text by about STANDOFF_PX of the model's input pixels; mapped back from a copy at
        scale s, that is STANDOFF_PX / s image pixels, so each side is drawn in by the difference
        and the boxes are those the image at its own size would have got. Looser boxes took the
        next line's descenders into a word's box and moved a header's words into the body row."""
        cfg = self.config
        mask = prob > cfg.thresh
        grown = mask.copy()  # a 2x2 dilation, as PaddleOCR's use_dilation: joins hairline gaps
        grown[1:, :] |= mask[:-1, :]
        grown[:, 1:] |= mask[:, :-1]
        grown[1:, 1:] |= mask[:-1, :-1]
        kernels = component_boxes(grown)
        if not kernels.size:
            return []
        sides = np.minimum(kernels[:, 2] - kernels[:, 0], kernels[:, 3] - kernels[:, 1])
        kernels = kernels[sides >= cfg.min_kernel_px]
        scores = box_means(prob, kernels)
        keep = scores >= cfg.box_thresh
        kernels, scores = kernels[keep].astype(np.float64), scores[keep]
        w, h = kernels[:, 2] - kernels[:, 0], kernels[:, 3] - kernels[:, 1]
        grow = w * h * cfg.unclip_ratio / (2 * (w + h))
        sx, sy = width / prob.shape[1], height / prob.shape[0]
        ox, oy = (STANDOFF_PX * max(0.0, sx - 1), STANDOFF_PX * max(0.0, sy - 1)) if reduced else (0.0, 0.0)
        out = []
        for (x0, y0, x1, y1), d, score in zip(kernels, grow, scores):
            box = (
                max(0.0, (x0 - d) * sx + ox),
                max(0.0, (y0 - d) * sy + oy),
                min(float(width), (x1 + d) * sx - ox),
                min(float(height), (y1 + d) * sy - oy),
            )
            if box[2] - box[0] > 3 and box[3] - box[1] > 3:
                bx0, by0, bx1, by1 = (round(v, 2) for v in box)
                out.append(TextBox(bx0, by0, bx1, by1, round(float(score), 4)))
        return sort_boxes(out)


def sort_boxes(boxes: list[TextBox]) -> list[TextBox]:
    """Reading order: boxes whose tops are within half a line of each other form one row,
    rows top to bottom, boxes left to right inside a row."""
    if not boxes:
        return []
    by_top = sorted(boxes, key=lambda b: b.y0)
    heights = sorted(b.y1 - b.y0 for b in boxes)
    tolerance = heights[len(heights) // 2] / 2
    rows: list[list[TextBox]] = [[by_top[0]]]
    for box in by_top[1:]:
        if box.y0 - rows[-1][0].y0 <= tolerance:
            rows[-1].append(box)
        else:
            rows.append([box])
    return [b for row in rows for b in sorted(row, key=lambda b: b.x0)]
