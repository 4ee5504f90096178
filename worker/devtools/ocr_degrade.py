"""A small seeded scan simulator for the OCR measurements (bench_ocr, the PP-OCR tests).

Stands in until the page-level simulator (worker.evaluation.degrade) lands: each kind draws
its strength from a range with the seed, so runs vary the parameters rather than tune to one.
`scan` stacks them all, like an ordinary office scan of a clean render.
"""

from __future__ import annotations

import io
import random

import numpy as np
from PIL import Image, ImageFilter

KINDS = ("clean", "jpeg", "noise", "blur", "skew", "scan")


def degrade(image: Image.Image, kind: str, seed: int) -> Image.Image:
    """`image` (any mode) as a grey page after `kind`; the same seed gives the same pixels."""
    if kind not in KINDS:
        raise ValueError(f"unknown degradation {kind!r}; known: {', '.join(KINDS)}")
    rng = random.Random(f"{kind}:{seed}")
    grey = image.convert("L")
    if kind == "clean":
        return grey
    steps = ("skew", "blur", "noise", "jpeg") if kind == "scan" else (kind,)
    for step in steps:
        grey = _STEPS[step](grey, rng)
    return grey


def _skew(image: Image.Image, rng: random.Random) -> Image.Image:
    angle = rng.uniform(0.3, 1.0) * rng.choice((-1, 1))
    return image.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)


def _blur(image: Image.Image, rng: random.Random) -> Image.Image:
    return image.filter(ImageFilter.GaussianBlur(rng.uniform(0.5, 1.0)))


def _noise(image: Image.Image, rng: random.Random) -> Image.Image:
    pixels = np.asarray(image, dtype=np.float32)
    noisy = pixels * rng.uniform(0.85, 0.95) + 255 * 0.05  # paper tone: lighter ink, greyer paper
    noisy += np.random.default_rng(rng.randrange(1 << 30)).normal(0, rng.uniform(6, 12), pixels.shape)
    return Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8))


def _jpeg(image: Image.Image, rng: random.Random) -> Image.Image:
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=rng.randint(35, 60))
    return Image.open(io.BytesIO(buffer.getvalue())).convert("L")


_STEPS = {"skew": _skew, "blur": _blur, "noise": _noise, "jpeg": _jpeg}
