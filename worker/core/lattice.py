"""A table drawn as a full lattice of rules is read from its rules where the model's grid contradicts them.

A rule drawn between two cells is the page's own statement that they are two: no cell's text
sits on both sides of one. On a degraded scan SLANet-plus can still return row boxes that
straddle the rules of a fully ruled table (eu-003 p1's photocopy: every row a third of a row
low, each label's lines split between two rows, the header read as two rows), or a cell that
runs down across the rule under a spanning title. Where the table is a closed lattice (a frame
drawn along nearly its whole length on all four sides, every inner rule along half of it),
every inner rule is a boundary and each gap in one is a cell spanning across it, so the grid
follows from the drawing alone (`find_lattice`).

The lattice replaces the model's grid only where the two disagree on the words (`contradicts`).
A model grid that agrees with the rules is kept as it is, so ground truth that splits a visually
merged cell into empty ones (which the drawing cannot tell) keeps its reading, and an open or
partly ruled table never gets here.

Pure Python: rule positions with their drawn stretches (`RulingLines.h_runs`/`v_runs`) and
words, in crop pixels.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from statistics import median

from worker.core.bands import Band
from worker.core.geometry import overlap_1d
from worker.core.headers import is_figure, is_value_row
from worker.core.spans import SpanRect
from worker.core.types import BBox, RulingLines, Word

BRIDGE = 2.0  # a break in a drawn rule up to this many text heights is lost ink (a drop-out), not a span
DOUBLE = 0.8  # rules closer than this many text heights are one (a double rule)
FULL = 0.5  # every inner rule drawn along at least this share of the frame
FRAME_GAP = 3.0  # nor broken anywhere by more than this many text heights
DOUBLE_GAP = 2.0  # two rules closer than this many text heights with no text between are one double rule
FRAME = 0.85  # the outer rules are drawn along at least this share of the frame's side
DRAWN = 0.5  # a boundary between two slots is drawn where its rule covers this share of their common side
TRIM = 0.3  # a word's box, trimmed by this share of its height, lies across a horizontal rule it holds
ACROSS = 1.0  # a word reaching this many of its heights past a rule's line on both sides lies across it
STROKE = 0.5  # a word no wider than this share of its height, on a vertical rule, is the rule
ANCHOR = 1.0  # a rule's stretch ends on a crossing rule within this many text heights (3 px at least)
ANCHORED = 2.0  # ... and is this many text heights long, or the rule is no rule between cells
SPACE = 0.6  # words this many text heights apart or closer are one phrase, not two cells' texts
APART = 1.0  # texts of two slots further apart than this many text heights are two cells' texts
STACKED = 3  # lines of figures in one cell that are rows the rules do not part
MIN_SLOTS = 2  # rows and columns a lattice needs at least
SIDE_RULES = 1  # an open side: the bottom rule and this many others start (or end) on its line

Runs = tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Rule:
    """One rule after double rules are joined: its position and its drawn stretches."""

    at: float
    runs: Runs


@dataclass(frozen=True)
class Lattice:
    """The table as its rules draw it: row and column bands between the rules, each cell a
    rectangle of slots (1x1 included), and the frame (x0, y0, x1, y1)."""

    rows: list[Band]
    cols: list[Band]
    rects: list[SpanRect]
    frame: BBox
    h: list[Rule]
    v: list[Rule]
    height: float


def find_lattice(lines: RulingLines | None, words: Sequence[Word], spans: Sequence[BBox] = ()) -> Lattice | None:
    """The lattice the rules draw, or None where they draw none (no frame, a gap that leaves
    no rectangle, figures stacked in one cell, no stretches known). `spans`, the model's
    spanning cells' boxes, decide for a word set close against a vertical rule's line whether
    the rule stops there (the last "1" of a year centred over two columns) or runs on (a
    figure set against it)."""
    if lines is None or not words or len(lines.h_runs) != len(lines.h) or len(lines.v_runs) != len(lines.v):
        return None
    height = median(w.bbox[3] - w.bbox[1] for w in words)
    hs = [_off_words(r, words, 1) for r in _joined(lines.h, lines.h_runs, height)]
    vs = [
        _between_words(_off_words(r, words, 0, spans), words, height, spans)
        for r in _joined(lines.v, lines.v_runs, height)
    ]
    tol, length = max(3.0, ANCHOR * height), ANCHORED * height
    vs, opened = _open_sides_drawn(hs, vs, words, tol)
    hs, vs = _anchored(hs, vs, tol, length), _anchored(vs, hs, tol, length)
    hs, vs = _framed(hs, vs, tol)
    hs = _doubles(hs, [_mid(w, 1) for w in words], DOUBLE_GAP * height)
    vs = _doubles(vs, [_mid(w, 0) for w in words], DOUBLE_GAP * height)
    if len(hs) < MIN_SLOTS + 1 or len(vs) < MIN_SLOTS + 1:
        return None
    top, bottom, left, right = hs[0].at, hs[-1].at, vs[0].at, vs[-1].at
    # an open-sided table's top rule may leave its stub head open
    if min(_cover(hs[0].runs, left, right), _cover(hs[-1].runs, left, right)) < (FULL if opened else FRAME):
        return None
    if min(_cover(vs[0].runs, top, bottom), _cover(vs[-1].runs, top, bottom)) < FRAME:
        return None
    if any(_longest_gap(r.runs, top, bottom) > FRAME_GAP * height for r in (vs[0], vs[-1])):
        return None  # a side broken between two tables one crop holds, with a caption between
    # ... measured from where the top rule starts, where the stub head is left open
    head_from = max(left, hs[0].runs[0][0]) if opened and hs[0].runs else left
    if _longest_gap(hs[0].runs, head_from, right) > FRAME_GAP * height:
        return None
    if _longest_gap(hs[-1].runs, left, right) > FRAME_GAP * height:
        return None
    if any(_cover(r.runs, top, bottom) < FULL for r in vs[1:-1]) or any(
        _cover(r.runs, left, right) < FULL for r in hs[1:-1]
    ):
        return None  # rules drawn in a part of the table only (a shaded header's): no full lattice
    if _open_sides(words, hs, vs, height, opened):
        return None
    rows = [Band(a.at, b.at, 1.0) for a, b in zip(hs, hs[1:])]
    cols = [Band(a.at, b.at, 1.0) for a, b in zip(vs, vs[1:])]
    rects = _cells(rows, cols, hs, vs, words, height)
    if rects is None or _stacked_figures(rects, rows, cols, words, height):
        return None
    return Lattice(rows, cols, rects, (left, top, right, bottom), hs, vs, height)


def _open_sides_drawn(hs: list[Rule], vs: list[Rule], words: Sequence[Word], tol: float) -> tuple[list[Rule], bool]:
    """`vs` with the sides of an open-sided table drawn in: horizontal rules across the table
    and vertical rules between its columns only, none down its outer edges (eu-012 p4). Where
    the bottom rule and `SIDE_RULES` others at least start at one x, outside every vertical rule
    and on none, and text stands between it and the nearest vertical rule, that x is the
    table's left side; likewise their ends and the right side. A rule wider than the table (a
    page rule under a caption) is one rule, and marks no side. Whether any side was drawn in
    comes back too: the top rule of such a table may leave its stub head open."""
    if len(hs) < MIN_SLOTS + 1 or not vs or any(not r.runs for r in hs):
        return vs, False
    top, bottom = hs[0].at, hs[-1].at
    sides = []
    for left in (True, False):

        def end(r: Rule, left: bool = left) -> float:
            return r.runs[0][0] if left else r.runs[-1][1]

        at = end(hs[-1])
        agree = [r for r in hs if abs(end(r) - at) <= tol]
        if len(agree) <= SIDE_RULES or any(abs(v.at - at) <= tol for v in vs):
            continue
        inner = min(v.at for v in vs) if left else max(v.at for v in vs)
        if (at >= inner) if left else (at <= inner):
            continue
        lo, hi = sorted((at, inner))
        if not any(lo < _mid(w, 0) < hi and top < _mid(w, 1) < bottom for w in words):
            continue
        sides.append(Rule(at, ((top, bottom),)))
    if not sides:
        return vs, False
    return sorted([*vs, *sides], key=lambda r: r.at), True


def _anchored(rules: list[Rule], crossing: list[Rule], tol: float, length: float) -> list[Rule]:
    """The inner `rules` that are rules between cells: one stretch at least `length` long ends
    on a crossing rule (within `tol`), and the rule is drawn along some cell's side. Ink that
    starts and stops inside cells is text or a screen's dots. The outermost two stay, for the
    frame test to judge."""
    ends = [c.at for c in crossing]
    slots = list(zip(ends, ends[1:]))
    out = []
    for k, rule in enumerate(rules):
        anchored = any(
            b - a >= length and any(abs(a - e) <= tol or abs(b - e) <= tol for e in ends) for a, b in rule.runs
        )
        if k in (0, len(rules) - 1) or (anchored and any(_cover(rule.runs, a, b) >= DRAWN for a, b in slots)):
            out.append(rule)
    return out


def _doubles(rules: list[Rule], mids: list[float], gap: float) -> list[Rule]:
    """`rules` with each two closer than `gap` with no text between them joined (a double rule
    drawn apart by more than `DOUBLE`: the space inside it is no row or column)."""
    out: list[Rule] = []
    for rule in rules:
        if out and rule.at - out[-1].at < gap and not any(out[-1].at < m < rule.at for m in mids):
            out.append(_one(out.pop(), rule))
        else:
            out.append(rule)
    return out


def _longest_gap(runs: Runs, lo: float, hi: float) -> float:
    """The longest stretch of `lo`..`hi` the runs leave undrawn."""
    longest, at = 0.0, lo
    for a, b in sorted(runs):
        if b <= at:
            continue
        longest = max(longest, min(a, hi) - at)
        at = max(at, b)
        if at >= hi:
            break
    return max(longest, hi - at)


def _framed(hs: list[Rule], vs: list[Rule], tol: float) -> tuple[list[Rule], list[Rule]]:
    """The rules within the frame: an outer rule that neither outer rule across it reaches
    (a caption's underline or a page rule wider than the table, over or beside it) is left out,
    until the four sides meet."""
    changed = True
    while changed and len(hs) > 2 and len(vs) > 2:
        changed = False
        for rules, across in ((hs, vs), (vs, hs)):
            for k in (0, -1):
                if not any(_cover(a.runs, rules[k].at - tol, rules[k].at + tol) > 0 for a in (across[0], across[-1])):
                    del rules[k]
                    changed = True
                    break
            if changed:
                break
    return hs, vs


def _open_sides(words: Sequence[Word], hs: list[Rule], vs: list[Rule], height: float, opened: bool = False) -> bool:
    """Whether the table goes on past a side of the frame: both rules across that side run on
    beyond it to a word lying wholly past it (a crop cut below a title row's top rule). Specks
    and rule pieces read as text, under half a text height, do not count. Where the frame's
    sides were drawn in (`opened`), the top rule may leave the stub head open, so the bottom
    rule alone running on to a word beside the frame says the table goes on (a stub column
    whose side no rule marked)."""
    top, bottom, left, right = hs[0].at, hs[-1].at, vs[0].at, vs[-1].at
    for w in words:
        x0, y0, x1, y1 = w.bbox
        if y1 - y0 < 0.5 * height:
            continue
        x, y = _mid(w, 0), _mid(w, 1)
        if left < x < right and (y1 < top or y0 > bottom):
            lo, hi = (y, top) if y1 < top else (bottom, y)
            if all(_cover(v.runs, lo, hi) > 0.5 for v in (vs[0], vs[-1])):
                return True
        if top < y < bottom and (x1 < left or x0 > right):
            lo, hi = (x, left) if x1 < left else (right, x)
            if all(_cover(h.runs, lo, hi) > 0.5 for h in ((hs[-1],) if opened else (hs[0], hs[-1]))):
                return True
    return False


def _between_words(rule: Rule, words: Sequence[Word], height: float, spans: Sequence[BBox]) -> Rule:
    """A vertical `rule` without the stretches that pass between the middles of two words of
    one line a word space apart at most ("of | franchisors", "ofen d|o"), where one of the
    model's spanning cells (`spans`) holds them across it: there it is a letter's stroke. Two
    cells' texts a photocopy's spread set as close ("1980** | By") stay apart where the model
    read them apart."""
    held = [b for b in spans if b[0] < rule.at < b[2]]
    if not held:
        return rule
    out = list(rule.runs)
    words = [w for w in words if any(b[1] <= _mid(w, 1) <= b[3] for b in held)]
    for a in words:
        if _mid(a, 0) >= rule.at:
            continue
        for b in words:
            if _mid(b, 0) <= rule.at or b.bbox[0] - a.bbox[2] > SPACE * height:
                continue
            lo, hi = max(a.bbox[1], b.bbox[1]), min(a.bbox[3], b.bbox[3])
            if hi - lo < 0.5 * min(a.bbox[3] - a.bbox[1], b.bbox[3] - b.bbox[1]):
                continue  # not one line
            lo, hi = min(a.bbox[1], b.bbox[1]), max(a.bbox[3], b.bbox[3])
            if not any(box[1] <= (lo + hi) / 2 <= box[3] for box in held):
                continue
            out = _cut(out, lo, hi)
    return Rule(rule.at, tuple(out))


def _stacked_figures(
    rects: Sequence[SpanRect], rows: Sequence[Band], cols: Sequence[Band], words: Sequence[Word], height: float
) -> bool:
    """Whether the lattice's cells hold rows of values the rules do not part (a table ruled by
    columns only), not one cell's wrapped text: a cell with STACKED lines that are each a
    figure, or two cells of one row below the first with two such lines each."""
    doubled: dict[int, int] = {}
    for cell in rects:
        box = (cols[cell.c0].lo, rows[cell.r0].lo, cols[cell.c1].hi, rows[cell.r1].hi)
        lines: list[list[Word]] = []
        for w in sorted(_inside(words, box), key=lambda w: _mid(w, 1)):
            if lines and _mid(w, 1) - _mid(lines[-1][-1], 1) < 0.5 * height:
                lines[-1].append(w)
            else:
                lines.append([w])
        figures = sum(1 for line in lines if is_figure(" ".join(w.text for w in line)))
        if figures >= STACKED:
            return True
        if figures >= 2 and cell.r0 > 0:
            doubled[cell.r0] = doubled.get(cell.r0, 0) + 1
    return any(n >= 2 for n in doubled.values())


def contradicts(
    lattice: Lattice, rows: Sequence[Band], cols: Sequence[Band], rects: Sequence[SpanRect], words: Sequence[Word]
) -> bool:
    """Whether the model's grid (`rects` over `rows` x `cols`, unlisted slots 1x1) and the
    drawing disagree on words: one of the model's cells holds words on both sides of an inner
    rule drawn across it, or one of the lattice's cells holds words on both sides of a
    boundary the model draws through it (a wrapped label read as two rows), or the model parts
    one of the lattice's columns of text (`_column_parted`). Never where the model's columns
    stand at gutters the rules do not draw (`_undrawn_gutters`: a rule too light to be found),
    or its rows part labels from a row of values the rules do not part (`_undrawn_value_row`:
    a header set off by its shading, not a rule). So does an empty row or column of the model's
    that the rules do not draw (`_empty_undrawn`), and text inside the frame that the model's
    grid leaves out (`_left_out`)."""
    if _undrawn_gutters(lattice, cols, words) or _undrawn_value_row(lattice, rows, words):
        return False
    if _left_out(lattice, rows, cols, words):
        return True
    for cell in _all_cells(len(rows), len(cols), rects):
        box = (cols[cell.c0].lo, rows[cell.r0].lo, cols[cell.c1].hi, rows[cell.r1].hi)
        inside = _inside(words, box)
        for rule in lattice.h[1:-1]:
            if box[1] < rule.at < box[3] and _cover(rule.runs, box[0], box[2]) >= DRAWN and _parted(inside, rule.at, 1):
                return True
        for rule in lattice.v[1:-1]:
            if box[0] < rule.at < box[2] and _cover(rule.runs, box[1], box[3]) >= DRAWN and _parted(inside, rule.at, 0):
                return True
    for cell in lattice.rects:
        box = (lattice.cols[cell.c0].lo, lattice.rows[cell.r0].lo, lattice.cols[cell.c1].hi, lattice.rows[cell.r1].hi)
        inside = _inside(words, box)
        if any(
            box[1] < b.lo < box[3] and _parted(inside, b.lo, 1) and _through(rects, rows, cols, b.lo, box, 1)
            for b in rows[1:]
        ):
            return True
        if any(
            box[0] < b.lo < box[2] and _parted(inside, b.lo, 0) and _through(rects, rows, cols, b.lo, box, 0)
            for b in cols[1:]
        ):
            return True
    if _column_parted(lattice, rows, cols, rects, words):
        return True
    return _empty_undrawn(lattice, rows, 1, words) or _empty_undrawn(lattice, cols, 0, words)


def _left_out(lattice: Lattice, rows: Sequence[Band], cols: Sequence[Band], words: Sequence[Word]) -> bool:
    """Whether a word of text (half a text height or more) lies inside the frame with its
    middle outside the model's grid: the first line of a header's labels over the
    model's first row (a blurred scan, eu-004 p2: "number of" and "inhabitants" over every
    column's label were left out of the table, and each value's column lost its label)."""
    x0, y0, x1, y1 = lattice.frame
    gx0, gy0, gx1, gy1 = cols[0].lo, rows[0].lo, cols[-1].hi, rows[-1].hi
    for w in off_rules(lattice, words):  # a rule read as "1" is no text
        if w.bbox[3] - w.bbox[1] < 0.5 * lattice.height:
            continue
        x, y = _mid(w, 0), _mid(w, 1)
        if not (x0 < x < x1 and y0 < y < y1):
            continue
        if not (gx0 <= x < gx1 and gy0 <= y < gy1):
            return True
    return False


def _empty_undrawn(lattice: Lattice, bands: Sequence[Band], axis: int, words: Sequence[Word]) -> bool:
    """Whether one of the model's rows (axis 1) or columns (axis 0) holds no text inside the
    frame and is not drawn: one of its two edges is further than a text height from every rule
    across it. A column the model set off the rules (eu-007 p3's photocopy: an empty column
    astride a rule), or a row of specks under the frame, is no slot of a table whose every
    slot is drawn; an empty slot between two rules is (it stays with the model). Specks under
    half a text height are no text."""
    at = [r.at for r in (lattice.h if axis == 1 else lattice.v)]
    x0, y0, x1, y1 = lattice.frame
    lo, hi = (x0, x1) if axis == 1 else (y0, y1)
    text = [w for w in words if w.bbox[3] - w.bbox[1] >= 0.5 * lattice.height and lo <= _mid(w, 1 - axis) < hi]
    for band in bands:
        if any(band.lo <= _mid(w, axis) < band.hi for w in text):
            continue
        if any(min(abs(edge - a) for a in at) > lattice.height for edge in (band.lo, band.hi)):
            return True
    return False


def _undrawn_gutters(lattice: Lattice, cols: Sequence[Band], words: Sequence[Word]) -> bool:
    """Whether one of the model's column boundaries stands in a gutter inside a column of the
    lattice: in two of its rows or more, and in more rows than not, the texts on its two sides
    stand a text height apart or more. Columns the rules do not part there (inner rules lighter
    than the frame, not found) are columns all the same, and the lattice is not the table."""
    for col, at in _model_boundaries_inside(lattice, lattice.cols, cols):
        gutters = runs = 0
        for row in lattice.rows:
            inside = _inside(words, (col.lo, row.lo, col.hi, row.hi))
            left = [w.bbox[2] for w in inside if _mid(w, 0) < at]
            right = [w.bbox[0] for w in inside if _mid(w, 0) > at]
            if not left or not right:
                continue
            if min(right) - max(left) >= lattice.height:
                gutters += 1
            else:
                runs += 1
        if gutters >= 2 and gutters > runs:
            return True
    return False


def _model_boundaries_inside(
    lattice: Lattice, bands: Sequence[Band], model: Sequence[Band]
) -> Iterator[tuple[Band, float]]:
    """(lattice band, position) for each of the model's boundaries lying more than a text
    height inside one of the lattice's `bands` (its rows or its columns)."""
    for band in bands:
        for b in model[1:]:
            if band.lo + lattice.height < b.lo < band.hi - lattice.height:
                yield band, b.lo


