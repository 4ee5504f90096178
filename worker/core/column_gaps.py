"""Column boundaries moved off the text they cut, into the free gap between two columns of text.

SLANet-plus gives each cell a box, and the column bands are the median edges of those boxes. On
a degraded scan the body's boxes can be far off (office scan, eu-019 p3: the stub's boxes reach
600 px across a table whose stub text ends at 182 px), and a median boundary then runs through
the middle of the next column: its label and every value under it cut in two, the label joined
to the stub's (`Country Domestic (%)`), the values sent to whichever side their centre falls.

The words show where the columns are: across the rows, text covers x-intervals with gaps
between them. A boundary through the words of two or more rows is moved into such a gap (a run
of positions that cut fewer than two rows' words) between its neighbouring boundaries, one that
holds no other boundary, the nearest when two qualify; within it, to the middle of the widest
stretch that cuts no word at all. A move that would pass wholly over words it did not cut, in
two rows or more, is not made: that would hand a column's own text to its neighbour. A
boundary cutting one row only (a group label over two columns, a title) is left alone, and
words inside a cell the model drew across several columns do not count. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from worker.core.bands import Band
from worker.core.geometry import center
from worker.core.types import BBox, Word

MIN_LINES = 2  # a boundary is moved when it cuts the words of at least this many text lines
EDGE = 1.0  # px: a word touching a boundary is not cut by it


def fit_columns_to_text(
    cols: list[Band], rows: list[Band], spanning: Sequence[BBox], words: list[Word], repairs: list[str]
) -> list[Band]:
    """`cols` with each boundary that cuts the text of `MIN_LINES` rows or more moved into a free
    gap between columns of text; `spanning` are the boxes of cells over several columns."""
    if len(cols) < 2 or not rows:
        return cols
    top, bottom = rows[0].lo, rows[-1].hi
    kept = [
        w.bbox
        for w in words
        if top <= (w.bbox[1] + w.bbox[3]) / 2 <= bottom and not any(_inside(w.bbox, b) for b in spanning)
    ]
    spans = [(b, _row_of(b, rows)) for b in kept]  # each word with its row, found once
    if len(spans) < 3:
        return cols
    cuts = [(a.hi + b.lo) / 2 for a, b in zip(cols, cols[1:])]
    moved = list(cuts)
    for k, cut in enumerate(cuts):
        if _lines_cut(cut, spans) < MIN_LINES:
            continue
        lo = cuts[k - 1] if k else cols[0].lo
        hi = cuts[k + 1] if k + 1 < len(cuts) else cols[-1].hi
        free = [(a, b) for a, b in _free_runs(lo, hi, spans) if not any(a <= c <= b for c in cuts)]
        if free:
            a, b = min(free, key=lambda g: min(abs(g[0] - cut), abs(g[1] - cut)))
            target = _clearest(a, b, kept)
            if _rows_passed_over(cut, target, spans) < MIN_LINES:
                moved[k] = target
    if moved == cuts:
        return cols
    repairs.append(f"{sum(m != c for m, c in zip(moved, cuts))} column boundary(ies) moved off the text they cut")
    lows, highs = [cols[0].lo, *moved], [*moved, cols[-1].hi]
    return [Band(lo, max(hi, lo + 1e-3), c.score) for lo, hi, c in zip(lows, highs, cols)]


def _inside(box: BBox, cell: BBox) -> bool:
    cx, cy = center(box)
    return cell[0] <= cx <= cell[2] and cell[1] <= cy <= cell[3]


def _lines_cut(cut: float, spans: list[tuple[BBox, int]]) -> int:
    """How many rows hold a word that `cut` runs through (`spans`: word boxes with their rows)."""
    return len({r for b, r in spans if b[0] + EDGE < cut < b[2] - EDGE})


def _rows_passed_over(cut: float, target: float, spans: list[tuple[BBox, int]]) -> int:
    """How many rows hold a word lying wholly between `cut` and `target`, one the boundary did
    not cut: moving past such words in two rows or more would hand a column's own text to its
    neighbour (photocopy, eu-016 p3: the stub's names into an empty margin column beside them)."""
    lo, hi = min(cut, target), max(cut, target)
    return len({r for b, r in spans if lo <= b[0] and b[2] <= hi})


def _row_of(b: BBox, rows: list[Band]) -> int:
    cy = (b[1] + b[3]) / 2
    return next((i for i, r in enumerate(rows) if r.lo <= cy < r.hi), -1)


def _free_runs(lo: float, hi: float, spans: list[tuple[BBox, int]]) -> list[tuple[float, float]]:
    """The x-runs strictly between `lo` and `hi` where a boundary cuts fewer than `MIN_LINES`
    rows' words (a title or group label across them does not close a gap)."""
    xs = sorted({lo, hi, *(x for b, _ in spans for x in (b[0], b[2]) if lo < x < hi)})
    runs: list[list[float]] = []
    for a, b in zip(xs, xs[1:]):
        if _lines_cut((a + b) / 2, spans) >= MIN_LINES:
            continue
        if runs and runs[-1][1] == a:
            runs[-1][1] = b
        else:
            runs.append([a, b])
    return [(a, b) for a, b in runs if lo < a and b < hi]


def _clearest(a: float, b: float, spans: list[BBox]) -> float:
    """The middle of the widest stretch of a..b that cuts no word at all (a label on one line
    may lie in the run), else of the run itself."""
    xs = sorted({a, b, *(x for s in spans for x in (s[0], s[2]) if a < x < b)})
    best: tuple[float, float] | None = None
    start: float | None = None
    for lo, hi in zip(xs, xs[1:]):
        mid = (lo + hi) / 2
        if any(s[0] + EDGE < mid < s[2] - EDGE for s in spans):
            start = None
            continue
        start = lo if start is None else start
        if best is None or hi - start > best[1] - best[0]:
            best = (start, hi)
    return (best[0] + best[1]) / 2 if best is not None else (a + b) / 2
