"""A seeded scan simulator: clean page renders made to look like what office scanners produce.

Each kind imitates one thing that goes wrong between paper and pixels (skew, a page fed in
sideways, blur, sensor noise, JPEG, a black-and-white photocopy, a low or high scan
resolution, uneven lighting, tinted paper) and `office` combines the usual ones. A kind has
three strengths; within a strength, every parameter is drawn from the seed, and the eval draws
a fresh seed per page (`page_seed`), so no measurement rests on one fixed transform.

Geometry is known exactly: `Degraded.to_degraded` maps pixels of the clean render at the
base resolution (the ground truth's frame) onto the degraded image, so boxes found on the
degraded image map back (`worker.core.page_transform.unbound_box`) for scoring.

numpy and PIL only; evaluation code, never imported by the pipeline.
"""

from __future__ import annotations

import io
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image, ImageFilter

from worker.core.page_transform import IDENTITY, Affine, compose, quarter_turn, rotation, scaling

STRENGTHS = ("mild", "moderate", "strong")
_LEVEL = {"mild": 0, "moderate": 1, "strong": 2}

# what each kind imitates (the docs table is made from this)
KINDS: dict[str, str] = {
    "clean": "the clean render, unchanged (the reference row)",
    "skew-0.5": "page skewed by 0.5 deg (+-10%, either way), scanner blur",
    "skew-1": "page skewed by 1 deg",
    "skew-2": "page skewed by 2 deg",
    "skew-5": "page skewed by 5 deg",
    "rot-90": "page fed in sideways: turned 90 deg, either way",
    "rot-180": "page fed in upside down",
    "blur": "out-of-focus optics: Gaussian blur",
    "noise": "sensor noise: Gaussian, grey",
    "jpeg": "JPEG compression",
    "photocopy": "black-and-white photocopy: threshold, toner spread, specks and drop-outs",
    "dpi-150": "scanned at 150 dpi (from a high-resolution render, scanner optics)",
    "dpi-200": "scanned at 200 dpi",
    "dpi-300": "scanned at 300 dpi",
    "illumination": "uneven lighting: a dark gradient and vignette across the page",
    "tint": "tinted or recycled paper (colour)",
    "office": "ordinary office scan: 200 dpi grey, skew up to 1.5 deg, slight blur, paper tone, noise, specks, JPEG",
}
# kinds whose clean render must come at a higher resolution than the ground truth's
_SCAN_DPI = {"dpi-150": 150, "dpi-200": 200, "dpi-300": 300, "office": 200}
HIGH_RES_DPI = 300  # the render a resolution kind is scanned from


@dataclass
class Degraded:
    """A degraded page: its pixels, the map from the clean base-resolution page onto them, its dpi."""

    image: Image.Image
    to_degraded: Affine
    dpi: int
    params: dict[str, Any] = field(default_factory=dict)


def parse_kinds(text: str) -> list[str]:
    """`skew-1,blur` -> ["skew-1", "blur"]; raises ValueError naming unknown kinds."""
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise ValueError(f"unknown degradation kind(s) {bad or text!r}; kinds: {', '.join(KINDS)}")
    return kinds


def page_seed(seed: int, key: str) -> int:
    """A seed of its own for each page (`key` names it), stable across runs and machines."""
    return zlib.crc32(f"{seed}:{key}".encode())


def render_dpi(kind: str, base_dpi: int) -> int:
    """The resolution the clean page should be rendered at for `kind` (resolution kinds scan a
    high-resolution render, as a scanner samples paper)."""
    return max(base_dpi, HIGH_RES_DPI) if kind in _SCAN_DPI else base_dpi


def degrade_page(
    render: Callable[[int], Image.Image], base_dpi: int, kind: str, strength: str = "moderate", seed: int = 0
) -> Degraded:
    """Render the clean page (at `render_dpi`) and degrade it; the map starts at `base_dpi`."""
    dpi = render_dpi(kind, base_dpi)
    out = degrade(render(dpi), dpi, kind, strength, seed)
    out.to_degraded = compose(scaling(dpi / base_dpi), out.to_degraded)
    return out


