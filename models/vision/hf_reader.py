"""`transformers` backend: a local image-text-to-text model in the worker process.

Any `AutoModelForImageTextToText` model whose processor has a chat template works (SmolVLM,
Qwen2/2.5-VL, LLaVA, Idefics3, Gemma 3, ...): the chat template places the image tokens, so
no model-specific prompt code lives here. GPU runs bf16 (fp16 on older cards), CPU fp32;
decoding is greedy by default so the same crop gives the same answer. Loaded models are
cached per process: a queue worker's child loads its model once, on its first read.
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

import torch
import transformers
from PIL import Image

from models import weights
from models.device import configure_threads, inference_dtype, resolve_device
from models.vision.base import VisionAnswer, VisionError, prepare_image

if TYPE_CHECKING:
    from worker.settings import Settings

logger = logging.getLogger(__name__)

_CACHE: dict[tuple[Any, ...], TransformersReader] = {}
# transformers 4.56 renamed `torch_dtype` to `dtype` (the old name still works, with a warning)
_DTYPE_KW = "dtype" if tuple(int(p) for p in transformers.__version__.split(".")[:2]) >= (4, 56) else "torch_dtype"
_LOCK = threading.Lock()


class TransformersReader:
    """A loaded processor + model on one device."""

    backend = "transformers"

    def __init__(
        self,
        model: Any,
        processor: Any,
        *,
        model_id: str,
        revision: str | None,
        device: str,
        dtype: torch.dtype,
        max_new_tokens: int,
        temperature: float,
        max_image_side: int,
    ) -> None:
        self.hf_model = model
        self.processor = processor
        self.model = model_id
        self.revision = revision
        self.device = device
        self.dtype = dtype
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.max_image_side = max_image_side
        params = inspect.signature(model.forward).parameters
        self._drop = [k for k in ("token_type_ids",) if k not in params]  # processors add keys some models refuse

    @classmethod
    def load(
        cls,
        ref: str,
        *,
        models_dir: Any = None,
        device: str = "auto",
        half_precision: bool = True,
        max_new_tokens: int = 2048,
        temperature: float = 0.0,
        max_image_side: int = 1536,
    ) -> TransformersReader:
        from transformers import AutoModelForImageTextToText, AutoProcessor

        resolved = weights.checked_source(ref, weights.resolve(ref, models_dir), models_dir)
        target = resolve_device(device)
        dtype = inference_dtype(target, half_precision)
        kw = {"revision": resolved.revision, "local_files_only": resolved.local}
        try:
            processor = AutoProcessor.from_pretrained(resolved.path_or_id, **kw)
            # load straight into the inference dtype: a 7B model never passes through fp32 in RAM
            model = AutoModelForImageTextToText.from_pretrained(resolved.path_or_id, **{_DTYPE_KW: dtype}, **kw)
        except OSError as exc:
            raise weights.not_found(ref, resolved, models_dir, exc) from exc
        except ValueError as exc:  # an architecture AutoModelForImageTextToText does not know
            raise VisionError(f"model {ref!r} is not an image-text-to-text model transformers can load: {exc}") from exc
        if not getattr(processor, "chat_template", None):
            raise VisionError(f"model {ref!r} has no chat template: the prompt cannot be built for it")
        model = model.to(target).eval()  # type: ignore[arg-type]  # transformers types .to() by its first overload
        logger.info("loaded vision model %s (revision %s) on %s as %s", ref, resolved.revision, target, dtype)
        return cls(
            model,
            processor,
            model_id=resolved.hub_id or resolved.path_or_id,
            revision=resolved.revision,
            device=target,
            dtype=dtype,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            max_image_side=max_image_side,
        )

    def read(self, image: Image.Image, prompt: str, *, deadline: float | None = None) -> VisionAnswer:
        messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": prompt}]}]
        try:
            text = self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            inputs = self.processor(
                images=[prepare_image(image, self.max_image_side)], text=[text], return_tensors="pt"
            )
        except (ValueError, TypeError, KeyError) as exc:
            raise VisionError(f"the processor of {self.model} could not prepare the crop: {exc}") from exc
        for key in self._drop:
            inputs.pop(key, None)
        inputs = inputs.to(self.device)
        if "pixel_values" in inputs and inputs["pixel_values"].is_floating_point():
            inputs["pixel_values"] = inputs["pixel_values"].to(self.dtype)
        gen: dict[str, Any] = {"max_new_tokens": self.max_new_tokens, "do_sample": self.temperature > 0}
        if self.temperature > 0:
            gen["temperature"] = self.temperature
        if deadline is not None:
            gen["max_time"] = max(deadline - time.monotonic(), 0.1)  # stop generating; the answer is cut
        n_in = int(inputs["input_ids"].shape[1])
        try:
            with torch.inference_mode():
                out = self.hf_model.generate(**inputs, **gen)
        except torch.cuda.OutOfMemoryError as exc:
            torch.cuda.empty_cache()
            raise VisionError(f"out of GPU memory reading a {image.width}x{image.height} crop", transient=True) from exc
        new = out[0, n_in:]
        eos = _eos_ids(self.hf_model)
        if len(new) == 0 or int(new[-1]) in eos:
            finish = "stop"
        else:  # cut by the token limit, or by the deadline (max_time)
            finish = "length" if len(new) >= self.max_new_tokens else "time"
        answer = self.processor.decode(new, skip_special_tokens=True)
        return VisionAnswer(text=answer, prompt_tokens=n_in, completion_tokens=int(len(new)), finish_reason=finish)


def _eos_ids(model: Any) -> set[int]:
    eos = getattr(model.generation_config, "eos_token_id", None)
    if eos is None:
        return set()
    return {int(e) for e in eos} if isinstance(eos, (list, tuple)) else {int(eos)}


def load_transformers_reader(settings: Settings, model: str) -> TransformersReader:
    """The reader for these settings, loaded once per process and reused."""
    key = (
        model,
        str(settings.models.models_dir),
        settings.models.device,
        settings.models.half_precision,
        settings.vision.max_new_tokens,
        settings.vision.temperature,
        settings.vision.max_image_side,
    )
    with _LOCK:
        if key not in _CACHE:
            configure_threads(settings.models.torch_threads)
            _CACHE[key] = TransformersReader.load(
                model,
                models_dir=settings.models.models_dir,
                device=settings.models.device,
                half_precision=settings.models.half_precision,
                max_new_tokens=settings.vision.max_new_tokens,
                temperature=settings.vision.temperature,
                max_image_side=settings.vision.max_image_side,
            )
        return _CACHE[key]
