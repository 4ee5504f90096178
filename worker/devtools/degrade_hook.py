"""Where `tablesight bench --degrade KIND` gets its degraded pages.

The scan simulator (`worker.evaluation.degrade`) owns what a degraded page looks like; the bench
only calls it: `degrade(image, kind, seed) -> image`. Until that module exists, the one kind
`office` falls back to the sample generator's mild scanner look (worker.devtools.samples.scan_noise:
grey, skew under 0.5 degrees, slight blur, Gaussian noise), so the bench runs on degraded pages
either way and says which source it used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from PIL import Image

FALLBACK_KINDS = ("office",)

Degrader = Callable[[Image.Image, int], Image.Image]


def degrader(kind: str) -> Degrader:
    """A function (image, seed) -> degraded image for `kind`; ValueError for a kind nobody knows."""
    try:
        module = importlib.import_module("worker.evaluation.degrade")
    except ModuleNotFoundError:
        module = None
    simulate = getattr(module, "degrade", None) if module is not None else None
    if callable(simulate):
        return lambda image, seed: simulate(image, kind, seed)
    if kind not in FALLBACK_KINDS:
        raise ValueError(
            f"--degrade {kind}: no scan simulator (worker.evaluation.degrade) here; "
            f"the bench's own fallback knows {', '.join(FALLBACK_KINDS)}"
        )
    from worker.devtools.samples import scan_noise

    return lambda image, seed: scan_noise(image, seed).convert("RGB")


def source() -> str:
    """Which degradation `degrader` uses: the simulator's module, or the fallback."""
    try:
        module = importlib.import_module("worker.evaluation.degrade")
    except ModuleNotFoundError:
        return "worker.devtools.samples.scan_noise (fallback)"
    return module.__name__ if callable(getattr(module, "degrade", None)) else "worker.devtools.samples.scan_noise"