def degrade(image: Image.Image, dpi: int, kind: str, strength: str = "moderate", seed: int = 0) -> Degraded:
    """`image` (a clean render at `dpi`) made to look like `kind` at `strength`, seeded.

    `to_degraded` maps `image`'s pixels onto the result's.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown degradation kind {kind!r}; kinds: {', '.join(KINDS)}")
    if strength not in _LEVEL:
        raise ValueError(f"strength must be one of {STRENGTHS}, not {strength!r}")
    rng = np.random.default_rng(seed)
    level = _LEVEL[strength]
    if kind == "clean":
        return Degraded(image.copy(), IDENTITY, dpi, {})
    if kind == "office":
        return _office(image, dpi, level, rng)
    if kind == "tint":
        return _tint(image, dpi, level, rng)
    grey = image.convert("L")
    optics = _pick(rng, (0.3, 0.5, 0.8)[level])  # any scan resamples through the scanner's optics
    params: dict[str, Any] = {}
    m = IDENTITY
    if kind.startswith("skew-"):
        angle = float(kind.split("-", 1)[1]) * _pick(rng, 1.0, 0.1) * float(rng.choice([-1.0, 1.0]))
        grey, m = _rotate(grey, angle)
        grey = _blur(grey, optics)
        params = {"angle": round(angle, 3), "blur": optics}
    elif kind.startswith("rot-"):
        turns = 2 if kind == "rot-180" else int(rng.choice([1, 3]))
        grey, m = _turn(grey, turns)
        grey = _blur(grey, optics)
        params = {"quarter_turns": turns, "blur": optics}
    elif kind in _SCAN_DPI:
        target = _SCAN_DPI[kind]
        grey, m = _resample(grey, dpi, target, optics)
        dpi = target
        params = {"dpi": target, "blur": optics}
    elif kind == "blur":
        sigma = _pick(rng, (0.7, 1.1, 1.6)[level])
        grey = _blur(grey, sigma)
        params = {"sigma": sigma}
    elif kind == "noise":
        sigma = _pick(rng, (8.0, 16.0, 28.0)[level])
        grey = _noise(grey, sigma, rng)
        params = {"sigma": sigma}
    elif kind == "jpeg":
        quality = int(round(_pick(rng, (60.0, 35.0, 18.0)[level], 0.2)))
        grey = _jpeg(grey, quality)
        params = {"quality": quality}
    elif kind == "photocopy":
        grey, params = _photocopy(grey, level, rng)
    elif kind == "illumination":
        grey, params = _illumination(grey, level, rng)
    return Degraded(grey, m, dpi, params)


def _pick(rng: np.random.Generator, centre: float, spread: float = 0.15) -> float:
    """`centre` varied by up to +-`spread` of itself."""
    return round(float(centre * (1.0 + rng.uniform(-spread, spread))), 4)


def _rotate(image: Image.Image, angle: float, fill: int = 255) -> tuple[Image.Image, Affine]:
    """Rotate about the centre (counter-clockwise for positive angles), same size, as a skewed
    sheet on the scanner glass: its corners leave the scan."""
    w, h = image.size
    out = image.rotate(angle, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=fill)
    return out, rotation(angle, w / 2, h / 2)


def _turn(image: Image.Image, turns: int) -> tuple[Image.Image, Affine]:
    ops = {1: Image.Transpose.ROTATE_90, 2: Image.Transpose.ROTATE_180, 3: Image.Transpose.ROTATE_270}
    return image.transpose(ops[turns]), quarter_turn(turns, image.width, image.height)


def _resample(image: Image.Image, dpi: int, target: int, optics: float) -> tuple[Image.Image, Affine]:
    """Sample `image` at `target` dpi through optics of `optics` target pixels (Gaussian sigma)."""
    s = target / dpi
    if s < 1:
        image = _blur(image, optics / s)
    size = (max(1, round(image.width * s)), max(1, round(image.height * s)))
    out = image.resize(size, Image.Resampling.BOX if s < 1 else Image.Resampling.BICUBIC)
    if s >= 1:
        out = _blur(out, optics)
    return out, scaling(size[0] / image.width, size[1] / image.height)


def _blur(image: Image.Image, sigma: float) -> Image.Image:
    return image.filter(ImageFilter.GaussianBlur(sigma)) if sigma > 0 else image


def _noise(image: Image.Image, sigma: float, rng: np.random.Generator) -> Image.Image:
    pixels = np.asarray(image, dtype=np.float32)
    pixels = pixels + rng.normal(0.0, sigma, pixels.shape).astype(np.float32)
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def _jpeg(image: Image.Image, quality: int) -> Image.Image:
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=max(1, min(95, quality)))
    buf.seek(0)
    return Image.open(buf).convert(image.mode)


def _specks(pixels: np.ndarray, density: float, rng: np.random.Generator, value: float = 30.0) -> np.ndarray:
    """Dark dust and toner specks (1-3 px across) at `density` per pixel."""
    h, w = pixels.shape[:2]
    n = int(density * h * w)
    if n == 0:
        return pixels
    ys, xs = rng.integers(0, h, n), rng.integers(0, w, n)
    radii = rng.choice([0, 0, 1, 1, 2], n)
    out = pixels.copy()
    for y, x, r in zip(ys, xs, radii):
        out[max(0, y - r) : y + r + 1, max(0, x - r) : x + r + 1] = value
    return out


def _photocopy(image: Image.Image, level: int, rng: np.random.Generator) -> tuple[Image.Image, dict[str, Any]]:
    """Threshold after toner spread; specks on the paper, drop-outs in the ink."""
    spread = _pick(rng, (0.5, 0.7, 0.9)[level])
    threshold = float(rng.uniform(*((150, 180), (125, 185), (105, 195))[level]))  # thin or bold strokes
    specks = _pick(rng, (0.0002, 0.0006, 0.0015)[level], 0.3)
    dropouts = _pick(rng, (0.002, 0.01, 0.03)[level], 0.3)
    grey = np.asarray(_blur(image, spread), dtype=np.float32)
    grey = grey + rng.normal(0.0, 10.0, grey.shape).astype(np.float32)  # uneven toner
    ink = grey < threshold
    ink &= rng.random(ink.shape) >= dropouts
    out = np.where(ink, 0.0, 255.0).astype(np.float32)
    out = _specks(out, specks, rng, 0.0)
    params = {"spread": spread, "threshold": round(threshold, 1), "specks": specks, "dropouts": dropouts}
    return Image.fromarray(out.astype(np.uint8)), params


def _illumination(image: Image.Image, level: int, rng: np.random.Generator) -> tuple[Image.Image, dict[str, Any]]:
    """The page multiplied by a lighting field: a gradient towards one side and a vignette."""
    depth = _pick(rng, (0.15, 0.3, 0.45)[level])  # how much darker the darkest corner gets
    theta = float(rng.uniform(0, 2 * math.pi))
    h, w = image.height, image.width
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    u, v = xs / max(1, w - 1) - 0.5, ys / max(1, h - 1) - 0.5
    ramp = (u * math.cos(theta) + v * math.sin(theta)) / 0.71 * 0.5 + 0.5  # 0..1 across the page
    vignette = np.clip((u * u + v * v) / 0.5, 0, 1)
    field_ = 1.0 - depth * np.clip(0.7 * ramp + 0.3 * vignette, 0, 1) ** 1.5
    out = np.asarray(image, dtype=np.float32) * field_
    params = {"depth": depth, "direction_deg": round(math.degrees(theta), 1)}
    return Image.fromarray(np.clip(out, 0, 255).astype(np.uint8)), params


_PAPERS = {  # recycled cream, blue, pink, green, grey (RGB at full tint)
    "cream": (236, 222, 182),
    "blue": (200, 218, 236),
    "pink": (240, 206, 212),
    "green": (208, 232, 202),
    "grey": (212, 210, 204),
}


def _tint(image: Image.Image, dpi: int, level: int, rng: np.random.Generator) -> Degraded:
    """Ink on coloured paper: white becomes the paper colour, dark stays dark, mottled a little."""
    name = str(rng.choice(sorted(_PAPERS)))
    amount = _pick(rng, (0.4, 0.7, 1.0)[level], 0.1)
    paper = 255.0 - amount * (255.0 - np.array(_PAPERS[name], dtype=np.float32))
    rgb = np.asarray(image.convert("RGB"), dtype=np.float32) / 255.0
    h, w = rgb.shape[:2]
    small = rng.normal(0.0, 4.0 * amount, (max(1, h // 64), max(1, w // 64))).astype(np.float32)
    mottle = np.asarray(Image.fromarray(small, mode="F").resize((w, h), Image.Resampling.BICUBIC))
    out = rgb * (paper[None, None, :] + mottle[:, :, None])
    params = {"paper": name, "amount": amount}
    return Degraded(Image.fromarray(np.clip(out, 0, 255).astype(np.uint8)), IDENTITY, dpi, params)


def _office(image: Image.Image, dpi: int, level: int, rng: np.random.Generator) -> Degraded:
    """200 dpi grey, skew up to 1.5 deg, slight blur, paper tone, noise, specks and JPEG
    (moderate; mild halves the skew and the noise, strong goes further on all of them)."""
    max_skew = (0.75, 1.5, 2.5)[level]
    angle = float(rng.uniform(-max_skew, max_skew))
    blur = _pick(rng, (0.4, 0.6, 0.9)[level])
    paper = float(rng.uniform(*((236, 248), (222, 242), (205, 230))[level]))
    sigma = _pick(rng, (3.0, 6.0, 10.0)[level])
    specks = _pick(rng, (0.00005, 0.0002, 0.0006)[level], 0.3)
    quality = int(round(rng.uniform(*((65, 85), (45, 75), (25, 50))[level])))
    target = _SCAN_DPI["office"]
    grey, m = _resample(image.convert("L"), dpi, target, blur)
    grey, rot = _rotate(grey, angle)
    pixels = np.asarray(grey, dtype=np.float32) * (paper / 255.0)
    pixels = pixels + rng.normal(0.0, sigma, pixels.shape).astype(np.float32)
    pixels = _specks(pixels, specks, rng, float(rng.uniform(20, 90)))
    grey = _jpeg(Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)), quality)
    params = {
        "dpi": target,
        "angle": round(angle, 3),
        "blur": blur,
        "paper": round(paper, 1),
        "noise": sigma,
        "specks": specks,
        "quality": quality,
    }
    return Degraded(grey, compose(m, rot), target, params)
