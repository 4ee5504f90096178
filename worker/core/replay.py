"""The structure replay format: untrusted JSON into core types, strict on shape only
(docs/architecture.md, 'The replay format').

A payload holds what the structure model said about one crop plus the words: Table
Transformer objects (`objects`), or for the embedded engine (`"engine": "embedded"`) its
structure tokens with cell boxes (`tokens`). A payload without `engine` is Table Transformer's.
`FORMATS` is the core's half of the engine registry (worker.engines): per engine name, whether
its payload carries tokens and which pure rules rebuild its grid. The engine names are spelt
here and nowhere else.

A payload that is not a structure payload at all (not an object, no `objects` list, values
of the wrong type, absurd sizes) becomes one `ReplayError` naming the place, so `tablesight
rebuild` can print a line instead of a traceback. Bad values inside well-typed objects (a box
a little outside the image, NaN, inverted, an unknown label) pass through: reconstruction
repairs or drops those one by one (`worker.core.sanitise`) and records it, so one bad object
never loses the table.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from worker.core.box_text import lift_box_text
from worker.core.reconstruct import reconstruct
from worker.core.refine import RefineRules
from worker.core.token_grid import StructureToken, token_grid
from worker.core.types import BBox, RulingLines, StructureObject, TableGrid, Word

TATR = "tatr"
EMBEDDED = "embedded"
DEFAULT_FORMAT = TATR  # a payload without "engine" (written before engines existed)

MAX_OBJECTS = 5_000  # the structure model emits at most 125
MAX_WORDS = 200_000
MAX_TEXT = 10_000
MAX_LINES = 10_000


class ReplayError(ValueError):
    """A structure-objects payload that cannot be used, with the reason."""


@dataclass(slots=True)
class ReplayInput:
    image_size: tuple[float, float] | None
    objects: list[StructureObject]
    words: list[Word]
    image: str | None
    lines: RulingLines | None = None
    engine: str = DEFAULT_FORMAT
    tokens: list[StructureToken] = field(default_factory=list)
    # cell texts corrected after the grid was built (glyph repairs, readings the totals chose):
    # {"row", "col", "from", "to", "rule"} each, applied where the cell still reads `from`
    corrections: list[dict[str, Any]] = field(default_factory=list)


GridRule = Callable[[ReplayInput, "dict[str, float] | None", float, "RefineRules | None"], TableGrid]


@dataclass(frozen=True, slots=True)
class PayloadFormat:
    """One engine's stored structure payload: does it carry tokens, and which core rules rebuild it."""

    name: str
    uses_tokens: bool
    grid: GridRule


def _objects_grid(
    item: ReplayInput, thresholds: dict[str, float] | None, duplicate_overlap: float, refine: RefineRules | None
) -> TableGrid:
    return reconstruct(item.objects, item.words, item.image_size, thresholds, duplicate_overlap, item.lines, refine)


def _tokens_grid(
    item: ReplayInput, thresholds: dict[str, float] | None, duplicate_overlap: float, refine: RefineRules | None
) -> TableGrid:
    return token_grid(item.tokens, item.words, item.image_size, item.lines)


FORMATS: dict[str, PayloadFormat] = {
    TATR: PayloadFormat(TATR, uses_tokens=False, grid=_objects_grid),
    EMBEDDED: PayloadFormat(EMBEDDED, uses_tokens=True, grid=_tokens_grid),
}


def register_format(fmt: PayloadFormat) -> None:
    """Make payloads with `"engine": fmt.name` readable (a new engine's replay, pure like these)."""
    FORMATS[fmt.name] = fmt


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _bbox(value: Any, where: str) -> BBox:
    """Four numbers (NaN, negative or inverted allowed here: reconstruction repairs or drops them)."""
    if not isinstance(value, (list, tuple)) or len(value) != 4 or not all(_number(v) for v in value):
        raise ReplayError(f"{where}: bbox must be a list of 4 numbers")
    return (float(value[0]), float(value[1]), float(value[2]), float(value[3]))


