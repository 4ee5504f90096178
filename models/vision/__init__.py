"""Vision readers: a table crop in, the model's answer (text) out, behind one interface.

Two backends: `transformers` (a local image-text-to-text model; imports torch) and `openai`
(any OpenAI-compatible chat-completions server; standard library only). `load_reader`
imports only the backend asked for, so API-only nodes never import torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from models.vision.base import VisionAnswer, VisionError, VisionReader, prepare_image

if TYPE_CHECKING:
    from worker.settings import Settings

BACKENDS = ("openai", "transformers")
# Defaults for the `transformers` backend when VISION_MODEL is empty (see README: why these).
DEFAULT_CPU_MODEL = "HuggingFaceTB/SmolVLM-500M-Instruct"
DEFAULT_GPU_MODEL = "Qwen/Qwen2.5-VL-7B-Instruct"


def model_name(settings: Settings, backend: str | None = None) -> str:
    """The model a read with these settings uses, known without loading it (for idempotence)."""
    backend = backend or settings.vision.backend
    if settings.vision.model.strip():
        return settings.vision.model.strip()
    if backend == "transformers":
        from models.device import resolve_device

        return DEFAULT_GPU_MODEL if resolve_device(settings.models.device).startswith("cuda") else DEFAULT_CPU_MODEL
    raise VisionError("set TABLESIGHT_VISION_MODEL to the model name the vision server serves")


def load_reader(settings: Settings, backend: str | None = None) -> VisionReader:
    """Build the reader named by `backend` (default VISION_BACKEND) from the settings."""
    backend = backend or settings.vision.backend
    if backend == "openai":
        from models.vision.openai_reader import OpenAIReader

        return OpenAIReader.from_settings(settings, model_name(settings, backend))
    if backend == "transformers":
        from models.vision.hf_reader import load_transformers_reader

        return load_transformers_reader(settings, model_name(settings, backend))
    raise VisionError(f"unknown vision backend {backend!r}; use one of: {', '.join(BACKENDS)}")


__all__ = [
    "BACKENDS",
    "DEFAULT_CPU_MODEL",
    "DEFAULT_GPU_MODEL",
    "VisionAnswer",
    "VisionError",
    "VisionReader",
    "load_reader",
    "model_name",
    "prepare_image",
]
