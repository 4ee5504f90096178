"""Which device and precision the models run on, from the DEVICE / HALF_PRECISION settings."""

from __future__ import annotations

import re

import torch

_CUDA_RE = re.compile(r"^cuda(?::(\d+))?$")


def resolve_device(setting: str) -> str:
    """Turn `auto`, `cpu`, `cuda` or `cuda:N` into a concrete torch device string.

    An explicit CUDA request on a machine without that device is an error rather than a
    silent fallback to CPU: a GPU worker that quietly runs on CPU is the worse failure.
    """
    value = setting.strip().lower()
    if value == "auto":
        return "cuda:0" if torch.cuda.is_available() else "cpu"
    if value == "cpu":
        return "cpu"
    match = _CUDA_RE.match(value)
    if match is None:
        raise ValueError(f"device {setting!r} is not one of: auto, cpu, cuda, cuda:N")
    index = int(match.group(1) or 0)
    if not torch.cuda.is_available():
        raise ValueError(f"device {setting!r} asks for CUDA but torch sees no CUDA device; use auto or cpu")
    count = torch.cuda.device_count()
    if index >= count:
        raise ValueError(f"device {setting!r}: only {count} CUDA device(s) visible (cuda:0..cuda:{count - 1})")
    return f"cuda:{index}"


def inference_dtype(device: str, half_precision: bool) -> torch.dtype:
    """bf16 on CUDA where supported (fp16 on older cards), fp32 on CPU.

    CPU half precision is slower than fp32 on most hosts, so CPU always runs fp32.
    """
    if not device.startswith("cuda") or not half_precision:
        return torch.float32
    with torch.cuda.device(device):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def configure_threads(n: int) -> None:
    """Set torch's intra-op thread count; 0 leaves torch's default (all cores)."""
    if n < 0:
        raise ValueError(f"torch_threads must be >= 0, got {n}")
    if n > 0:
        torch.set_num_threads(n)
