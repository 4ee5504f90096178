"""Controlled, seeded noise on oracle structure objects, to imitate a real structure model.

A model's errors are of a few kinds: boxes a little off, the same row or column found twice
(the copy with a lower score), a row or column missed, a merged cell missed or invented, and
scores spread below 1. Each level fixes how much of each (`NoiseLevel`, all in one table,
`LEVELS`), and the same (seed, table key, level) always gives the same objects, so a change in
score between two runs is the code's and not the dice's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from worker.core.types import COLUMN, COLUMN_HEADER, ROW, SPANNING_CELL, TABLE, BBox, StructureObject


@dataclass(frozen=True, slots=True)
class NoiseLevel:
    """How much of each kind of model error to add.

    jitter: standard deviation of each box edge's shift, as a fraction of the object's own
    height (row edges) or width (column edges), at most the median one; duplicate/drop: probability per row and per
    column; drop_span: probability per spanning cell; false_spans: invented spanning cells
    per 10 grid rows (each merges two neighbouring slots); low_score: probability that a true
    object scores in `low_score_range` instead of `score_range`; duplicates score in
    `duplicate_score_range`. Three kinds a model makes on real tables and the levels above lack:
    merge_rows: probability per row that it comes out merged with the next one (one box over
    both); drop_header: probability per table that one header row is missed; shift_rows: every
    row box of the table moved, up or down, by this range of shares of its height (a boundary
    half a row off runs through the text).
    """

    name: str
    jitter: float = 0.0
    duplicate: float = 0.0
    drop: float = 0.0
    drop_span: float = 0.0
    false_spans: float = 0.0
    low_score: float = 0.0
    score_range: tuple[float, float] = (1.0, 1.0)
    low_score_range: tuple[float, float] = (0.55, 0.85)
    duplicate_score_range: tuple[float, float] = (0.3, 0.75)
    merge_rows: float = 0.0
    drop_header: float = 0.0
    shift_rows: tuple[float, float] = (0.0, 0.0)


LEVELS: dict[str, NoiseLevel] = {
    "none": NoiseLevel("none"),
    "low": NoiseLevel(
        "low", jitter=0.05, duplicate=0.05, drop_span=0.03, false_spans=0.1, low_score=0.1, score_range=(0.9, 1.0)
    ),
    "medium": NoiseLevel(
        "medium",
        jitter=0.10,
        duplicate=0.08,
        drop=0.01,
        drop_span=0.1,
        false_spans=0.3,
        low_score=0.15,
        score_range=(0.8, 1.0),
    ),
    "high": NoiseLevel(
        "high",
        jitter=0.18,
        duplicate=0.15,
        drop=0.03,
        drop_span=0.25,
        false_spans=0.8,
        low_score=0.3,
        score_range=(0.7, 1.0),
    ),
}
# One kind of error each, so a report can say which kind costs what (`kind:` levels).
KINDS: dict[str, NoiseLevel] = {
    "kind:merged-rows": NoiseLevel("kind:merged-rows", merge_rows=0.15, score_range=(0.8, 1.0)),
    "kind:dropped-header": NoiseLevel("kind:dropped-header", drop_header=1.0, score_range=(0.8, 1.0)),
    "kind:half-row-shift": NoiseLevel("kind:half-row-shift", shift_rows=(0.3, 0.5), score_range=(0.8, 1.0)),
}
LEVELS.update(KINDS)
LEVEL_NAMES: tuple[str, ...] = tuple(LEVELS)


def get_level(level: str | NoiseLevel) -> NoiseLevel:
    """The level itself, or the named one of `LEVELS` (ValueError naming the known ones)."""
    if isinstance(level, NoiseLevel):
        return level
    try:
        return LEVELS[level]
    except KeyError:
        raise ValueError(f"unknown noise level {level!r}; known: {', '.join(LEVELS)}") from None


def make_rng(seed: int, key: str, level: NoiseLevel | str) -> random.Random:
    """A generator fixed by (seed, table key, level name), independent of hashing and order."""
    name = level.name if isinstance(level, NoiseLevel) else level
    return random.Random(f"{seed}:{key}:{name}")


def add_noise(objects: list[StructureObject], level: str | NoiseLevel, rng: random.Random) -> list[StructureObject]:
    """A noisy copy of the oracle objects; the input is left as it is."""
    lv = get_level(level)
    if lv == NoiseLevel(lv.name):  # no noise of any kind: return the oracle unchanged
        return list(objects)
    rows = sorted((o for o in objects if o.label == ROW), key=lambda o: o.bbox[1])
    rows = _row_kinds(rows, [o.bbox for o in objects if o.label == COLUMN_HEADER], lv, rng)
    cols = sorted((o for o in objects if o.label == COLUMN), key=lambda o: o.bbox[0])
    spans = [o for o in objects if o.label == SPANNING_CELL]
    others = [o for o in objects if o.label not in (ROW, COLUMN, SPANNING_CELL)]
    table = next((o.bbox for o in others if o.label == TABLE), None)
    row_h = _median([o.bbox[3] - o.bbox[1] for o in rows]) or 10.0
    col_w = _median([o.bbox[2] - o.bbox[0] for o in cols]) or 50.0

    out: list[StructureObject] = []
    for o in others:
        out.append(_jittered(o, lv, rng, row_h * 0.5, col_w * 0.2, _score(lv, rng)))
    for band, vertical in ((rows, False), (cols, True)):
        for o in band:
            w, h = o.bbox[2] - o.bbox[0], o.bbox[3] - o.bbox[1]
            # edges across the band scale with its size, capped at the typical one (a wide
            # column's edge error does not grow past its narrow neighbour); the long edges
            # with a slot's size
            dx, dy = (min(w, col_w), row_h * 0.5) if vertical else (col_w * 0.3, min(h, row_h))
            if rng.random() >= lv.drop:
                out.append(_jittered(o, lv, rng, dy, dx, _score(lv, rng)))
            if rng.random() < lv.duplicate:
                # a second detection of the same band, shifted towards a neighbour
                shift = rng.uniform(-0.35, 0.35) * (dx if vertical else dy)
                moved = _shift(o.bbox, shift, vertical)
                copy = StructureObject(o.label, round(rng.uniform(*lv.duplicate_score_range), 4), moved)
                out.append(_jittered(copy, lv, rng, dy, dx, copy.score))
    for o in spans:
        if rng.random() < lv.drop_span:
            continue
        out.append(_jittered(o, lv, rng, row_h, col_w, _score(lv, rng)))
    out += _false_spans(rows, cols, spans, lv, rng)
    if table is not None:
        out = [StructureObject(o.label, o.score, _clip_to(o.bbox, table, row_h, col_w)) for o in out]
    return out


def _row_kinds(
    rows: list[StructureObject], headers: list[BBox], lv: NoiseLevel, rng: random.Random
) -> list[StructureObject]:
    """Merged neighbouring rows, a missed header row, all rows shifted: rows sorted top down."""
    if lv.drop_header and rows and rng.random() < lv.drop_header:
        in_header = [
            i for i, o in enumerate(rows) if any(h[1] <= (o.bbox[1] + o.bbox[3]) / 2 <= h[3] for h in headers)
        ] or [0]
        del rows[rng.choice(in_header)]
    if lv.merge_rows:
        merged: list[StructureObject] = []
        i = 0
        while i < len(rows):
            o = rows[i]
            if i + 1 < len(rows) and rng.random() < lv.merge_rows:
                b = rows[i + 1].bbox
                o = StructureObject(o.label, o.score, (min(o.bbox[0], b[0]), o.bbox[1], max(o.bbox[2], b[2]), b[3]))
                i += 1
            merged.append(o)
            i += 1
        rows = merged
    lo, hi = lv.shift_rows
    if hi > 0:
        sign = rng.choice((-1.0, 1.0))
        share = rng.uniform(lo, hi)
        rows = [
            StructureObject(o.label, o.score, _shift(o.bbox, sign * share * (o.bbox[3] - o.bbox[1]), False))
            for o in rows
        ]
    return rows


def _score(lv: NoiseLevel, rng: random.Random) -> float:
    if lv.low_score and rng.random() < lv.low_score:
        return round(rng.uniform(*lv.low_score_range), 4)
    lo, hi = lv.score_range
    return round(rng.uniform(lo, hi), 4) if hi > lo else lo


def _jittered(
    o: StructureObject, lv: NoiseLevel, rng: random.Random, dy_scale: float, dx_scale: float, score: float
) -> StructureObject:
    """Each edge moved by a normal draw scaled by the object's size; never inside out."""
    x0, y0, x1, y1 = o.bbox
    if lv.jitter:
        x0 += rng.gauss(0, lv.jitter) * dx_scale
        x1 += rng.gauss(0, lv.jitter) * dx_scale
        y0 += rng.gauss(0, lv.jitter) * dy_scale
        y1 += rng.gauss(0, lv.jitter) * dy_scale
    if x1 <= x0:
        x0, x1 = (x0 + x1) / 2 - 0.5, (x0 + x1) / 2 + 0.5
    if y1 <= y0:
        y0, y1 = (y0 + y1) / 2 - 0.5, (y0 + y1) / 2 + 0.5
    return StructureObject(o.label, score, (x0, y0, x1, y1))


