"""One format for every timestamp tablesight writes: UTC, ISO 8601, whole seconds, `Z`."""

from __future__ import annotations

import time


def utc_now_iso(ts: float | None = None) -> str:
    """`ts` (default: now) as e.g. `2026-11-30T15:18:56Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts if ts is not None else time.time()))
