"""What a stored page record depends on beyond the job's options: the worker's settings that
change what a page yields. A record is reused by another job only when these agree, so a
worker restarted with other OCR, normalisation or refinement settings runs pages again
instead of serving records an older configuration wrote."""

from __future__ import annotations

from typing import Any

from worker.settings import Settings

# groups whose values change a page's tables (models are pinned separately, by id and sha256)
OUTPUT_GROUPS = ("detection", "structure", "embedded", "refine", "ocr", "normalise", "context", "flags")
# fields of those groups that change speed only: nodes that differ in them share records
SPEED_ONLY = frozenset({"embedded.threads", "ocr.threads", "ocr.ppocr_rec_batch_size"})


def output_settings(settings: Settings) -> dict[str, Any]:
    """The output-relevant settings as plain JSON-able data, by `group.field`."""
    out: dict[str, Any] = {}
    for group in OUTPUT_GROUPS:
        for field, value in getattr(settings, group).model_dump(mode="json").items():
            name = f"{group}.{field}"
            if name not in SPEED_ONLY:
                out[name] = value
    return out