def _shift(b: BBox, d: float, vertical: bool) -> BBox:
    return (b[0] + d, b[1], b[2] + d, b[3]) if vertical else (b[0], b[1] + d, b[2], b[3] + d)


def _false_spans(
    rows: list[StructureObject],
    cols: list[StructureObject],
    spans: list[StructureObject],
    lv: NoiseLevel,
    rng: random.Random,
) -> list[StructureObject]:
    """Spanning cells over two neighbouring slots that the ground truth does not merge."""
    if not lv.false_spans or not rows or not cols or (len(rows) < 2 and len(cols) < 2):
        return []
    expected = lv.false_spans * len(rows) / 10
    n = int(expected) + (1 if rng.random() < expected - int(expected) else 0)
    out: list[StructureObject] = []
    for _ in range(n):
        for _attempt in range(10):
            i, j = rng.randrange(len(rows)), rng.randrange(len(cols))
            down = len(cols) < 2 or (len(rows) >= 2 and rng.random() < 0.5)
            i2, j2 = (min(i + 1, len(rows) - 1), j) if down else (i, min(j + 1, len(cols) - 1))
            if (i2, j2) == (i, j):
                continue
            box = (cols[j].bbox[0], rows[i].bbox[1], cols[j2].bbox[2], rows[i2].bbox[3])
            if any(_overlaps(box, s.bbox) for s in spans):
                continue
            score = round(rng.uniform(0.5, 0.85), 4)
            out.append(
                _jittered(
                    StructureObject(SPANNING_CELL, score, box),
                    lv,
                    rng,
                    rows[i].bbox[3] - rows[i].bbox[1],
                    cols[j].bbox[2] - cols[j].bbox[0],
                    score,
                )
            )
            break
    return out


def _overlaps(a: BBox, b: BBox) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def _clip_to(b: BBox, table: BBox, row_h: float, col_w: float) -> BBox:
    """Keep boxes near the table: a model does not put a row far outside its table."""
    x0 = max(b[0], table[0] - col_w)
    y0 = max(b[1], table[1] - row_h)
    x1 = min(b[2], table[2] + col_w)
    y1 = min(b[3], table[3] + row_h)
    if x1 <= x0 or y1 <= y0:
        return b
    return (x0, y0, x1, y1)


def _median(values: list[float]) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2
