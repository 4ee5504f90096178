"""Table Transformer on ONNX Runtime (CPU): the graph exported once from the loaded
transformers model, cached under a key of its weights and config, run by one session.

On CPU ONNX Runtime's fused kernels do the same sums with less work: a full-size structure
crop measured ~1.5x less CPU than torch at one thread, outputs equal to ~1e-5. torch stays the
reference (and the GPU path); `models.table_transformer` pre- and post-processes both alike.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

log = logging.getLogger(__name__)

OPSET = 17
RUNTIMES = ("torch", "onnx", "auto")


def resolve_runtime(setting: str, device: str) -> str:
    """`auto`: ONNX Runtime on CPU, torch on GPU. An explicit `onnx` on a GPU is an error."""
    value = setting.strip().lower()
    if value not in RUNTIMES:
        raise ValueError(f"inference runtime {setting!r} is not one of: {', '.join(RUNTIMES)}")
    if value == "auto":
        return "onnx" if device == "cpu" else "torch"
    if value == "onnx" and device != "cpu":
        raise ValueError(f"inference runtime 'onnx' runs on CPU only, device is {device}; use auto or torch")
    return value


WEIGHT_FILES = ("config.json", "*.safetensors", "*.bin")


def _versions() -> bytes:
    from importlib.metadata import version

    return f"{torch.__version__}|{version('transformers')}|opset{OPSET}|".encode()


def files_key(folder: Path) -> str:
    """Hash of a weights folder's config and weight files and the exporter's versions: found
    without loading the model, so a cached graph spares the transformers import and model build."""
    digest = hashlib.blake2b(_versions(), digest_size=16)
    for pattern in WEIGHT_FILES:
        for path in sorted(folder.glob(pattern)):
            digest.update(path.name.encode())
            with path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 22), b""):
                    digest.update(block)
    return digest.hexdigest()


def graph_key(model: torch.nn.Module) -> str:
    """Hash of a loaded model's config and every weight, and the exporter's versions (weights
    that are not a local folder, e.g. the hub's cache): a changed checkpoint, config or exporter
    gets a new graph, never a stale one."""
    digest = hashlib.blake2b(_versions(), digest_size=16)
    config: Any = model.config
    digest.update(config.to_json_string(use_diff=False).encode())
    for name, tensor in model.state_dict().items():
        digest.update(f"{name}:{tuple(tensor.shape)}:{tensor.dtype}".encode())
        digest.update(tensor.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def graph_path(key: str, weights_dir: Path | None, cache_dir: Path) -> Path:
    """`<weights>/onnx/<key>.onnx` next to a writable weights folder, else under `cache_dir`."""
    if weights_dir is not None and weights_dir.is_dir() and os.access(weights_dir, os.W_OK):
        return weights_dir / "onnx" / f"{key}.onnx"
    return cache_dir / f"{key}.onnx"


def cached_graph(weights_dir: Path, cache_dir: Path) -> Path | None:
    """The graph already exported for this weights folder, beside it or in the cache; None if none."""
    key = files_key(weights_dir)
    for path in (weights_dir / "onnx" / f"{key}.onnx", cache_dir / f"{key}.onnx"):
        if path.is_file():
            return path
    return None


class _Outputs(torch.nn.Module):
    """The model as a function of two tensors returning two: the form the exporter traces."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, pixel_values: torch.Tensor, pixel_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.model(pixel_values=pixel_values, pixel_mask=pixel_mask)
        return out.logits, out.pred_boxes


def export_graph(model: torch.nn.Module, path: Path, max_size: int) -> Path:
    """Export with dynamic batch, height and width (written to a temporary file renamed into
    place, so concurrent loaders agree). Tracing alters the traced module's state, so a copy
    is traced and the caller's model is left as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    traced = _Outputs(copy.deepcopy(model).float().eval())
    height = max_size * 3 // 4  # not square: no shape is folded into the graph as H == W
    pixels = torch.zeros((1, 3, height, max_size), dtype=torch.float32)
    mask = torch.ones((1, height, max_size), dtype=torch.long)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".export-", suffix=".onnx")
    os.close(fd)
    try:
        with torch.no_grad():
            torch.onnx.export(
                traced,
                (pixels, mask),
                tmp,
                dynamo=False,
                opset_version=OPSET,
                input_names=["pixel_values", "pixel_mask"],
                output_names=["logits", "pred_boxes"],
                dynamic_axes={
                    "pixel_values": {0: "batch", 2: "height", 3: "width"},
                    "pixel_mask": {0: "batch", 1: "height", 2: "width"},
                    "logits": {0: "batch"},
                    "pred_boxes": {0: "batch"},
                },
            )
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


class OnnxSession:
    """One ONNX Runtime session; `run` is thread-safe, so the pipeline's lanes share it."""

    def __init__(self, path: Path, threads: int) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.path = path
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def run(self, pixel_values: np.ndarray, pixel_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        logits, boxes = self.session.run(None, {"pixel_values": pixel_values, "pixel_mask": pixel_mask})
        return logits, boxes


def load_session(
    model: torch.nn.Module, *, weights_dir: Path | None, cache_dir: Path, max_size: int, threads: int
) -> OnnxSession:
    """The cached graph of `model` (exported now if missing) in a new session; keyed by the
    weights folder's files when there is one, else by the loaded weights."""
    key = files_key(weights_dir) if weights_dir is not None else graph_key(model)
    path = graph_path(key, weights_dir, cache_dir)
    if not path.is_file():
        log.info("exporting the ONNX graph of this model once: %s", path)
        try:
            export_graph(model, path, max_size)
        except PermissionError:  # a weights folder we may read but not write into
            path = graph_path(key, None, cache_dir)
            if not path.is_file():
                export_graph(model, path, max_size)
    return OnnxSession(path, threads)
