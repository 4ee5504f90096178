"""Handing the C heap's freed pages back to the system between page groups.

A page's work allocates large short-lived buffers (page images, numpy copies, onnxruntime's
tensors) from several threads. glibc's malloc keeps what they free in its per-thread arenas
once its dynamic mmap threshold has risen past their size, so a worker's resident memory
stayed near its peak after the pages it had read although no page's data was still referenced.
`malloc_trim(0)` after each group returns those free pages (12 generated pages: 762 MiB at the
end against 1038 without; docs/speed.md, Round 5). Elsewhere than glibc this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS)
        return None
    return trim


def release_freed_memory() -> bool:
    """Return the heap's free pages to the system; False where the C library cannot."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
