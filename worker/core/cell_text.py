"""Words into cells: each word goes to the cell holding most of its area, text in reading order."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from worker.core.bands import Band
from worker.core.geometry import area, intersection_area
from worker.core.types import BBox, Word


@dataclass(slots=True)
class Assignment:
    """Words per cell index, their fit (share of each word's area inside its cell), and leftovers."""

    words: dict[int, list[Word]] = field(default_factory=dict)
    fits: dict[int, list[float]] = field(default_factory=dict)
    unassigned: list[Word] = field(default_factory=list)


class _Index:
    """Sorted band edges, so the bands a word touches are found by bisection, not a scan."""

    def __init__(self, bands: list[Band]) -> None:
        self.starts = [b.lo for b in bands]
        self.ends = [b.hi for b in bands]

    def touching(self, lo: float, hi: float) -> range:
        return range(bisect_right(self.ends, lo), bisect_left(self.starts, hi))


def _nearest(bands: list[Band], value: float) -> int:
    return min(range(len(bands)), key=lambda i: abs(bands[i].mid - value))


def assign_words(
    words: list[Word], rows: list[Band], cols: list[Band], owner: list[list[int]], cell_boxes: list[BBox], margin: float
) -> Assignment:
    """Give every word to one cell, or report it.

    A word partly inside the grid goes to the cell sharing most of its area; a word wholly
    outside but within `margin` of the grid goes to the nearest cell (model boxes are often a
    little tight); anything further away is returned in `unassigned`, never silently dropped.
    """
    out = Assignment()
    if not rows or not cols:
        out.unassigned = list(words)
        return out
    x_lo, x_hi, y_lo, y_hi = cols[0].lo, cols[-1].hi, rows[0].lo, rows[-1].hi
    row_index, col_index = _Index(rows), _Index(cols)
    for word in words:
        x0, y0, x1, y1 = word.bbox
        scores: dict[int, float] = {}
        for r in row_index.touching(y0, y1):
            for c in col_index.touching(x0, x1):
                idx = owner[r][c]
                if idx not in scores:
                    scores[idx] = intersection_area(word.bbox, cell_boxes[idx])
        best = max(scores, key=lambda k: scores[k], default=None)
        word_area = area(word.bbox)
        if best is not None and scores[best] > 0:
            fit = scores[best] / word_area if word_area > 0 else 1.0
        else:
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            dx = max(x_lo - cx, 0.0, cx - x_hi)
            dy = max(y_lo - cy, 0.0, cy - y_hi)
            if max(dx, dy) > margin:
                out.unassigned.append(word)
                continue
            best = owner[_nearest(rows, cy)][_nearest(cols, cx)]
            fit = 0.0
        out.words.setdefault(best, []).append(word)
        out.fits.setdefault(best, []).append(min(1.0, fit))
    return out


def reading_order_text(words: list[Word]) -> str:
    """Join words as a reader would: lines top to bottom, words left to right in each line.

    A word joins a line when its vertical centre falls inside the line's current extent,
    which tolerates the slight baseline drift of OCR boxes.
    """
    lines: list[tuple[float, float, list[Word]]] = []
    for w in sorted(words, key=lambda w: ((w.bbox[1] + w.bbox[3]) / 2, w.bbox[0])):
        cy = (w.bbox[1] + w.bbox[3]) / 2
        for i, (top, bottom, members) in enumerate(lines):
            if top <= cy <= bottom:
                members.append(w)
                lines[i] = (min(top, w.bbox[1]), max(bottom, w.bbox[3]), members)
                break
        else:
            lines.append((w.bbox[1], w.bbox[3], [w]))
    lines.sort(key=lambda line: (line[0] + line[1]) / 2)
    parts = []
    for _, _, members in lines:
        members.sort(key=lambda w: w.bbox[0])
        parts.append(" ".join(w.text.strip() for w in members if w.text.strip()))
    return " ".join(p for p in parts if p)
