"""Spanning header cells checked against their words: one label per group of words.

A structure model often reads a header row of dates, each centred over two columns, as one
cell spanning all of them ("2007 2009 2011" over six columns), or stretches a group label
over the stub column. Every value below then gets the wrong column label, while TEDS barely
notices. The words say better: inside one spanning header cell, words separated by much
more than a space, over different columns, are different labels. Such a cell is split into
one cell per word group, each over the columns nearest to it (a label belongs over the
columns it is centred on); the first column (the stub) goes to a group only when that
group's words reach into it or it is centred on the whole cell, so a stub head is never
swallowed by a group label. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from worker.core.bands import Band
from worker.core.headers import is_figure
from worker.core.spans import SpanRect
from worker.core.types import Word

# Words further apart than this many text heights (on one line) belong to separate labels;
# a space between the words of one label is about a third of a text height.
LABEL_GAP_HEIGHTS = 1.5


def _centre(w: Word) -> tuple[float, float]:
    return (w.bbox[0] + w.bbox[2]) / 2, (w.bbox[1] + w.bbox[3]) / 2


def _inside(w: Word, x0: float, y0: float, x1: float, y1: float) -> bool:
    cx, cy = _centre(w)
    return x0 <= cx < x1 and y0 <= cy < y1


def word_groups(words: Sequence[Word], gap: float) -> list[tuple[float, float]]:
    """x-extents of the labels among `words`: on each text line, runs of words closer than
    `gap`; runs on different lines that overlap in x are one (wrapped) label."""
    lines: list[list[Word]] = []
    for w in sorted(words, key=lambda w: _centre(w)[1]):
        cy = _centre(w)[1]
        h = w.bbox[3] - w.bbox[1]
        if lines and abs(_centre(lines[-1][-1])[1] - cy) <= 0.5 * h:
            lines[-1].append(w)
        else:
            lines.append([w])
    runs: list[list[float]] = []
    for line in lines:
        line.sort(key=lambda w: w.bbox[0])
        start = len(runs)
        for w in line:
            if len(runs) > start and w.bbox[0] - runs[-1][1] < gap:
                runs[-1][1] = max(runs[-1][1], w.bbox[2])
            else:
                runs.append([w.bbox[0], w.bbox[2]])
    runs.sort()
    merged: list[list[float]] = []
    for a, b in runs:  # overlapping runs (a label wrapped over two lines) are one label
        if merged and a < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def _centred_past_stub(rect: SpanRect, cols: list[Band], groups: list[tuple[float, float]]) -> bool:
    """Whether the label nearest the stub is centred on the columns after the stub rather
    than on all the columns the cell covers (then the stub was pulled in by mistake)."""
    if rect.c0 != 0 or rect.c1 < 1:
        return False
    a, b = groups[0]
    centre = (a + b) / 2
    without = (cols[1].lo + cols[rect.c1].hi) / 2
    with_stub = (cols[0].lo + cols[rect.c1].hi) / 2
    return len(groups) > 1 or abs(centre - without) < abs(centre - with_stub)


def _split(rect: SpanRect, cols: list[Band], groups: list[tuple[float, float]]) -> list[SpanRect] | None:
    """The rect cut into one rect per word group (None when the groups do not fall over
    different columns). A single label over every column (a title row) stays as it is."""
    owner: dict[int, int] = {}
    for c in range(rect.c0, rect.c1 + 1):
        band = cols[c]
        overlaps = [g for g, (a, b) in enumerate(groups) if min(b, band.hi) - max(a, band.lo) > 0]
        if c == 0 and not overlaps and _centred_past_stub(rect, cols, groups):
            continue  # the stub column stays out of a group label that does not reach it
        owner[c] = min(
            range(len(groups)), key=lambda g: abs((groups[g][0] + groups[g][1]) / 2 - band.mid) - (g in overlaps) * 1e6
        )
    spans: dict[int, list[int]] = {}
    for c, g in owner.items():
        spans.setdefault(g, []).append(c)
    if len(spans) < 2 and len(owner) == rect.c1 - rect.c0 + 1:
        return None
    out = []
    for g in sorted(spans):
        cs = spans[g]
        if cs != list(range(cs[0], cs[-1] + 1)):
            return None  # interleaved groups: no clean reading, leave the model's cell
        if len(cs) > 1 or rect.r1 > rect.r0:
            out.append(SpanRect(rect.r0, rect.r1, cs[0], cs[-1], rect.score, rect.projected))
    return out


def header_rows_by_words(rows: list[Band], cols: list[Band], words: Sequence[Word]) -> set[int]:
    """Leading rows without a figure outside the first column: where a header can be when the
    model marked none (a lone dash, a speck over a photocopied table, is no figure)."""
    out: set[int] = set()
    x_start = cols[1].lo if len(cols) > 1 else cols[0].hi
    for r, band in enumerate(rows):
        inside = [w for w in words if band.lo <= _centre(w)[1] < band.hi and _centre(w)[0] >= x_start]
        if any(is_figure(w.text) for w in inside):
            break
        out.add(r)
    return out if len(out) < len(rows) else set()


def split_header_spans(
    placed: list[SpanRect], rows: list[Band], cols: list[Band], header: set[int], words: Sequence[Word]
) -> tuple[list[SpanRect], int]:
    """Spanning cells of the header rows (the model's, else the leading rows without values)
    cut where their words form separate labels; returns the rects and how many were cut."""
    if not words or len(cols) < 2:
        return placed, 0
    head = header or header_rows_by_words(rows, cols, words)
    heights = [w.bbox[3] - w.bbox[1] for w in words if w.bbox[3] > w.bbox[1]]
    if not head or not heights:
        return placed, 0
    gap = LABEL_GAP_HEIGHTS * median(heights)
    out: list[SpanRect] = []
    cut = 0
    for rect in placed:
        if rect.c1 == rect.c0 or rect.projected or any(r not in head for r in range(rect.r0, rect.r1 + 1)):
            out.append(rect)
            continue
        x0, x1, y0, y1 = cols[rect.c0].lo, cols[rect.c1].hi, rows[rect.r0].lo, rows[rect.r1].hi
        inside = [w for w in words if _inside(w, x0, y0, x1, y1)]
        # a group of marks alone (a rule read as `|`, a stray dot) is no label
        groups = [
            g
            for g in word_groups(inside, gap)
            if any(any(ch.isalnum() for ch in w.text) for w in inside if g[0] <= w.bbox[0] and w.bbox[2] <= g[1])
        ]
        pieces = _split(rect, cols, groups) if groups else None
        if pieces is None:
            out.append(rect)
        else:
            out.extend(pieces)
            cut += 1
    return out, cut