def _undrawn_value_row(lattice: Lattice, rows: Sequence[Band], words: Sequence[Word]) -> bool:
    """Whether one of the model's row boundaries stands inside a row of the lattice with text
    above it and a row of values below it (`headers.is_value_row`, two values at least): a
    header's labels over the first row of values, parted on the page by a fill's edge or a rule
    too light to be found, not a cell's wrapped lines (years and units are labels)."""
    for row, at in _model_boundaries_inside(lattice, lattice.rows, rows):
        inside = _inside(words, (lattice.frame[0], row.lo, lattice.frame[2], row.hi))
        if not any(_mid(w, 1) < at for w in inside):
            continue
        below = [
            " ".join(
                w.text
                for w in sorted(inside, key=lambda w: (w.bbox[1], w.bbox[0]))
                if col.lo <= _mid(w, 0) < col.hi and _mid(w, 1) > at
            )
            for col in lattice.cols
        ]
        if sum(1 for t in below[1:] if t) >= 2 and is_value_row(below):
            return True
    return False


def _column_parted(
    lattice: Lattice, rows: Sequence[Band], cols: Sequence[Band], rects: Sequence[SpanRect], words: Sequence[Word]
) -> bool:
    """Whether the model draws a column boundary down a column of the lattice, through the
    whole table where no rule is drawn, with the column's texts on its two sides overlapping
    across it: one column of figures read as two ("19.9%" left of it, "24.1%" right)."""
    top, bottom = lattice.frame[1], lattice.frame[3]
    for col in lattice.cols:
        inside = [w for w in words if col.lo <= _mid(w, 0) < col.hi and top <= _mid(w, 1) < bottom]
        for b in cols[1:]:
            if not col.lo < b.lo < col.hi or not _through(rects, rows, cols, b.lo, (col.lo, top, col.hi, bottom), 0):
                continue
            left = [w.bbox[2] for w in inside if _mid(w, 0) < b.lo]
            right = [w.bbox[0] for w in inside if _mid(w, 0) > b.lo]
            if left and right and max(left) > min(right):
                return True
    return False


