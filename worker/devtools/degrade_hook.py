"""Where `tablesight bench --degrade KIND` gets its degraded pages: for now the geometry-preserving
`office` look of the sample generator (worker.devtools.samples.scan_noise). The scan simulator
(worker.evaluation.degrade) also skews and resamples, so using it needs the GT boxes mapped through its
transform before scoring; until then the bench refuses its other kinds with a clear error.
"""

from __future__ import annotations

from collections.abc import Callable

from PIL import Image

FALLBACK_KINDS = ("office",)

Degrader = Callable[[Image.Image, int], Image.Image]


def degrader(kind: str) -> Degrader:
    """A function (image, seed) -> degraded image for `kind`; ValueError for a kind nobody knows."""
    # The simulator now merged (worker.evaluation.degrade.degrade(image, dpi, kind, strength, seed) ->
    # Degraded) also moves the page geometry (skew, resampling): GT boxes must follow its transform
    # before scoring, which this bench does not do yet, so it keeps to the geometry-preserving look.
    if kind not in FALLBACK_KINDS:
        raise ValueError(
            f"--degrade {kind}: no scan simulator (worker.evaluation.degrade) here; "
            f"the bench's own fallback knows {', '.join(FALLBACK_KINDS)}"
        )
    from worker.devtools.samples import scan_noise

    return lambda image, seed: scan_noise(image, seed).convert("RGB")


def source() -> str:
    """Which degradation `degrader` uses."""
    return "worker.devtools.samples.scan_noise (the simulator's boxes are not mapped here yet)"
