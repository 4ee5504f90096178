"""A row label spanning up into the header, cut back to the row of its values.

On resampled and noisy scans SLANet sometimes sets the stub's empty header cell one row too
low: the first body row's label ("1,1,1-trichloroethane") then becomes a cell spanning the
header's last row ("to air kg/year") and its own. The header cannot end inside a cell, so no
header is marked or inferred, and every value of the table loses its column label. The words
say better: a stub cell spanning rows, whose text lies wholly in its last row, where that row
holds values beyond the stub and the rows above it hold labels only, is the label of that last
row. The cell is cut there: its upper rows become an empty stub head, its last row the label's
cell. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from worker.core.bands import Band
from worker.core.headers import is_figure, is_value_like
from worker.core.spans import SpanRect
from worker.core.text_lines import TextLine, text_lines
from worker.core.types import Word


def cut_stub_spans_into_body(
    rects: list[SpanRect], rows: list[Band], cols: list[Band], words: Sequence[Word], repairs: list[str]
) -> list[SpanRect]:
    """`rects` with each such stub cell cut (module docstring); the same list when none is."""
    if len(cols) < 2 or not words:
        return rects
    stub_end = cols[0].hi
    stub_rows: set[int] = set()
    values: set[int] = set()
    labels: set[int] = set()
    for w in words:
        r = _row_of(rows, _cy(w))
        if r is None or not w.text.strip():
            continue
        if (w.bbox[0] + w.bbox[2]) / 2 < stub_end:
            stub_rows.add(r)
        elif is_value_like(w.text):
            values.add(r)
        else:
            labels.add(r)
    out: list[SpanRect] = []
    cut = 0
    for rect in rects:
        last = rect.r1
        text_rows = {r for r in stub_rows if rect.r0 <= r <= last}
        if (
            rect.c0 == rect.c1 == 0
            and last > rect.r0
            and text_rows == {last}
            and last in values
            and all(r in labels and r not in values for r in range(rect.r0, last))
        ):
            out += [
                SpanRect(rect.r0, last - 1, 0, 0, rect.score, rect.projected),
                SpanRect(last, last, 0, 0, rect.score, rect.projected),
            ]
            cut += 1
        else:
            out.append(rect)
    if cut:
        repairs.append(f"{cut} row label(s) spanning up into the header cut back to the row of their values")
    return out


def split_stub_spans_at_lines(
    rects: list[SpanRect], rows: list[Band], cols: list[Band], words: Sequence[Word], repairs: list[str]
) -> list[SpanRect]:
    """Stub cells spanning rows cut into one cell a row where their text says so: the cell
    holds as many lines of text as rows, each line centred in its own row, every row holds a
    figure beyond the stub, and no line after the first goes on in lower case (a wrapped label).
    On a skewed office scan SLANet read two rows' labels as one cell over both ("I/we kept the
    assets I/we sold some of the assets"), so the first row's values were read under both.
    A label over two rows of a second stub column ("Asthma" over "Count" and "Percentage")
    holds one line, and is kept."""
    if len(cols) < 2 or not words:
        return rects
    stub_end = cols[0].hi
    figures = {
        r
        for w in words
        if (w.bbox[0] + w.bbox[2]) / 2 >= stub_end and is_figure(w.text) and (r := _row_of(rows, _cy(w))) is not None
    }
    out: list[SpanRect] = []
    split = 0
    for rect in rects:
        if rect.c0 != 0 or rect.c1 != 0 or rect.r1 == rect.r0 or rect.r1 >= len(rows):
            out.append(rect)
            continue
        inside = [
            w
            for w in words
            if w.text.strip()
            and (w.bbox[0] + w.bbox[2]) / 2 < stub_end
            and rows[rect.r0].lo <= _cy(w) < rows[rect.r1].hi
        ]
        lines = text_lines(inside)
        spanned = range(rect.r0, rect.r1 + 1)
        if (
            len(lines) == len(spanned)
            and all(_row_of(rows, (line.top + line.bottom) / 2) == r for line, r in zip(lines, spanned))
            and all(r in figures for r in spanned)
            and not any(line.text[:1].islower() for line in lines[1:])
        ):
            out += [SpanRect(r, r, 0, 0, rect.score, rect.projected) for r in spanned]
            split += 1
        else:
            out.append(rect)
    if split:
        repairs.append(f"{split} row label(s) spanning rows cut into one per row at their text lines")
    return out


def realign_stub_spans(
    rects: list[SpanRect],
    rows: list[Band],
    cols: list[Band],
    header: set[int],
    words: Sequence[Word],
    repairs: list[str],
) -> list[SpanRect]:
    """Row labels spanning rows, rebuilt from where their text starts, where the model's spans
    begin elsewhere. In a stub the model drew with spanning labels, a label starts on a line of
    the stub that does not go on in lower case (a wrapped label's next line does), and spans
    down to the row before the next label starts. On a photocopy SLANet-plus set every label
    of eu-021 p7 one row too high ("Allergies" over the last row of "Alcohol use" and its own
    first), so each label's first values were read under the label before. The spans are rebuilt
    only where the model's cells cut a wrapped label (its next line in the cell below): a label
    one line high may sit at the top or in the middle of its rows (years centred over three rows,
    eu-012 p4), which says nothing of where its rows start. The stub is left as it is when a body
    cell spans it and the columns beside it."""
    first_body = next((r for r in range(len(rows)) if r not in header), None)
    if len(cols) < 2 or not words or first_body is None:
        return rects
    inside = [
        w
        for w in words
        if w.text.strip() and (w.bbox[0] + w.bbox[2]) / 2 < cols[0].hi and rows[first_body].lo <= _cy(w) < rows[-1].hi
    ]
    lines = text_lines(inside)
    firsts = [line for line in lines if not line.text[:1].islower()]
    starts = sorted({r for line in firsts if (r := _row_of(rows, (line.top + line.bottom) / 2)) is not None})
    if len(starts) < 2 or any(_straddles(line, rows) for line in firsts):
        return rects  # a label set across two rows (centred on their boundary) tells no first row
    stub = [r for r in rects if r.c0 == 0 and r.r1 >= starts[0]]
    if any(r.c1 > 0 for r in stub) or sum(r.r1 > r.r0 for r in stub) < 2:
        return rects
    if not _labels_cut(lines, stub, rows):
        return rects  # every label whole in one of the model's cells: where it sits in it is style
    ends = [s - 1 for s in starts[1:]] + [len(rows) - 1]
    rebuilt = [SpanRect(s, e, 0, 0) for s, e in zip(starts, ends)]
    out = [r for r in rects if not (r.c0 == 0 and r.r1 >= starts[0])]
    out += [SpanRect(r.r0, starts[0] - 1, 0, 0, r.score, r.projected) for r in stub if r.r0 < starts[0] <= r.r1]
    repairs.append(f"{len(rebuilt)} row label(s) spanning rows set where their text starts")
    return out + rebuilt


def _straddles(line: TextLine, rows: list[Band]) -> bool:
    """A row boundary runs through the middle half of the line's height."""
    quarter = (line.bottom - line.top) / 4
    return any(line.top + quarter < b.hi < line.bottom - quarter for b in rows[:-1])


def _labels_cut(lines: list[TextLine], stub: list[SpanRect], rows: list[Band]) -> bool:
    """Whether some wrapped label's lines (a line, then the lines going on in lower case) lie in
    two of the model's stub cells."""
    cell_of: list[int | None] = []
    for line in lines:
        r = _row_of(rows, (line.top + line.bottom) / 2)
        cell_of.append(next((i for i, c in enumerate(stub) if r is not None and c.r0 <= r <= c.r1), None))
    for i in range(1, len(lines)):
        if lines[i].text[:1].islower() and cell_of[i] != cell_of[i - 1]:
            return True
    return False


def _cy(w: Word) -> float:
    return (w.bbox[1] + w.bbox[3]) / 2


def _row_of(rows: list[Band], y: float) -> int | None:
    """The row band holding height `y`, if any."""
    return next((i for i, b in enumerate(rows) if b.lo <= y < b.hi), None)