def _lines(value: Any) -> RulingLines | None:
    """Optional `{"h": [y, ...], "v": [x, ...]}`: ruling-line positions found on the crop."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ReplayError('\'lines\' must be an object {"h": [...], "v": [...]}')
    out: dict[str, tuple[float, ...]] = {}
    for key in ("h", "v"):
        raw = value.get(key) or []
        if not isinstance(raw, list) or not all(_number(v) for v in raw):
            raise ReplayError(f"'lines.{key}' must be a list of numbers")
        if len(raw) > MAX_LINES:
            raise ReplayError(f"too many lines in 'lines.{key}': {len(raw)} (limit {MAX_LINES})")
        out[key] = tuple(float(v) for v in raw)
    return RulingLines(out["h"], out["v"], _runs(value, "h_runs", len(out["h"])), _runs(value, "v_runs", len(out["v"])))


def _runs(value: dict[str, Any], key: str, rules: int) -> tuple[tuple[tuple[float, float], ...], ...]:
    """Optional `lines.h_runs` / `lines.v_runs`: per rule, its drawn stretches `[[from, to], ...]`."""
    raw = value.get(key)
    if raw is None:
        return ()
    if not isinstance(raw, list) or len(raw) != rules:
        raise ReplayError(f"'lines.{key}' must be a list with one entry per rule ({rules})")
    out = []
    for rule in raw:
        if not isinstance(rule, list) or not all(
            isinstance(r, list) and len(r) == 2 and all(_number(v) for v in r) for r in rule
        ):
            raise ReplayError(f"'lines.{key}' entries must be lists of [from, to] pairs")
        out.append(tuple((float(a), float(b)) for a, b in rule))
    return tuple(out)


def parse_payload(obj: Any) -> ReplayInput:
    """Check and convert one payload `{"image_size", "objects", "words"?, "image"?}`."""
    if not isinstance(obj, dict):
        raise ReplayError(f"expected a JSON object, got {type(obj).__name__}")
    engine = obj.get("engine", DEFAULT_FORMAT)
    fmt = FORMATS.get(engine) if isinstance(engine, str) else None
    if fmt is None:
        raise ReplayError(f"unknown engine {str(engine)[:40]!r} (expected one of {', '.join(FORMATS)})")
    tokens = _tokens(obj.get("tokens")) if fmt.uses_tokens else []
    if fmt.uses_tokens and "objects" not in obj:
        obj = {**obj, "objects": []}
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
        if not isinstance(o["label"], str):
            raise ReplayError(f"{where}: label must be a string")
        if not _number(o["score"]):
            raise ReplayError(f"{where}: score must be a number")
        # an unknown label or a score outside [0, 1] is ignored or clamped by reconstruction
        objects.append(StructureObject(o["label"][:100], float(o["score"]), _bbox(o["bbox"], where)))
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
        if conf is not None and not _number(conf):
            raise ReplayError(f"{where}: confidence must be a number")
        if conf is not None and not math.isfinite(conf):
            conf = None  # an unknown confidence, not a reason to lose the word
        words.append(Word(w["text"], _bbox(w.get("bbox"), where), None if conf is None else float(conf)))
    image = obj.get("image")
    if image is not None and not isinstance(image, str):
        raise ReplayError("'image' must be a path string")
    corrections = _corrections(obj.get("corrections"))
    return ReplayInput(image_size, objects, words, image, _lines(obj.get("lines")), engine, tokens, corrections)


def _corrections(raw: Any) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_WORDS:
        raise ReplayError("'corrections' must be a list")
    out = []
    for i, c in enumerate(raw):
        ok = isinstance(c, dict) and all(
            isinstance(c.get(k), int) and not isinstance(c.get(k), bool) for k in ("row", "col")
        )
        if not ok or not all(isinstance(c.get(k), str) and len(c[k]) <= MAX_TEXT for k in ("from", "to")):
            raise ReplayError(f"corrections[{i}]: expected {{row, col, from, to}} with integer row/col and text")
        out.append({"row": c["row"], "col": c["col"], "from": c["from"], "to": c["to"], "rule": str(c.get("rule", ""))})
    return out


def _tokens(raw: Any) -> list[StructureToken]:
    if not isinstance(raw, list):
        raise ReplayError("an embedded-engine payload needs 'tokens', a list")
    if len(raw) > MAX_OBJECTS * 4:
        raise ReplayError(f"too many tokens: {len(raw)} (limit {MAX_OBJECTS * 4})")
    out = []
    for i, t in enumerate(raw):
        where = f"tokens[{i}]"
        if not isinstance(t, dict) or not isinstance(t.get("token"), str) or len(t["token"]) > 40:
            raise ReplayError(f"{where}: expected an object with a short string 'token'")
        score = t.get("score", 1.0)
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
            raise ReplayError(f"{where}: score must be a number in [0, 1]")
        box = _bbox(t["bbox"], where) if t.get("bbox") is not None else None
        out.append(StructureToken(t["token"], float(score), box))
    return out


def payload(
    image_size: tuple[float, float],
    objects: list[StructureObject],
    words: list[Word],
    image: str | None = None,
    lines: RulingLines | None = None,
    tokens: list[StructureToken] | None = None,
    engine: str | None = None,
    corrections: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The inverse of parse_payload: what the per-table JSON stores for replay.

    `engine` names the payload's format (default: Table Transformer's, or with `tokens` the
    first format that carries tokens); a Table Transformer payload stores no `engine` key.
    `corrections` are cell texts changed after the grid was built (see ReplayInput).
    """
    if engine is None:
        engine = next((f.name for f in FORMATS.values() if f.uses_tokens), DEFAULT_FORMAT) if tokens else DEFAULT_FORMAT
    out: dict[str, Any] = {} if engine == DEFAULT_FORMAT else {"engine": engine}
    if tokens is not None:
        out["tokens"] = [
            {
                "token": t.token,
                "score": round(t.score, 5),
                **({"bbox": [round(v, 2) for v in t.bbox]} if t.bbox is not None else {}),
            }
            for t in tokens
        ]
    out |= {
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
    if lines is not None:
        out["lines"] = {"h": [round(v, 2) for v in lines.h], "v": [round(v, 2) for v in lines.v]}
        for key, runs in (("h_runs", lines.h_runs), ("v_runs", lines.v_runs)):
            if runs:
                out["lines"][key] = [[[round(a, 2), round(b, 2)] for a, b in rule] for rule in runs]
    if corrections:
        out["corrections"] = [
            {"row": c["row"], "col": c["col"], "from": c["from"], "to": c["to"], "rule": c["rule"]} for c in corrections
        ]
    return out


def replay_grid(
    item: ReplayInput,
    thresholds: dict[str, float] | None = None,
    duplicate_overlap: float = 0.5,
    refine: RefineRules | None = None,
) -> TableGrid:
    """The grid a payload stands for, rebuilt by its engine's core rules, corrections applied."""
    grid = FORMATS[item.engine].grid(item, thresholds, duplicate_overlap, refine)
    lift_box_text(grid, item.words, item.lines)  # as the pipeline's table stage does
    apply_corrections(grid, item.corrections)
    return grid


def apply_corrections(grid: TableGrid, corrections: list[dict[str, Any]]) -> int:
    """Set each corrected cell's text where the cell at (row, col) still reads `from`; how many."""
    cells = {(c.row, c.col): c for c in grid.cells}
    done = 0
    for fix in corrections:
        cell = cells.get((fix["row"], fix["col"]))
        if cell is not None and cell.text == fix["from"]:
            cell.text = fix["to"]
            done += 1
    return done
