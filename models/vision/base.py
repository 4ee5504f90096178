"""The reader interface every vision backend keeps, its answer and its error."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Protocol

from PIL import Image

from worker.errors import TablesightError


class VisionError(TablesightError):
    """A read could not produce an answer; `transient` says whether trying again may help."""

    def __init__(self, message: str, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient

    def __reduce__(self):  # picklable across Celery processes
        return (type(self), (str(self), self.transient))


@dataclass(slots=True)
class VisionAnswer:
    """The model's raw text and what it cost; `finish_reason` 'length' means it was cut off."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    attempts: int = 1
    extra: dict[str, object] = field(default_factory=dict)


class VisionReader(Protocol):
    backend: str
    model: str

    def read(self, image: Image.Image, prompt: str, *, deadline: float | None = None) -> VisionAnswer:
        """Answer `prompt` about `image`; `deadline` (time.monotonic()) bounds the whole read.

        Raises VisionError (transient or not); never returns an answer for a failed call.
        """
        ...


MIN_SIDE = 32  # processors misread (or refuse) images a few pixels thin
MAX_ASPECT = 20  # some (Qwen2-VL) refuse extreme aspect ratios; a one-row table can have one


def prepare_image(image: Image.Image, max_side: int) -> Image.Image:
    """RGB, no side longer than `max_side` (0 = as is), no side shorter than MIN_SIDE.

    Large crops cost tokens, not accuracy; thin ones are padded with white (never stretched,
    which would distort the text) up to MIN_SIDE and an aspect ratio of at most MAX_ASPECT.
    """
    image = image.convert("RGB")
    longest = max(image.size)
    if max_side and longest > max_side:
        scale = max_side / longest
        size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        image = image.resize(size, Image.Resampling.LANCZOS)
    w, h = image.size
    target = (max(w, MIN_SIDE, -(-h // MAX_ASPECT)), max(h, MIN_SIDE, -(-w // MAX_ASPECT)))
    if target != (w, h):
        canvas = Image.new("RGB", target, "white")
        canvas.paste(image, ((target[0] - w) // 2, (target[1] - h) // 2))
        image = canvas
    return image


def png_bytes(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=3)
    return buf.getvalue()
