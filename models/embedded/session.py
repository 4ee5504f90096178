"""One onnxruntime session per model file, on CPU or CUDA, with a fixed thread count.

Every ONNX model of ours opens here (the embedded engine's, and an ONNX OCR engine's: its hook to the
CUDA execution provider). CUDA needs onnxruntime-gpu (`tablesight[gpu]`), whose CUDA libraries are the
ones torch's wheel installs; `preload_dlls` loads them from site-packages before the first session.

Every call goes through `run`, which asks onnxruntime to shrink its CPU memory arena after the
call. The arena otherwise keeps what the largest and oddest-shaped inputs needed (PP-OCR's detector
tiles and recogniser batches vary in size) and, with two lanes calling a model at once, two calls'
activations: a worker's resident memory grew with the pages it had read. A shrink costs the next
call its allocations again, so the recogniser, which makes dozens of calls per read, shrinks after
a read's last call only; the others after each call (one per page, table or tile; docs/speed.md).
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


def run(session: ort.InferenceSession, feeds: dict[str, np.ndarray], shrink: bool = True) -> list[Any]:
    """`session.run(None, feeds)`, shrinking the CPU arena afterwards when `shrink` (see the module
    docstring). Each shrink costs the next call its allocations again: once per OCR read (its last
    call) measured about 5% less OCR CPU than after every call, at the same peak."""
    return session.run(None, feeds, _SHRINK if shrink else None)