def off_rules(lattice: Lattice, words: Sequence[Word]) -> list[Word]:
    """`words` without the vertical rules the OCR read as text: a word no wider than STROKE of
    its height, standing on a rule drawn along it ("1" at every rule of a row, "i" where the
    photocopy broke it). The rule's position is the evidence here, so any glyph counts, where
    `header_words.is_rule_debris`, knowing no rules, takes "1", "|" and the like only."""
    return [
        w
        for w in words
        if not (
            w.bbox[2] - w.bbox[0] <= STROKE * (w.bbox[3] - w.bbox[1])
            and any(
                w.bbox[0] - 1 <= v.at <= w.bbox[2] + 1 and _cover(v.runs, w.bbox[1], w.bbox[3]) >= DRAWN
                for v in lattice.v
            )
        )
    ]


def _inside(words: Sequence[Word], box: BBox) -> list[Word]:
    return [w for w in words if box[0] <= _mid(w, 0) < box[2] and box[1] <= _mid(w, 1) < box[3]]


def _through(
    rects: Sequence[SpanRect],
    rows: Sequence[Band],
    cols: Sequence[Band],
    at: float,
    box: BBox,
    axis: int,
) -> bool:
    """Whether the model's boundary at `at` (a row boundary for axis 1, a column one for 0)
    runs through `box` for most of its width: no spanning cell of the model covers it there."""
    lo, hi = (box[0], box[2]) if axis == 1 else (box[1], box[3])
    covered = 0.0
    for r in rects:
        a, b = (rows[r.r0].lo, rows[r.r1].hi) if axis == 1 else (cols[r.c0].lo, cols[r.c1].hi)
        if a < at < b:
            c, d = (cols[r.c0].lo, cols[r.c1].hi) if axis == 1 else (rows[r.r0].lo, rows[r.r1].hi)
            covered += overlap_1d(c, d, lo, hi)
    return covered < (1 - DRAWN) * (hi - lo)


