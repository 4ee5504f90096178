"""The structure-objects replay format (docs/architecture.md): validate untrusted JSON into core types.

Anything wrong in a payload (missing keys, NaN or inverted boxes, absurd sizes) becomes one
`ReplayError` with a message naming the place, so `tablesight rebuild` can print a line
instead of a traceback.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from worker.core.types import STRUCTURE_LABELS, BBox, StructureObject, Word

MAX_OBJECTS = 5_000  # the structure model emits at most 125
MAX_WORDS = 200_000
MAX_TEXT = 10_000


class ReplayError(ValueError):
    """A structure-objects payload that cannot be used, with the reason."""


@dataclass(slots=True)
class ReplayInput:
    image_size: tuple[float, float] | None
    objects: list[StructureObject]
    words: list[Word]
    image: str | None


def _bbox(value: Any, where: str) -> BBox:
    if not isinstance(value, (list, tuple)) or len(value) != 4:
        raise ReplayError(f"{where}: bbox must be a list of 4 numbers")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ReplayError(f"{where}: bbox has a non-finite or non-numeric value {v!r}")
        if v < 0:
            raise ReplayError(f"{where}: bbox has a negative coordinate {v!r}")
        out.append(float(v))
    if out[2] < out[0] or out[3] < out[1]:
        raise ReplayError(f"{where}: bbox must have x0 <= x1 and y0 <= y1, got {out}")
    return (out[0], out[1], out[2], out[3])


def parse_payload(obj: Any) -> ReplayInput:
    """Check and convert one payload `{"image_size", "objects", "words"?, "image"?}`."""
    if not isinstance(obj, dict):
        raise ReplayError(f"expected a JSON object, got {type(obj).__name__}")
    if "objects" not in obj:
        raise ReplayError("missing key 'objects'")
    raw_objects = obj["objects"]
    if not isinstance(raw_objects, list):
        raise ReplayError("'objects' must be a list")
    if len(raw_objects) > MAX_OBJECTS:
        raise ReplayError(f"too many objects: {len(raw_objects)} (limit {MAX_OBJECTS})")
    size = obj.get("image_size")
    image_size = None
    if size is not None:
        if (
            not isinstance(size, (list, tuple))
            or len(size) != 2
            or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0 for v in size
            )
        ):
            raise ReplayError("'image_size' must be [width, height] with positive numbers")
        image_size = (float(size[0]), float(size[1]))
    objects = []
    for i, o in enumerate(raw_objects):
        where = f"objects[{i}]"
        if not isinstance(o, dict):
            raise ReplayError(f"{where}: expected an object")
        for key in ("label", "score", "bbox"):
            if key not in o:
                raise ReplayError(f"{where}: missing key '{key}'")
        if o["label"] not in STRUCTURE_LABELS:
            raise ReplayError(f"{where}: unknown label {str(o['label'])[:60]!r}")
        score = o["score"]
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
            raise ReplayError(f"{where}: score must be a number in [0, 1]")
        objects.append(StructureObject(o["label"], float(score), _bbox(o["bbox"], where)))
    raw_words = obj.get("words") or []
    if not isinstance(raw_words, list):
        raise ReplayError("'words' must be a list")
    if len(raw_words) > MAX_WORDS:
        raise ReplayError(f"too many words: {len(raw_words)} (limit {MAX_WORDS})")
    words = []
    for i, w in enumerate(raw_words):
        where = f"words[{i}]"
        if not isinstance(w, dict) or not isinstance(w.get("text"), str):
            raise ReplayError(f"{where}: expected an object with a string 'text'")
        if len(w["text"]) > MAX_TEXT:
            raise ReplayError(f"{where}: text longer than {MAX_TEXT} characters")
        conf = w.get("confidence")
        if conf is not None and (
            isinstance(conf, bool) or not isinstance(conf, (int, float)) or not math.isfinite(conf)
        ):
            raise ReplayError(f"{where}: confidence must be a number")
        words.append(Word(w["text"], _bbox(w.get("bbox"), where), None if conf is None else float(conf)))
    image = obj.get("image")
    if image is not None and not isinstance(image, str):
        raise ReplayError("'image' must be a path string")
    return ReplayInput(image_size, objects, words, image)


def payload(
    image_size: tuple[float, float], objects: list[StructureObject], words: list[Word], image: str | None = None
) -> dict[str, Any]:
    """The inverse of parse_payload: what the per-table JSON stores for replay."""
    out: dict[str, Any] = {
        "image_size": [image_size[0], image_size[1]],
        "objects": [
            {"label": o.label, "score": round(o.score, 5), "bbox": [round(v, 2) for v in o.bbox]} for o in objects
        ],
        "words": [
            {
                "text": w.text,
                "bbox": [round(v, 2) for v in w.bbox],
                **({"confidence": round(w.confidence, 4)} if w.confidence is not None else {}),
            }
            for w in words
        ],
    }
    if image is not None:
        out["image"] = image
    return out
