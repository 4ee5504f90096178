"""A group label read into the row of the labels under it gets a header row of its own.

Statistical tables set a group label ("THRESHOLD FOR RELEASES", "2007") on its own line over
the sub-column labels it governs. A structure model often draws one header row around both
lines: the group label then lands in one sub-column's cell ("THRESHOLD FOR RELEASES to
water"), and the other sub-columns lose it. Within the header rows, a row band whose top
line of words holds fewer labels than the line under it (and that line two or more) is split
between the two lines. The new row's label is then one cell, which `centre_header_labels`
spreads over the columns it is centred on. Where a lone wrapped label is split off instead,
the column path reads the same (paths join the header rows top to bottom).
"""

from __future__ import annotations

from statistics import median

from worker.core.bands import Band
from worker.core.spans import SpanRect
from worker.core.types import Word

LABEL_GAP = 1.5  # words on a line further apart than this many text heights are two labels


def split_group_label_rows(
    rects: list[SpanRect],
    rows: list[Band],
    head: set[int],
    header: set[int],
    words: list[Word],
    stub_end: float,
    repairs: list[str],
) -> tuple[list[SpanRect], list[Band], set[int], set[int]]:
    """Rows with each group-label line split off into a row above; rects re-laid (a cell of
    the split row alone keeps the lower part, a cell over several rows covers both parts);
    the rows of `head` (where to look) and `header` (the model's) renumbered."""
    out_rows: list[Band] = []
    index: list[tuple[int, int]] = []  # per old row: (new start, parts)
    height = median(w.bbox[3] - w.bbox[1] for w in words) if words else 0.0
    for i, band in enumerate(rows):
        # the first row also holds a line whose centre lies just above it, as the rebuild assigns it
        cut = _group_label_cut(band, words, stub_end, height if i == 0 else 0.0) if i in head else None
        index.append((len(out_rows), 2 if cut is not None else 1))
        if cut is None:
            out_rows.append(band)
        else:
            out_rows += [Band(band.lo, cut, band.score), Band(cut, band.hi, band.score)]
    added = len(out_rows) - len(rows)
    if not added:
        return rects, rows, head, header
    moved: list[SpanRect] = []
    for r in rects:
        start0, parts0 = index[r.r0]
        start1, parts1 = index[r.r1]
        r0 = start0 + parts0 - 1 if r.r0 == r.r1 else start0
        moved.append(SpanRect(r0, start1 + parts1 - 1, r.c0, r.c1, r.score, r.projected))

    def renumber(rows_in: set[int]) -> set[int]:
        return {index[i][0] + k for i in rows_in if 0 <= i < len(index) for k in range(index[i][1])}

    repairs.append(f"{added} group label line(s) over sub-column labels given a header row of their own")
    return moved, out_rows, renumber(head), renumber(header)


def _group_label_cut(band: Band, words: list[Word], stub_end: float, above: float = 0.0) -> float | None:
    """Where to cut `band` under its top line of words, if that line is group labels: none of
    its words over the stub column (a caption or a stub head is no group label), and under it
    two labels or more beyond the stub (the sub-columns a group label governs). Words whose
    centres lie up to `above` over the band are its own: the table's first row takes the line
    the model's boxes start under (a photocopy's eu-004 p3, seed 2: the top line of a wrapped
    header, centred 3 px above the first row's boxes, was left out, and the one word of it
    centred lower, `per`, was taken for a group label over the row's five labels). A word the
    crop's top edge cuts is taken so only within the band: it is a piece of a line over the
    table, a caption's (`P`, the top of "(percentage", eu-012 p3 on a photocopy, seed 1: taken
    for a group label, it split the header row in two)."""
    mine = sorted(
        (w for w in words if band.lo - _reach(w, above) <= (w.bbox[1] + w.bbox[3]) / 2 < band.hi),
        key=lambda w: (w.bbox[1], w.bbox[0]),
    )
    lines: list[list[Word]] = []
    for w in sorted(mine, key=lambda w: (w.bbox[1] + w.bbox[3]) / 2):
        cy = (w.bbox[1] + w.bbox[3]) / 2
        if lines and cy - max((x.bbox[1] + x.bbox[3]) / 2 for x in lines[-1]) < 0.5 * (w.bbox[3] - w.bbox[1]):
            lines[-1].append(w)
        else:
            lines.append([w])
    if len(lines) < 2:
        return None
    top, below = lines[0], lines[1]
    if any((w.bbox[0] + w.bbox[2]) / 2 < stub_end for w in top):
        return None
    n_top, n_below = _labels(top), _labels([w for w in below if (w.bbox[0] + w.bbox[2]) / 2 >= stub_end])
    if not (n_below >= 2 and 1 <= n_top < n_below):
        return None
    top_end = max(w.bbox[3] for w in top)
    below_start = min(w.bbox[1] for w in below)
    if below_start < top_end - 0.25 * (top_end - min(w.bbox[1] for w in top)):
        return None  # the lines overlap: one line of text after all
    return (top_end + below_start) / 2 if below_start > top_end else top_end


def _reach(word: Word, above: float) -> float:
    """How far over a band `word`'s centre may lie and still be the band's: `above`, or none
    for a word the crop's top edge cuts (its box starts on the crop's first row)."""
    return above if word.bbox[1] > 0 else 0.0


def _labels(line: list[Word]) -> int:
    """Labels on one line: runs of words closer than LABEL_GAP text heights."""
    xs = sorted(line, key=lambda w: w.bbox[0])
    n, end = 0, None
    for w in xs:
        h = w.bbox[3] - w.bbox[1]
        if end is None or w.bbox[0] - end > LABEL_GAP * h:
            n += 1
        end = max(end or w.bbox[2], w.bbox[2])
    return n
