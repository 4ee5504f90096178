"""Spanning cells on the grid: every slot claimed once, every span a contiguous rectangle.

The reference post-processing resolves overlapping spans by shrinking lists of rows and
columns without updating boxes, so a slot can end up claimed twice or a span can skip a row.
Here spans are rectangles of slot indices, placed best-first; a later span that collides
is trimmed edge by edge (staying a rectangle) or dropped, and each repair is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

from worker.core.bands import Band


@dataclass(slots=True)
class SpanRect:
    """Inclusive slot ranges r0..r1, c0..c1 of one merged cell."""

    r0: int
    r1: int
    c0: int
    c1: int
    score: float = 1.0
    projected: bool = False

    @property
    def n_slots(self) -> int:
        return (self.r1 - self.r0 + 1) * (self.c1 - self.c0 + 1)

    def slots(self) -> list[tuple[int, int]]:
        return [(r, c) for r in range(self.r0, self.r1 + 1) for c in range(self.c0, self.c1 + 1)]


def _trim(rect: SpanRect, taken: set[tuple[int, int]]) -> SpanRect | None:
    """Shave off the edge row or column with the most taken slots until none is left.

    Returns None when fewer than half of the original slots survive or only one slot is
    left: such a span no longer says what the model meant.
    """
    r = SpanRect(rect.r0, rect.r1, rect.c0, rect.c1, rect.score, rect.projected)
    while r.n_slots > 1:
        clashes = [s for s in r.slots() if s in taken]
        if not clashes:
            break
        edges = {
            "top": sum(1 for s in clashes if s[0] == r.r0) if r.r1 > r.r0 else -1,
            "bottom": sum(1 for s in clashes if s[0] == r.r1) if r.r1 > r.r0 else -1,
            "left": sum(1 for s in clashes if s[1] == r.c0) if r.c1 > r.c0 else -1,
            "right": sum(1 for s in clashes if s[1] == r.c1) if r.c1 > r.c0 else -1,
        }
        edge = max(edges, key=lambda k: edges[k])
        if edges[edge] <= 0:
            return None
        if edge == "top":
            r.r0 += 1
        elif edge == "bottom":
            r.r1 -= 1
        elif edge == "left":
            r.c0 += 1
        else:
            r.c1 -= 1
    if r.n_slots <= 1 or 2 * r.n_slots < rect.n_slots or any(s in taken for s in r.slots()):
        return None
    return r


def place_spans(
    fixed: list[SpanRect], candidates: list[SpanRect], n_rows: int, n_cols: int
) -> tuple[list[SpanRect], list[str]]:
    """Place `fixed` spans first, then `candidates` in the order given (best first)."""
    taken: set[tuple[int, int]] = set()
    placed: list[SpanRect] = []
    repairs: list[str] = []
    trimmed = dropped = 0
    for rect in fixed:
        placed.append(rect)
        taken.update(rect.slots())
    for rect in candidates:
        rect = SpanRect(
            max(rect.r0, 0),
            min(rect.r1, n_rows - 1),
            max(rect.c0, 0),
            min(rect.c1, n_cols - 1),
            rect.score,
            rect.projected,
        )
        if rect.r1 < rect.r0 or rect.c1 < rect.c0 or rect.n_slots <= 1:
            continue  # crosses no grid line: an ordinary cell
        if any(s in taken for s in rect.slots()):
            fixed_rect = _trim(rect, taken)
            if fixed_rect is None:
                dropped += 1
                continue
            trimmed += 1
            rect = fixed_rect
        placed.append(rect)
        taken.update(rect.slots())
    if trimmed:
        repairs.append(f"{trimmed} overlapping spanning cell(s) trimmed")
    if dropped:
        repairs.append(f"{dropped} overlapping spanning cell(s) dropped")
    return placed, repairs


def join_band(
    rects: list[SpanRect], bands: list[Band], k: int, into: int, axis: str
) -> tuple[list[SpanRect], list[Band]]:
    """Band `k` (a row for axis "row", else a column) joined to its neighbour `into` (k - 1 or
    k + 1), so that no word in it is lost: cells of band `k` alone are dropped, spans over it
    are one band shorter, and the bands after it move back by one."""
    out = []
    for r in rects:
        lo, hi = (r.r0, r.r1) if axis == "row" else (r.c0, r.c1)
        if lo == hi == k:
            continue
        lo, hi = (lo - 1 if lo > k else lo), (hi - 1 if hi >= k else hi)
        out.append(
            SpanRect(lo, hi, r.c0, r.c1, r.score, r.projected)
            if axis == "row"
            else SpanRect(r.r0, r.r1, lo, hi, r.score, r.projected)
        )
    at = min(k, into)
    merged = Band(bands[at].lo, bands[at + 1].hi, max(bands[at].score, bands[at + 1].score))
    return out, [*bands[:at], merged, *bands[at + 2 :]]
