"""Spanning cells checked against the words: a merge the text contradicts is undone, a merge
the text shows is made.

A structure model both invents spans (two neighbouring cells read as one) and misses them
(a label centred over two columns). The words tell: two cells' texts separated by a gap as
wide as the table's usual gap between columns (rows) are two cells; one run of text lying
across a column boundary, with nothing else in the slots it touches, is one cell. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from worker.core.bands import Band
from worker.core.refine import Mark, clusters, marks_for, typical_gap_of
from worker.core.spans import SpanRect
from worker.core.types import Word

# A gap at least this share of the usual gap between bands separates two cells' texts.
SEPARATE_GAP = 0.6
# A word lies across a boundary when at least this share of its width is on each side.
ACROSS = 0.2


def _inside(w: Word, x0: float, y0: float, x1: float, y1: float) -> bool:
    cx, cy = (w.bbox[0] + w.bbox[2]) / 2, (w.bbox[1] + w.bbox[3]) / 2
    return x0 <= cx < x1 and y0 <= cy < y1


def _separated(words: Sequence[Word], pos: float, axis: str, gap: float) -> bool:
    """Text on both sides of `pos` with a wide gap between, and no word across it."""
    lo_i, hi_i = (0, 2) if axis == "x" else (1, 3)
    before = [w for w in words if w.bbox[hi_i] <= pos]
    after = [w for w in words if w.bbox[lo_i] >= pos]
    if len(before) + len(after) < len(words) or not before or not after:
        return False
    if axis == "y":
        first = min(after, key=lambda w: (w.bbox[1], w.bbox[0]))
        if first.text.strip()[:1].islower():  # a wrapped phrase going on
            return False
    need = SEPARATE_GAP * gap
    if axis == "x":  # wider than a space between words of one phrase (about half a text height)
        heights = sorted(w.bbox[3] - w.bbox[1] for w in words)
        need = max(need, heights[len(heights) // 2])
    return min(w.bbox[lo_i] for w in after) - max(w.bbox[hi_i] for w in before) >= need


def gaps(rows: list[Band], cols: list[Band], words: Sequence[Word]) -> tuple[float, float]:
    """The usual whitespace between neighbouring rows' and columns' text."""
    pairs = [(w.bbox, w.text) for w in words]
    return (
        typical_gap_of(rows, clusters(marks_for(pairs, "y", shrink=0.1))),
        typical_gap_of(cols, clusters(marks_for(pairs, "x"))),
    )


def drop_contradicted(
    spans: list[SpanRect], rows: list[Band], cols: list[Band], words: Sequence[Word], row_gap: float, col_gap: float
) -> tuple[list[SpanRect], int]:
    """Spans whose slots hold texts separated like two cells' are left out; returns the rest
    and how many were left out."""
    kept: list[SpanRect] = []
    dropped = 0
    for s in spans:
        x0, x1, y0, y1 = cols[s.c0].lo, cols[s.c1].hi, rows[s.r0].lo, rows[s.r1].hi
        inside = [w for w in words if _inside(w, x0, y0, x1, y1)]
        split = any(_separated(inside, cols[c].hi, "x", col_gap) for c in range(s.c0, s.c1)) or any(
            _separated(inside, rows[r].hi, "y", row_gap) for r in range(s.r0, s.r1)
        )
        if split:
            dropped += 1
        else:
            kept.append(s)
    return kept, dropped


def spans_from_text(
    rows: list[Band], cols: list[Band], words: Sequence[Word], col_gap: float, taken: set[tuple[int, int]]
) -> list[SpanRect]:
    """One-row spans where a run of text lies across column boundaries and the slots it
    touches hold nothing else. A boundary crossed this way in more than a quarter of the
    rows with text is a misplaced boundary, not a set of spans: left alone."""
    if len(cols) < 2 or not words:
        return []
    by_row: dict[int, list[Word]] = {}
    for w in words:
        cy = (w.bbox[1] + w.bbox[3]) / 2
        r = next((i for i, b in enumerate(rows) if b.lo <= cy < b.hi), None)
        if r is not None:
            by_row.setdefault(r, []).append(w)
    found: list[tuple[int, int, int]] = []
    crossings: dict[int, int] = {}
    for r, ws in by_row.items():
        marks = [Mark(w.bbox[0], w.bbox[2], 0.0) for w in ws]
        runs = _phrases(clusters(marks), SEPARATE_GAP * col_gap)
        for lo, hi in runs:
            phrase = [w for w in ws if w.bbox[0] >= lo - 0.5 and w.bbox[2] <= hi + 0.5]
            if not any(_across(w, b.hi) for w in phrase for b in cols[:-1]):
                continue  # only a word lying across a boundary shows a span; a space there may not
            touched = [
                c
                for c, b in enumerate(cols)
                if min(hi, b.hi) - max(lo, b.lo) >= ACROSS * min(hi - lo, b.size) and min(hi, b.hi) > max(lo, b.lo)
            ]
            if len(touched) < 2:
                continue
            c0, c1 = touched[0], touched[-1]
            others = [w for w in ws if not (w.bbox[0] >= lo - 0.5 and w.bbox[2] <= hi + 0.5)]
            if any(cols[c0].lo <= (w.bbox[0] + w.bbox[2]) / 2 < cols[c1].hi for w in others):
                continue
            found.append((r, c0, c1))
            for c in range(c0, c1):
                crossings[c] = crossings.get(c, 0) + 1
    limit = max(1, len(by_row) // 4)
    out = []
    for r, c0, c1 in found:
        if any(crossings[c] > limit for c in range(c0, c1)):
            continue
        if any((r, c) in taken for c in range(c0, c1 + 1)):
            continue
        out.append(SpanRect(r, r, c0, c1, 0.5))
    return out


def _across(w: Word, x: float) -> bool:
    width = w.bbox[2] - w.bbox[0]
    return width > 0 and min(x - w.bbox[0], w.bbox[2] - x) >= ACROSS * width


def _phrases(runs: list[tuple[float, float]], max_gap: float) -> list[tuple[float, float]]:
    """Runs of words joined across gaps narrower than a column gap: one phrase each."""
    out: list[list[float]] = []
    for a, b in runs:
        if out and a - out[-1][1] < max_gap:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]