def _parted(words: Sequence[Word], at: float, axis: int) -> bool:
    return any(_mid(w, axis) < at for w in words) and any(_mid(w, axis) > at for w in words)


def _mid(w: Word, axis: int) -> float:
    return (w.bbox[axis] + w.bbox[axis + 2]) / 2


def _joined(at: Sequence[float], runs: Sequence[Runs], height: float) -> list[Rule]:
    """Rules in order, their breaks of up to BRIDGE text heights closed, and rules within
    DOUBLE text heights of each other joined into one."""
    out: list[Rule] = []
    for pos, rule in sorted(zip(at, runs)):
        if out and pos - out[-1].at <= DOUBLE * height:
            out.append(_one(out.pop(), Rule(pos, tuple(rule))))
        else:
            out.append(Rule(pos, tuple(rule)))
    return [Rule(r.at, _bridged(r.runs, BRIDGE * height)) for r in out]


def _one(a: Rule, b: Rule) -> Rule:
    """Two rules of a double rule as one, halfway between them, drawn where either is."""
    return Rule((a.at + b.at) / 2, _bridged((*a.runs, *b.runs), 0.0))


def _bridged(runs: Runs, gap: float) -> Runs:
    out: list[tuple[float, float]] = []
    for a, b in sorted(runs):
        if out and a - out[-1][1] <= gap:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return tuple(out)


