"""A model row that holds several table rows, one text line each, is split at its lines.

On a noisy or compressed crop SLANet-plus can read fifteen lines of figures as three tall rows,
and sometimes no other view of the crop parts them (`worker.pipeline.second_look`). The words
still say where the rows are: a line that starts with a label in the stub and carries figures
in the other columns is a row of its own. So a model row is split at each such line when the
row holds two or more of them, or holds one under a line of labels that starts in the stub (a
header row that took the first data row in). The split keeps what a wrapped label looks like:
a line with words in the stub only stays with the line of figures after it, and a line with no
stub word (a standard error under its estimate, a wrapped value) stays with the line before it.
A row whose lines do not show this pattern is left as the model read it. The same reading
sometimes ends the table early: rows of figures under the model's last row, each close under
the one before, join the table's foot (a note or a source under it is no row of figures).

Pure Python: bands, slot rectangles and words in crop pixels.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

from worker.core.bands import Band
from worker.core.headers import is_figure, is_value_like, is_value_row
from worker.core.spans import SpanRect
from worker.core.text_lines import TextLine, text_lines
from worker.core.types import Word

FOOT_GAP = 1.5  # a row of figures under the model's last row continues the table within this many line heights
FOOT_PAD = 0.3  # the table's new foot lies this many line heights under its last line
REPAIR = "given their own lines"  # how the repair reads in a grid's repairs (`was_split`)


@dataclass(frozen=True, slots=True)
class _Line:
    """One text line of a row, read as the texts of the row's cells left to right."""

    line: TextLine
    texts: list[str]

    @property
    def in_stub(self) -> bool:
        return bool(self.texts[0])

    @property
    def is_values(self) -> bool:
        """A label in the stub and only values beside it, at least one with a digit."""
        rest = [t for t in self.texts[1:] if t]
        return self.in_stub and any(is_figure(t) for t in rest) and is_value_row(self.texts)

    @property
    def is_stub_label(self) -> bool:
        """Words in the stub alone, not a value: a wrapped label's line, or a section label."""
        return self.in_stub and not any(self.texts[1:]) and not is_value_like(self.texts[0])

    @property
    def is_labels(self) -> bool:
        """Labels in the stub and one or more other cells, and no figure: a line of column headings
        (a line of units with nothing in the stub is the header's, `worker.core.header_lines`)."""
        filled = [t for t in self.texts if t]
        return self.in_stub and len(filled) >= 2 and not any(is_figure(t) for t in filled)


def was_split(repairs: list[str]) -> bool:
    """Whether a grid's rows were parted here: the model's own reading had collapsed them."""
    return any(REPAIR in r for r in repairs)


def split_stacked_rows(
    rects: list[SpanRect],
    rows: list[Band],
    cols: list[Band],
    header: set[int],
    words: list[Word],
    repairs: list[str],
) -> tuple[list[SpanRect], list[Band], set[int]]:
    """Each row holding stacked table rows split at its lines; `rects` re-laid (a cell of the
    split row alone becomes one cell per part, a cell over several rows covers every part) and
    the `header` rows renumbered (every part of a header row stays in the header; rows of figures
    at its foot go back to the body later, `worker.core.headers.value_rows_under_header`)."""
    if not rows or not cols:
        return rects, rows, header
    out_rows: list[Band] = []
    index: list[tuple[int, int]] = []  # per old row: (new start, parts)
    for i, band in enumerate(rows):
        edges = _row_edges(i, len(rows), band, rects, cols, words)
        index.append((len(out_rows), len(edges) - 1))
        out_rows += [Band(lo, hi, band.score) for lo, hi in zip(edges, edges[1:])]
    added = len(out_rows) - len(rows)
    if out_rows == rows:
        return rects, rows, header
    moved: list[SpanRect] = []
    for r in rects:
        start0, parts0 = index[r.r0]
        start1, parts1 = index[r.r1]
        if r.r0 == r.r1:
            moved += [SpanRect(start0 + k, start0 + k, r.c0, r.c1, r.score, r.projected) for k in range(parts0)]
        else:
            moved.append(SpanRect(start0, start1 + parts1 - 1, r.c0, r.c1, r.score, r.projected))
    renumbered = {index[i][0] + k for i in header if 0 <= i < len(index) for k in range(index[i][1])}
    repairs.append(f"{added} row(s) of figures read into the row above them (or under the table's foot) {REPAIR}")
    return moved, out_rows, renumbered


