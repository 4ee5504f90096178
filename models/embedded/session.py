"""One onnxruntime session per model file, on CPU or CUDA, with a fixed thread count.

Every ONNX model of ours opens here (the embedded engine's, and an ONNX OCR engine's: its hook to the
CUDA execution provider). CUDA needs onnxruntime-gpu (`tablesight[gpu]`), whose CUDA libraries are the
ones torch's wheel installs; `preload_dlls` loads them from site-packages before the first session.

Every call goes through `run`, which on CPU asks onnxruntime to shrink its memory arena after the
call: the arena keeps what the largest and oddest-shaped inputs needed (PP-OCR's detector tiles
and recogniser batches vary in size), so a worker's resident memory grew with the pages it had
read; shrinking hands the free chunks back after each call at no measured CPU cost (docs/speed.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort


def open_session(path: Path | bytes, threads: int = 0, device: str = "auto") -> ort.InferenceSession:
    """`path` a file or a serialised model; `threads` 0 lets onnxruntime choose; `device` cpu,
    cuda[:N] or auto (CUDA when ORT has it)."""
    options = ort.SessionOptions()
    options.log_severity_level = 3  # the Paddle exports warn about shape merges on every load
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads > 0:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    available = ort.get_available_providers()
    providers: list[str | tuple[str, dict[str, str]]] = ["CPUExecutionProvider"]
    value = device.strip().lower()
    if value.startswith("cuda") and "CUDAExecutionProvider" not in available:
        raise ValueError(f"device {device!r} asks for CUDA but this onnxruntime has no CUDA provider")
    if (value.startswith("cuda") or value == "auto") and "CUDAExecutionProvider" in available:
        index = value.partition(":")[2] or "0"
        preload = getattr(ort, "preload_dlls", None)  # onnxruntime >= 1.21
        if preload is not None:
            preload(cuda=True, cudnn=True, msvc=False)
        providers.insert(0, ("CUDAExecutionProvider", {"device_id": index}))
    model = path if isinstance(path, bytes) else str(path)
    return ort.InferenceSession(model, sess_options=options, providers=providers)


def _shrink_options() -> ort.RunOptions:
    options = ort.RunOptions()
    options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    return options


_SHRINK = _shrink_options()


def run(session: ort.InferenceSession, feeds: dict[str, np.ndarray]) -> list[Any]:
    """`session.run(None, feeds)`, shrinking the CPU arena afterwards (see the module docstring)."""
    return session.run(None, feeds, _SHRINK)
