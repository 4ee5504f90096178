"""Columns an image-to-markup model merged, split again where the words show a gutter.

A structure model of the SLANet family sometimes emits one cell where the page has two
columns set close together: every body cell of that column then holds two values ("0.50 0"
under "Dev. Min"), and both lose their labels. The words are exact: a clear vertical gap
running through the band, with values on both sides in most rows, is a column boundary. The
gap must be as wide as the narrowest one the model itself put a boundary in (column gaps vary
far more than row gaps, so the median gap would hide a narrow gutter), and never under a
share of the typical one (a space inside one value). Pure: bands and rectangles in and out.
"""

from __future__ import annotations

from worker.core.bands import Band
from worker.core.geometry import line_gap
from worker.core.header_words import WORD_SPACE, join_header_labels
from worker.core.headers import is_value_like
from worker.core.refine import Interval, RefineRules, clusters, marks_for, split_bands, typical_gap_of
from worker.core.spans import SpanRect
from worker.core.types import BBox, Word

GUTTER_HEIGHTS = 2.0  # a gutter this many text heights wide is a column gap (a space is ~0.3)


def header_rows_for_split(
    rects: list[SpanRect], rows: list[Band], cols: list[Band], words: list[Word], model: set[int]
) -> set[int]:
    """The model's header rows and the leading rows that read as labels: their words (outside
    cells spanning columns) hold no value, or none of them is in the stub column (a stub head
    left empty over "1996/7 (000)"). Labels set over a narrow gutter must not hide it, and a
    model's header is often short of its labels (an empty rule row marked, the labels not)."""
    wide = [(cols[r.c0].lo, rows[r.r0].lo, cols[r.c1].hi, rows[r.r1].hi) for r in rects if r.c1 > r.c0]
    stub_end = cols[0].hi
    out: set[int] = set(model)
    for i, band in enumerate(rows[:-1]):
        mine = [w for w in words if band.lo <= (w.bbox[1] + w.bbox[3]) / 2 < band.hi and not _inside(w.bbox, wide)]
        in_stub = any((w.bbox[0] + w.bbox[2]) / 2 < stub_end for w in mine)
        if in_stub and any(is_value_like(w.text) for w in mine):
            break
        out.add(i)
    return out


def _inside(box: BBox, boxes: list[BBox]) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return any(b[0] <= cx <= b[2] and b[1] <= cy <= b[3] for b in boxes)