def _row_edges(
    i: int, n_rows: int, band: Band, rects: list[SpanRect], cols: list[Band], words: list[Word]
) -> list[float]:
    """The edges of the table rows row `i` parts into: `[band.lo, band.hi]` when it is one."""
    whole = [band.lo, band.hi]
    own = sorted((r for r in rects if r.r0 == r.r1 == i), key=lambda r: r.c0)
    if len(own) < 2 or own[0].c0 != 0 or not words:
        return whole  # the stub spans rows here (or is missing): its lines say nothing of this row alone
    spans = [(cols[r.c0].lo, cols[r.c1].hi) for r in own]

    def cell_of(w: Word) -> int | None:
        cx = (w.bbox[0] + w.bbox[2]) / 2
        return next((k for k, (lo, hi) in enumerate(spans) if lo <= cx < hi), None)

    def read(tl: TextLine) -> _Line:
        texts = [""] * len(own)
        for w in tl.words:
            k = cell_of(w)
            if k is not None:
                texts[k] = f"{texts[k]} {w.text.strip()}".strip()
        return _Line(tl, texts)

    # the table's first row also takes a line whose centre lies just above the model's boxes
    # (within a line's height), as the rebuild assigns such words to it; under the last row,
    # only rows of figures continue the table (`_foot_lines`)
    height = median(w.bbox[3] - w.bbox[1] for w in words)
    lo = band.lo - (height if i == 0 else 0.0)
    placed = [w for w in words if cell_of(w) is not None]
    last = i == n_rows - 1
    found = text_lines([w for w in placed if lo <= _cy(w) and (last or _cy(w) < band.hi)])
    # a line is in the row by its own centre (a line the band's edge runs through stays whole)
    lines = [read(tl) for tl in found if (tl.top + tl.bottom) / 2 < band.hi]
    if last and lines:
        below = [read(tl) for tl in found if (tl.top + tl.bottom) / 2 >= band.hi]
        lines += _foot_lines(lines[-1].line.bottom, below, height)
    if len(lines) < 2:
        return whole
    starts = [
        j
        for j in range(1, len(lines))
        if (lines[j].is_values and not lines[j - 1].is_stub_label)
        or (lines[j].is_stub_label and lines[j - 1].is_values)
    ]
    groups = [0, *starts]
    value_groups = sum(any(ln.is_values for ln in lines[a:b]) for a, b in zip(groups, [*groups[1:], len(lines)]))
    if not starts or (value_groups < 2 and not lines[0].is_labels):
        return whole
    cuts = [(lines[j - 1].line.bottom + lines[j].line.top) / 2 for j in starts]
    end = max(band.hi, lines[-1].line.bottom + FOOT_PAD * height)
    return [band.lo, *(c for c in cuts if band.lo < c < end), end]


def _foot_lines(bottom: float, below: list[_Line], height: float) -> list[_Line]:
    """The lines of figures under the model's last row that continue the table: each a row of
    values in half its columns or more, less than `FOOT_GAP` line heights under the one before.
    Notes, sources and test statistics under a table ("x2=876.6 p <0.0005") are no such rows, so
    the walk stops at them."""
    out: list[_Line] = []
    for line in below:
        filled = sum(bool(t) for t in line.texts[1:])
        if not line.is_values or 2 * filled < len(line.texts) - 1 or line.line.top - bottom > FOOT_GAP * height:
            break
        out.append(line)
        bottom = line.line.bottom
    return out


def _cy(w: Word) -> float:
    return (w.bbox[1] + w.bbox[3]) / 2