def _cover(runs: Runs, lo: float, hi: float) -> float:
    """The share of `lo`..`hi` the stretches draw."""
    if hi <= lo:
        return 0.0
    return sum(overlap_1d(a, b, lo, hi) for a, b in runs) / (hi - lo)


def _cells(
    rows: list[Band], cols: list[Band], hs: list[Rule], vs: list[Rule], words: Sequence[Word], height: float
) -> list[SpanRect] | None:
    """Slots joined across every boundary left undrawn, unless each side holds its own text
    clear of the other's (a rule the photocopy lost between "Finland" and "89"); None unless
    each group is a rectangle."""
    n_rows, n_cols = len(rows), len(cols)
    held = [[_inside(words, (c.lo, r.lo, c.hi, r.hi)) for c in cols] for r in rows]
    parent = list(range(n_rows * n_cols))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for r in range(n_rows):
        for c in range(1, n_cols):
            if _cover(vs[c].runs, rows[r].lo, rows[r].hi) < DRAWN and not _apart(held[r][c - 1], held[r][c], 0, height):
                parent[find(r * n_cols + c)] = find(r * n_cols + c - 1)
    for r in range(1, n_rows):
        for c in range(n_cols):
            if _cover(hs[r].runs, cols[c].lo, cols[c].hi) < DRAWN and not _apart(held[r - 1][c], held[r][c], 1, height):
                parent[find(r * n_cols + c)] = find((r - 1) * n_cols + c)
    groups: dict[int, list[tuple[int, int]]] = {}
    for r in range(n_rows):
        for c in range(n_cols):
            groups.setdefault(find(r * n_cols + c), []).append((r, c))
    rects = []
    for slots in groups.values():
        r0, r1 = min(s[0] for s in slots), max(s[0] for s in slots)
        c0, c1 = min(s[1] for s in slots), max(s[1] for s in slots)
        if (r1 - r0 + 1) * (c1 - c0 + 1) != len(slots):
            return None  # a gap in the rules that leaves no rectangle: not a lattice
        rects.append(SpanRect(r0, r1, c0, c1))
    if len(rects) < MIN_SLOTS:
        return None
    return sorted(rects, key=lambda s: (s.r0, s.c0))