def split_merged_columns(
    rects: list[SpanRect],
    rows: list[Band],
    cols: list[Band],
    header: set[int],
    words: list[Word],
    repairs: list[str],
) -> tuple[list[SpanRect], list[Band]]:
    """`cols` with merged columns split, and `rects` laid onto the new columns: a cell of one
    column keeps the left part (the right part becomes a cell of its own), a cell spanning
    several columns covers the parts of all of them. Then a boundary that cuts a header label
    but sits in the body's whitespace moves beside the label, within that whitespace."""
    if not cols or not words or not rows:
        return rects, cols
    head = header_rows_for_split(rects, rows, cols, words, header)
    wide = [(cols[r.c0].lo, rows[r.r0].lo, cols[r.c1].hi, rows[r.r1].hi) for r in rects if r.c1 > r.c0]
    head_boxes = [(cols[0].lo, rows[i].lo, cols[-1].hi, rows[i].hi) for i in head]
    pairs = [(w.bbox, w.text) for w in words]
    marks = marks_for(pairs, "x", skip=wide + head_boxes)
    if not marks:
        return rects, cols
    runs = clusters(marks)
    typical = typical_gap_of(cols, runs)
    rules = RefineRules()
    heights = sorted(w.bbox[3] - w.bbox[1] for w in words)
    gap_ref = min(typical, GUTTER_HEIGHTS * heights[len(heights) // 2] / rules.split_gap)
    cross = [(b.lo, b.hi) for b in rows]
    parts = [split_bands([band], marks, runs, [], cross, rules, typical, gap_ref=gap_ref) for band in cols]
    added = sum(len(p) - 1 for p in parts)
    if added:
        start: list[int] = []
        n = 0
        for p in parts:
            start.append(n)
            n += len(p)
        moved: list[SpanRect] = []
        for r in rects:
            c0 = start[r.c0]
            c1 = start[r.c1] + len(parts[r.c1]) - 1 if r.c1 > r.c0 else c0
            moved.append(SpanRect(r.r0, r.r1, c0, c1, r.score, r.projected))
        rects, cols = moved, [b for p in parts for b in p]
        repairs.append(f"{added} column(s) recovered by splitting columns whose words show a gutter")
    # the header row right above the body: its labels name one column each (group labels above
    # span several and are the span rules' business)
    last = [(cols[0].lo, rows[max(head)].lo, cols[-1].hi, rows[max(head)].hi)] if head else []
    labels = join_header_labels([w for w in words if _inside(w.bbox, last) and not _inside(w.bbox, wide)], rows, head)
    in_head = [(w.bbox, w.text) for w in labels]
    shifted = _free_header_labels(cols, runs, clusters(marks_for(in_head, "x")))
    if shifted:
        repairs.append(f"{shifted} column boundar{'y' if shifted == 1 else 'ies'} moved off a header label")
    return rects, cols


def _free_header_labels(cols: list[Band], body: list[Interval], head: list[Interval]) -> int:
    """Move each boundary that cuts a header label (a run of header words) but lies in the
    body's whitespace to the side of the label, staying in that whitespace (in place)."""
    moved = 0
    for k in range(len(cols) - 1):
        b = cols[k].hi
        if any(a < b < c for a, c in body):
            continue
        g0 = max((c for _, c in body if c <= b), default=cols[k].lo)
        g1 = min((a for a, _ in body if a >= b), default=cols[k + 1].hi)
        cut = next(((a, c) for a, c in head if a < b < c), None)
        if cut is None or sum(1 for band in cols[:-1] if cut[0] < band.hi < cut[1]) > 1:
            continue  # a label over several boundaries spans them
        a, c = cut
        options = []
        if a > g0:
            before = max([g0, *(e for _, e in head if e <= a)])
            options.append((before + a) / 2)
        if c < g1:
            after = min([g1, *(s for s, _ in head if s >= c)])
            options.append((c + after) / 2)
        options = [x for x in options if cols[k].lo < x < cols[k + 1].hi]
        if options:
            new = min(options, key=lambda x: abs(x - b))
            cols[k].hi = cols[k + 1].lo = new
            moved += 1
    return moved


def merge_label_only_columns(
    rects: list[SpanRect], rows: list[Band], cols: list[Band], head: set[int], words: list[Word], repairs: list[str]
) -> tuple[list[SpanRect], list[Band]]:
    """A column with no word in any body row, whose header words go on a label of the column
    beside it (on one line, a word space apart: "inhabitants per | outlet"), is no column: the
    model cut a label in two. It is merged into that neighbour."""
    if len(cols) < 3 or not head or not words:
        return rects, cols
    head_bands = [rows[i] for i in sorted(head) if 0 <= i < len(rows)]

    def in_head(w: Word) -> bool:
        cy = (w.bbox[1] + w.bbox[3]) / 2
        return any(b.lo <= cy < b.hi for b in head_bands)

    def col_of(w: Word) -> int:
        cx = (w.bbox[0] + w.bbox[2]) / 2
        return next((i for i, b in enumerate(cols) if b.lo <= cx < b.hi), -1)

    body_cols = {col_of(w) for w in words if not in_head(w)}
    heads = [(col_of(w), w) for w in words if in_head(w)]
    for c in range(1, len(cols)):
        mine = [w for k, w in heads if k == c]
        if c in body_cols or not mine:
            continue
        for n in (c - 1, c + 1):
            if n < 1 or n >= len(cols) or n not in body_cols:
                continue
            theirs = [w for k, w in heads if k == n]
            if any(_one_label(a, b) for a in mine for b in theirs):
                repairs.append("1 column holding only part of a header label merged into its neighbour")
                return merge_columns(rects, cols, keep=min(c, n), gone=max(c, n))
    return rects, cols


def _one_label(a: Word, b: Word) -> bool:
    on_line = line_gap(a.bbox, b.bbox)
    return on_line is not None and on_line[0] <= WORD_SPACE * on_line[1]


def merge_columns(rects: list[SpanRect], cols: list[Band], keep: int, gone: int) -> tuple[list[SpanRect], list[Band]]:
    """Columns `keep` and `gone` (= keep + 1) as one; cells of `gone` alone are dropped (their
    slots are the kept column's), the others close up."""
    out: list[SpanRect] = []
    for r in rects:
        if r.c0 == r.c1 == gone:
            continue
        c0 = r.c0 - 1 if r.c0 >= gone else r.c0
        c1 = r.c1 - 1 if r.c1 >= gone else r.c1
        out.append(SpanRect(r.r0, r.r1, c0, c1, r.score, r.projected))
    merged = Band(cols[keep].lo, cols[gone].hi, max(cols[keep].score, cols[gone].score))
    return out, [*cols[:keep], merged, *cols[gone + 1 :]]
