"""Table Transformer (detection and structure recognition): PIL images in, plain objects out.

Preprocessing is ours, after the reference code: resize so the longest side is
`max_size`, ImageNet mean/std, zero padding to the batch's largest H and W with a pixel
mask. The hub's preprocessor configs are not trusted (the v1.1 one is incomplete).

Boxes: DETR-style models predict (cx, cy, w, h) relative to the real (unpadded) image, as
their targets were normalised per image before batch padding; transformers'
`post_process_object_detection` likewise scales them by the original image size only. So
scaling by the original width and height gives original pixels, padded batch or not.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from PIL import Image

from models import weights
from models.device import configure_threads, inference_dtype, resolve_device
from models.onnx_graph import OnnxSession, cached_graph, load_session, resolve_runtime
from worker.core.types import STRUCTURE_LABELS

if TYPE_CHECKING:
    from worker.settings import ModelSettings

logger = logging.getLogger(__name__)

DETECTION_LABELS = ("table", "table rotated")
DETECTION_MAX_SIZE = 800
STRUCTURE_MAX_SIZE = 1000
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

Detection = dict[str, Any]  # {"label": str, "score": float, "bbox": [x0, y0, x1, y1]}
# Largest share of a batch's pixels that may be padding before the batch is split (GPU; CPU
# batches are capped at `cpu_batch_size`). Padded pixels cost compute and shift outputs slightly.
MAX_PADDING = 0.2


def resized_size(width: int, height: int, max_size: int) -> tuple[int, int]:
    """(w, h) with the longest side scaled to `max_size` (up or down, as the reference does)."""
    if width < 1 or height < 1:
        raise ValueError(f"image of size {width}x{height} has no pixels")
    scale = max_size / max(width, height)
    return max(1, int(round(width * scale))), max(1, int(round(height * scale)))


def make_batch(images: list[Image.Image], max_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Resized images as a zero-padded uint8 batch (B, 3, H, W) and its pixel mask (B, H, W).

    uint8 keeps the host-to-device copy small; `normalize` runs on the device.
    """
    resized = [_rgb(im).resize(resized_size(*im.size, max_size), Image.Resampling.BILINEAR) for im in images]
    height = max(im.height for im in resized)
    width = max(im.width for im in resized)
    pixels = torch.zeros((len(resized), 3, height, width), dtype=torch.uint8)
    mask = torch.zeros((len(resized), height, width), dtype=torch.long)
    for i, im in enumerate(resized):
        pixels[i, :, : im.height, : im.width] = torch.from_numpy(np.asarray(im).copy()).permute(2, 0, 1)
        mask[i, : im.height, : im.width] = 1
    return pixels, mask


def size_buckets(order: list[int], shapes: list[tuple[int, int]], size: int, max_padding: float) -> Iterator[list[int]]:
    """Consecutive runs of `order` (indices into `shapes`, (w, h)) of at most `size` images,
    each closed before its padding would exceed `max_padding` of the batch's pixels."""
    chunk: list[int] = []
    for i in order:
        trial = chunk + [i]
        width = max(shapes[j][0] for j in trial)
        height = max(shapes[j][1] for j in trial)
        own = sum(shapes[j][0] * shapes[j][1] for j in trial)
        if chunk and (len(trial) > size or 1 - own / (width * height * len(trial)) > max_padding):
            yield chunk
            trial = [i]
        chunk = trial
    if chunk:
        yield chunk


def normalize(pixels: torch.Tensor, mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """ImageNet normalisation in fp32, padding kept at exactly 0 (as DETR pads), then cast."""
    mean = torch.tensor(IMAGENET_MEAN, device=pixels.device).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD, device=pixels.device).view(1, 3, 1, 1)
    values = (pixels.float() / 255.0 - mean) / std
    return (values * mask[:, None].to(values.dtype)).to(dtype)


def postprocess(
    logits: torch.Tensor, pred_boxes: torch.Tensor, sizes: list[tuple[int, int]], id2label: dict[int, str]
) -> list[list[Detection]]:
    """Per image, every query as {label, score, bbox in original pixels}, best score first.

    `sizes` are the original (width, height). The no-object class (last logit) is dropped
    before the argmax, as the reference does; no threshold is applied here.
    """
    probs = logits.float().softmax(-1)[..., :-1]
    scores, labels = probs.max(-1)
    cx, cy, w, h = pred_boxes.float().unbind(-1)
    boxes = torch.stack((cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h), dim=-1)
    scale = torch.tensor([[wd, ht, wd, ht] for wd, ht in sizes], dtype=torch.float32, device=boxes.device)
    boxes = boxes * scale[:, None, :]
    boxes = torch.minimum(boxes.clamp(min=0), scale[:, None, :])
    results: list[list[Detection]] = []
    for img_scores, img_labels, img_boxes in zip(scores.tolist(), labels.tolist(), boxes.tolist()):
        ranked = sorted(zip(img_scores, img_labels, img_boxes), key=lambda t: float(t[0]), reverse=True)
        results.append(
            [{"label": id2label[lab], "score": float(s), "bbox": [float(v) for v in box]} for s, lab, box in ranked]
        )
    return results


