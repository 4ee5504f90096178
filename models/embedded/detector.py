"""Table detection with rapid-table-det's object detector (PaddleDetection export, ONNX, 0.0.1).

Contract of the model (its export): input `image` 1 x 3 x 928 x 928 float32, the page in RGB
resized to 928 x 928 without keeping the aspect ratio (bicubic), scaled to [0, 1] with no
mean/std; input `scale_factor` 1 x 2 = [928 / height, 928 / width]. The graph ends in
multiclass NMS: output rows are [class, score, x0, y0, x1, y1] in original page pixels.

`predict` gives the Table Transformer detector's plain-data form, so
worker.core.detections.select_tables applies the same threshold and merging rules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from models.embedded.image_ops import resize, rgb_array
from models.embedded.session import open_session
from models.embedded.weights import TABLE_DETECTOR, EmbeddedModel

INPUT_SIZE = 928


def preprocess(image: Image.Image) -> tuple[np.ndarray, np.ndarray]:
    rgb = rgb_array(image)
    h, w = rgb.shape[:2]
    resized = resize(rgb, INPUT_SIZE, INPUT_SIZE, "cubic")
    pixels = (resized.astype(np.float32) / 255.0).transpose(2, 0, 1)[None]
    factor = np.array([[INPUT_SIZE / h, INPUT_SIZE / w]], dtype=np.float32)
    return pixels, factor


def postprocess(rows: np.ndarray, size: tuple[int, int]) -> list[dict[str, Any]]:
    """Model rows -> detections clipped to the page, best score first."""
    w, h = size
    out = []
    for _cls, score, x0, y0, x1, y1 in np.asarray(rows, dtype=np.float64).reshape(-1, 6).tolist():
        box = [min(max(x0, 0.0), w), min(max(y0, 0.0), h), min(max(x1, 0.0), w), min(max(y1, 0.0), h)]
        if box[2] > box[0] and box[3] > box[1]:
            out.append({"label": "table", "score": float(score), "bbox": box})
    out.sort(key=lambda d: d["score"], reverse=True)
    return out


class EmbeddedDetector:
    """A loaded table detector; `predict` is its whole interface."""

    engine = "embedded"

    def __init__(self, path: Path, *, model: EmbeddedModel = TABLE_DETECTOR, threads: int = 0, device: str = "auto"):
        self.session = open_session(path, threads, device)
        self.model_id = model.name
        self.revision: str | None = model.requirement
        self.sha256 = model.sha256

    def predict(self, images: list[Image.Image], batch_size: int | None = None) -> list[list[dict[str, Any]]]:
        """Detections per page, in input order (the export takes one page per call)."""
        out = []
        for image in images:
            pixels, factor = preprocess(image)
            rows = self.session.run(None, {"image": pixels, "scale_factor": factor})[0]
            out.append(postprocess(rows, image.size))
        return out
