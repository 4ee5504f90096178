"""Lenient intake of structure objects and words: one bad box never costs the whole table.

Raw detector output (boxes decoded from centre and size) routinely pokes a few pixels past
the image edge, and replayed payloads come from other tools or from an older crop. So the
boxes are repaired or dropped one by one, never the table: coordinates outside the image are
clipped to it, non-finite, inverted or zero-area boxes are dropped, unknown labels ignored,
scores outside [0, 1] clamped. Each kind of repair is counted into one line of `repairs`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from worker.core.types import STRUCTURE_LABELS, BBox, StructureObject, Word


@dataclass(slots=True)
class Sanitised:
    """What survives intake, and one repair line per kind of fix (with its count)."""

    objects: list[StructureObject] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)


def _fix_box(box: BBox, bounds: BBox | None) -> tuple[BBox | None, str]:
    """(the usable box or None, what was done: '', 'clipped', 'non-finite', 'inverted', 'empty')."""
    if len(box) != 4 or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in box):
        return None, "non-finite"
    x0, y0, x1, y1 = (float(v) for v in box)
    if x1 < x0 or y1 < y0:
        return None, "inverted"
    if x1 == x0 or y1 == y0:
        return None, "empty"
    note = ""
    if bounds is not None:
        cx0, cy0 = min(max(x0, bounds[0]), bounds[2]), min(max(y0, bounds[1]), bounds[3])
        cx1, cy1 = min(max(x1, bounds[0]), bounds[2]), min(max(y1, bounds[1]), bounds[3])
        if (cx0, cy0, cx1, cy1) != (x0, y0, x1, y1):
            note = "clipped"
            x0, y0, x1, y1 = cx0, cy0, cx1, cy1
            if x1 <= x0 or y1 <= y0:
                return None, "outside"
    return (x0, y0, x1, y1), note


_WHY = {
    "clipped": "{n} {what} box(es) reaching outside the image clipped to it",
    "non-finite": "{n} {what}(s) with a non-finite box dropped",
    "inverted": "{n} {what}(s) with an inverted box dropped",
    "empty": "{n} {what}(s) with a zero-area box dropped",
    "outside": "{n} {what}(s) wholly outside the image dropped",
    "label": "{n} object(s) with an unknown label ignored",
    "score": "{n} object score(s) outside [0, 1] clamped",
    "bad score": "{n} object(s) with a non-finite score dropped",
}


def is_routine_repair(text: str) -> bool:
    """A repair that says nothing about the model's doubt: boxes decoded from centre and size
    routinely reach a pixel or two past the crop, and clipping them changes no structure."""
    return text.endswith("clipped to it")


def _bounds(image_size: tuple[float, float] | None) -> BBox:
    """The image, or the positive quadrant when its size is unknown (crop pixels are never negative)."""
    if image_size is None:
        return (0.0, 0.0, math.inf, math.inf)
    return (0.0, 0.0, float(image_size[0]), float(image_size[1]))


def sanitise(
    objects: list[StructureObject], words: list[Word], image_size: tuple[float, float] | None = None
) -> Sanitised:
    """Repair or drop each bad object and word on its own; the rest pass unchanged."""
    bounds = _bounds(image_size)
    out = Sanitised()
    counts: dict[str, Counter[str]] = {"object": Counter(), "word": Counter()}
    for o in objects:
        if o.label not in STRUCTURE_LABELS:
            counts["object"]["label"] += 1
            continue
        score = o.score
        if not isinstance(score, (int, float)) or not math.isfinite(score):
            counts["object"]["bad score"] += 1
            continue
        if not 0.0 <= score <= 1.0:
            counts["object"]["score"] += 1
            score = min(max(float(score), 0.0), 1.0)
        box, note = _fix_box(o.bbox, bounds)
        if note:
            counts["object"][note] += 1
        if box is None:
            continue
        out.objects.append(o if box == o.bbox and score == o.score else StructureObject(o.label, score, box))
    for w in words:
        box, note = _fix_box(w.bbox, bounds)
        if note:
            counts["word"][note] += 1
        if box is None:
            continue
        out.words.append(w if box == w.bbox else Word(w.text, box, w.confidence))
    for what, counter in counts.items():
        for key, n in sorted(counter.items()):
            out.repairs.append(_WHY[key].format(n=n, what=what))
    return out