class TableTransformer:
    """A loaded Table Transformer on one device; `predict` is its whole interface."""

    def __init__(
        self,
        model: torch.nn.Module | None,
        *,
        model_id: str,
        revision: str | None,
        device: str,
        dtype: torch.dtype,
        max_size: int,
        batch_size: int = 1,
        channels_last: bool = False,
        max_batch: int | None = None,
        max_padding: float = MAX_PADDING,
        session: OnnxSession | None = None,
        id2label: dict[int, str] | None = None,
    ) -> None:
        self.model = model
        self.session = session  # ONNX Runtime runs the model instead of torch (see models.onnx_graph)
        self.model_id = model_id
        self.revision = revision
        self.device = device
        self.dtype = dtype
        self.max_size = max_size
        self.batch_size = batch_size
        self.channels_last = channels_last
        self.max_batch = max_batch  # caps any batch_size asked for (CPU: see `cpu_batch_size`)
        self.max_padding = max_padding
        if id2label is None:
            assert model is not None, "a runner without a torch model needs its id2label"
            config: Any = model.config
            id2label = config.id2label
        self.id2label: dict[int, str] = {int(k): v for k, v in id2label.items()}

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.id2label[i] for i in sorted(self.id2label))

    @classmethod
    def load(
        cls,
        ref: str,
        *,
        models_dir: Path | None = None,
        device: str = "auto",
        half_precision: bool = True,
        max_size: int = DETECTION_MAX_SIZE,
        batch_size: int = 1,
        expected_labels: tuple[str, ...] | None = None,
        channels_last: bool = False,
        cpu_batch_size: int | None = None,
        runtime: str = "torch",
        onnx_cache_dir: Path | None = None,
        threads: int = 1,
    ) -> TableTransformer:
        """Load `ref` (folder or hub id[@revision]); WeightsNotFound says what to do if absent.

        `use_pretrained_backbone=False` overrides the hub configs' `true`: the checkpoint
        holds the backbone weights, and otherwise timm would try to fetch ImageNet weights.
        `channels_last` stores the backbone's activations NHWC (oneDNN and cuDNN convolve it
        without reordering; ~10% less CPU for a structure crop, outputs equal to ~1e-6).
        `cpu_batch_size` caps batches on CPU, where batching saves nothing (see `predict`).
        `runtime` (torch, onnx, auto) picks who runs the model (`models.onnx_graph.resolve_runtime`);
        ONNX Runtime sessions get `threads` intra-op threads, fixed for the session.
        """
        resolved = weights.checked_source(ref, weights.resolve(ref, models_dir), models_dir)
        target = resolve_device(device)
        dtype = inference_dtype(target, half_precision)
        onnx = resolve_runtime(runtime, target) == "onnx"
        folder = Path(resolved.path_or_id) if resolved.local else None
        cache = onnx_cache_dir or Path.home() / ".cache" / "tablesight" / "onnx"
        model: torch.nn.Module | None = None
        session = None
        graph = cached_graph(folder, cache) if onnx and folder is not None else None
        if graph is not None:  # no torch model needed: the graph and config.json are the model
            assert folder is not None
            session = OnnxSession(graph, threads)
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            id2label = {int(k): v for k, v in config["id2label"].items()}
        else:
            model = cls._from_pretrained(ref, resolved, models_dir, target, dtype)
            id2label = None
            if onnx:
                try:
                    session = load_session(
                        model, weights_dir=folder, cache_dir=cache, max_size=max_size, threads=threads
                    )
                except Exception as exc:  # noqa: BLE001 - any exporter or runtime failure: torch still answers
                    if runtime.strip().lower() != "auto":
                        raise
                    logger.warning("ONNX graph unavailable (%s); %s runs on torch", _one_line(exc), ref)
        if session is not None:
            channels_last = False
        elif channels_last:
            assert model is not None
            model = model.to(memory_format=torch.channels_last)
        runner = cls(
            model,
            model_id=resolved.hub_id or resolved.path_or_id,
            revision=resolved.revision,
            device=target,
            dtype=dtype,
            max_size=max_size,
            batch_size=batch_size,
            channels_last=channels_last,
            max_batch=cpu_batch_size if target == "cpu" else None,
            session=session,
            id2label=id2label,
        )
        if expected_labels is not None and set(runner.labels) != set(expected_labels):
            raise ValueError(
                f"model {ref!r} has labels {list(runner.labels)}, expected {list(expected_labels)}: "
                "is the detection/structure model setting swapped?"
            )
        logger.info(
            "loaded %s (revision %s) on %s as %s with %s",
            runner.model_id,
            runner.revision,
            target,
            dtype,
            "onnxruntime" if session else "torch",
        )
        return runner

    @staticmethod
    def _from_pretrained(
        ref: str, resolved: weights.ResolvedModel, models_dir: Path | None, target: str, dtype: torch.dtype
    ) -> torch.nn.Module:
        from transformers import TableTransformerForObjectDetection

        try:
            loaded = TableTransformerForObjectDetection.from_pretrained(
                resolved.path_or_id,
                revision=resolved.revision,
                local_files_only=resolved.local,
                use_pretrained_backbone=False,
            )
        except OSError as exc:
            raise weights.not_found(ref, resolved, models_dir, exc) from exc
        model: torch.nn.Module = loaded.to(device=target, dtype=dtype).eval()
        return model

    def predict(self, images: list[Image.Image], batch_size: int | None = None) -> list[list[Detection]]:
        """Objects for each image, in input order; see `postprocess` for their form.

        Images are batched in order of aspect ratio (all are resized to the same longest
        side, so aspect alone fixes the resized shape), and a batch is closed early rather
        than let padding exceed `max_padding` of its pixels: size buckets, so a batch never
        pays for much more than its own pixels. `max_batch` caps the size (1 on CPU: there a
        batch of 4 pages measured ~30% more CPU per page than 4 single pages at one thread).
        """
        size = batch_size or self.batch_size
        if size < 1:
            raise ValueError(f"batch_size must be >= 1, got {size}")
        if self.max_batch:
            size = min(size, self.max_batch)
        shapes = [resized_size(*im.size, self.max_size) for im in images]
        order = sorted(range(len(images)), key=lambda i: shapes[i][1] / shapes[i][0])
        results: list[list[Detection] | None] = [None] * len(images)
        for chunk in size_buckets(order, shapes, size, self.max_padding):
            for i, objects in zip(chunk, self._run([images[i] for i in chunk])):
                results[i] = objects
        return [r for r in results if r is not None]

    def _run(self, images: list[Image.Image]) -> list[list[Detection]]:
        pixels, mask = make_batch(images, self.max_size)
        non_blocking = self.device.startswith("cuda")
        pixels = pixels.to(self.device, non_blocking=non_blocking)
        mask = mask.to(self.device, non_blocking=non_blocking)
        sizes = [im.size for im in images]
        if self.session is not None:
            logits, boxes = self.session.run(normalize(pixels, mask, torch.float32).numpy(), mask.numpy())
            return postprocess(torch.from_numpy(logits), torch.from_numpy(boxes), sizes, self.id2label)
        assert self.model is not None, "a runner without a session has its torch model"
        with torch.inference_mode():
            values = normalize(pixels, mask, self.dtype)
            if self.channels_last:
                values = values.contiguous(memory_format=torch.channels_last)
            out = self.model(pixel_values=values, pixel_mask=mask)
            return postprocess(out.logits, out.pred_boxes, sizes, self.id2label)