def _off_words(rule: Rule, words: Sequence[Word], axis: int, spans: Sequence[BBox] = ()) -> Rule:
    """`rule` without the stretches the words lying across it cover: a rule's pixels are found
    as any ink on its line, so letters over the line of a rule that stops short of them (a title
    spanning two columns) would read as the rule drawn on. A word lies across a horizontal rule
    that runs through its box TRIM of its height from the top and bottom (OCR boxes are padded).
    Across a vertical one it lies when it reaches ACROSS of its height past it on both sides;
    nearer its end, only where one of the model's spanning cells (`spans`) holds it across the
    rule: a figure set against a rule, its box padded or a speck read onto it, is not across."""
    out = list(rule.runs)
    for w in words:
        height = w.bbox[3] - w.bbox[1]
        if not w.bbox[axis] + TRIM * height < rule.at < w.bbox[axis + 2] - TRIM * height:
            continue
        if axis == 0 and not w.bbox[0] + ACROSS * height < rule.at < w.bbox[2] - ACROSS * height:
            if not any(b[0] < rule.at < b[2] and b[1] <= _mid(w, 1) <= b[3] for b in spans):
                continue
        lo, hi = w.bbox[1 - axis], w.bbox[3 - axis]
        out = _cut(out, lo, hi)
    return Rule(rule.at, tuple(out))


def _cut(runs: Sequence[tuple[float, float]], lo: float, hi: float) -> list[tuple[float, float]]:
    """`runs` with `lo`..`hi` taken out of them."""
    return [part for a, b in runs for part in ((a, min(b, lo)), (max(a, hi), b)) if part[1] > part[0]]


def _apart(before: Sequence[Word], after: Sequence[Word], axis: int, height: float) -> bool:
    """Whether two neighbouring slots each hold text, further apart across their boundary than
    APART text heights: two cells' texts, not one text spanning both."""
    if not before or not after:
        return False
    return min(w.bbox[axis] for w in after) - max(w.bbox[axis + 2] for w in before) > APART * height


def _all_cells(n_rows: int, n_cols: int, rects: Sequence[SpanRect]) -> list[SpanRect]:
    taken = {slot for s in rects for slot in s.slots()}
    return [*rects, *(SpanRect(r, r, c, c) for r in range(n_rows) for c in range(n_cols) if (r, c) not in taken)]