def load_detector(settings: ModelSettings, threads: int = 0) -> TableTransformer:
    """The table detector named by DETECTION_MODEL (longest side 800)."""
    return _load(
        settings, settings.detection_model, DETECTION_MAX_SIZE, settings.detection_batch_size, DETECTION_LABELS, threads
    )


def load_structure(settings: ModelSettings, threads: int = 0) -> TableTransformer:
    """The structure recogniser named by STRUCTURE_MODEL (longest side 1000)."""
    return _load(
        settings, settings.structure_model, STRUCTURE_MAX_SIZE, settings.structure_batch_size, STRUCTURE_LABELS, threads
    )


def _load(
    settings: ModelSettings, ref: str, max_size: int, batch_size: int, labels: tuple[str, ...], threads: int
) -> TableTransformer:
    """`threads`: ONNX Runtime's intra-op threads (0: TORCH_THREADS, else 1), fixed per session."""
    configure_threads(settings.torch_threads)
    return TableTransformer.load(
        ref,
        models_dir=settings.models_dir,
        device=settings.device,
        half_precision=settings.half_precision,
        max_size=max_size,
        batch_size=batch_size,
        expected_labels=labels,
        channels_last=settings.channels_last,
        cpu_batch_size=settings.cpu_batch_size,
        runtime=settings.inference_runtime,
        onnx_cache_dir=settings.onnx_cache_dir,
        threads=threads or settings.torch_threads or 1,
    )


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:300] or type(error).__name__


def _rgb(image: Image.Image) -> Image.Image:
    return image if image.mode == "RGB" else image.convert("RGB")
