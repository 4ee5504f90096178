"""Row and column bands corrected with the words and ruling lines of the crop.

The structure model's rows and columns are approximate; the words and (on scans) the ruling
lines are exact. After the bands are snapped into a partition, four rules, each switchable:

- lines: a boundary moves onto a ruling line near it that cuts no word;
- gaps: a boundary that cuts words moves into the nearest whitespace gap, so no word is cut
  in two and every line of text falls wholly in one band;
- split: a band holding two word bands separated by a clear gap (or a ruling line), with
  words on both sides in most of the cross bands, is split: this recovers a row or column the
  model dropped or merged with its neighbour;
- slivers: a band left thin and empty between two boundaries in one gap (a duplicate that
  survived suppression) is given back to its neighbours;
- spans (applied by reconstruction, see `span_words`): a spanning cell whose slots hold
  separate texts is undone, and a run of text across a column boundary becomes one.

Pure: positions in, positions out, every change counted into `repairs`. A table without words
is left as the model gave it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from worker.core.bands import Band
from worker.core.types import BBox

Interval = tuple[float, float]
CUT_SLACK = 0.5  # px: a boundary within this of a run's edge lies on it (rounding), not through it


@dataclass(frozen=True, slots=True)
class RefineRules:
    """Which corrections run, and how far they may go (fractions of the bands involved)."""

    lines: bool = True
    gaps: bool = True
    split: bool = True
    slivers: bool = True
    spans: bool = True
    max_shift: float = 0.5  # a boundary moves at most this share of the median band
    split_share: float = 0.6  # cross bands with words on both sides of a split, of those with words
    split_gap: float = 0.6  # a split gap is at least this share of the typical gap between bands
    sliver: float = 0.3  # an empty band thinner than this share of the median band is a sliver

    @property
    def any(self) -> bool:
        return self.lines or self.gaps or self.split or self.slivers or self.spans


@dataclass(frozen=True, slots=True)
class Mark:
    """One word as one axis sees it: its extent along the axis and its centre across it."""

    lo: float
    hi: float
    cross: float
    alnum: bool = True
    lower: bool = False  # starts with a lower-case letter: reads as the continuation of a phrase


def clusters(marks: Sequence[Mark]) -> list[Interval]:
    """The union of the marks' extents as sorted disjoint intervals (runs of text lines)."""
    out: list[list[float]] = []
    for m in sorted(marks, key=lambda m: m.lo):
        if out and m.lo < out[-1][1]:
            out[-1][1] = max(out[-1][1], m.hi)
        else:
            out.append([m.lo, m.hi])
    return [(a, b) for a, b in out]


def _median(values: Sequence[float]) -> float:
    s = sorted(values)
    if not s:
        return 0.0
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def _cutting(runs: list[Interval], pos: float) -> Interval | None:
    """The run of text that `pos` falls inside by more than `CUT_SLACK` on both sides, if any (a
    boundary on a word's edge, to within rounding, cuts nothing)."""
    for a, b in runs:
        if a + CUT_SLACK < pos < b - CUT_SLACK:
            return (a, b)
        if a >= pos:
            break
    return None


def _gap_after(runs: list[Interval], run: Interval, limit: float) -> float:
    """Where the whitespace after `run` ends (the next run's start, or `limit`)."""
    nxt = [a for a, _ in runs if a >= run[1]]
    return min(nxt) if nxt else limit


def _gap_before(runs: list[Interval], run: Interval, limit: float) -> float:
    prv = [b for _, b in runs if b <= run[0]]
    return max(prv) if prv else limit


def _move_boundaries(
    bands: list[Band],
    marks: Sequence[Mark],
    n_cross: int,
    runs: list[Interval],
    lines: Sequence[float],
    rules: RefineRules,
    typical_gap: float,
    moved: set[int],
) -> tuple[int, int]:
    """Rules `lines` and `gaps` in place; returns (moved onto lines, moved into gaps) and adds
    the index of each band beside a moved boundary to `moved`."""
    on_lines = into_gaps = 0
    used: set[float] = set()
    tol = rules.max_shift * _median([b.size for b in bands])
    for k in range(len(bands) - 1):
        b = bands[k].hi
        lo_limit, hi_limit = bands[k].lo, bands[k + 1].hi
        target: float | None = None
        if rules.lines and lines:
            near = [
                x
                for x in lines
                if abs(x - b) <= tol and lo_limit < x < hi_limit and x not in used and _cutting(runs, x) is None
            ]
            if near:
                target = min(near, key=lambda x: abs(x - b))
                used.add(target)
                if abs(target - b) > 0.5:
                    on_lines += 1
                else:
                    target = None
        if target is None and rules.gaps:
            run = _cutting(runs, b)
            cut = [m for m in marks if m.lo < b < m.hi]
            if len(cut) == 1 and n_cross >= 3:
                run = None  # one word across an otherwise clean boundary: a span's text, not an error
            if run is not None:
                half = max(typical_gap / 2, 0.5)
                up_end = _gap_before(runs, run, lo_limit)
                down_end = _gap_after(runs, run, hi_limit)
                up = max((up_end + run[0]) / 2, run[0] - half) if run[0] > up_end else None
                down = min((run[1] + down_end) / 2, run[1] + half) if down_end > run[1] else None
                options = [t for t in (up, down) if t is not None and abs(t - b) <= tol and lo_limit < t < hi_limit]
                if options:
                    target = min(options, key=lambda t: abs(t - b))
                    into_gaps += 1
        if target is not None:
            bands[k].hi = target
            bands[k + 1].lo = target
            moved.update((k, k + 1))
    return on_lines, into_gaps


def split_bands(
    bands: list[Band],
    marks: Sequence[Mark],
    runs: list[Interval],
    lines: Sequence[float],
    cross_bands: Sequence[Interval],
    rules: RefineRules,
    typical_gap: float,
    cell_edges: Sequence[float] = (),
    every_word: Sequence[Mark] = (),
    gap_ref: float | None = None,
) -> list[Band]:
    """Rule `split`: cut a band at an inner gap (or ruling line) with text on both sides across
    it, or where a spanning cell the model found ends inside the band in a gap between words
    (a cell ends at a row or column boundary, so the band holds two). `gap_ref` replaces
    `typical_gap` as the measure of a clear inner gap."""
    out: list[Band] = []
    all_runs = clusters(every_word) if cell_edges else []
    for band in bands:
        margin = 0.5 * typical_gap
        for e in cell_edges:
            if not band.lo + margin < e < band.hi - margin or _cutting(all_runs, e) is not None:
                continue
            near = [m for m in every_word if band.lo <= (m.lo + m.hi) / 2 < band.hi]
            if any(m.hi <= e for m in near) and any(m.lo >= e for m in near):
                below = [a for a, _ in all_runs if a >= e]
                above = [b for _, b in all_runs if b <= e]
                if below and above and min(below) - max(above) >= rules.split_gap * typical_gap:
                    pos = (max(above) + min(below)) / 2
                    lo_band = Band(band.lo, pos, band.score)
                    out.append(lo_band)
                    band = Band(pos, band.hi, band.score)
        inner = [m for m in marks if band.lo <= (m.lo + m.hi) / 2 < band.hi]
        cuts: list[float] = []
        candidates: list[tuple[float, bool]] = []
        mine = [(a, b) for a, b in runs if band.lo < b and a < band.hi]
        for (_, a_end), (b_start, _) in zip(mine, mine[1:]):
            if b_start - a_end >= rules.split_gap * (gap_ref or typical_gap) and b_start - a_end > 0:
                candidates.append(((a_end + b_start) / 2, False))
        for x in lines:
            if band.lo < x < band.hi and _cutting(runs, x) is None:
                candidates.append((x, True))
        for pos, is_line in sorted(candidates):
            if any(abs(pos - c) < 1.0 for c in cuts):
                continue
            if _both_sides(inner, pos, cross_bands, rules.split_share, need=1 if is_line else 2):
                cuts.append(pos)
        edges = [band.lo, *sorted(cuts), band.hi]
        out += [Band(a, b, band.score) for a, b in zip(edges, edges[1:])]
    return out


def _both_sides(marks: Sequence[Mark], pos: float, cross_bands: Sequence[Interval], share: float, need: int) -> bool:
    """Most cross bands with text in this band have text (with letters or digits) on both sides."""
    occupied = both = 0
    for lo, hi in cross_bands:
        here = [m for m in marks if lo <= m.cross < hi and m.alnum]
        if not here:
            continue
        occupied += 1
        before = [m for m in here if m.hi <= pos]
        after = [m for m in here if m.lo >= pos]
        if before and after:
            first = min(after, key=lambda m: (m.lo, m.cross))
            if not first.lower:  # a wrapped phrase goes on in lower case; a new row does not
                both += 1
    return both >= need and both >= share * occupied


def _drop_slivers(bands: list[Band], marks: Sequence[Mark], rules: RefineRules, moved: set[int]) -> list[Band]:
    """Rule `slivers`: a band that a moved boundary left thin and touching no word at all is
    shared out between its neighbours (a band the model drew thin is left alone: it may be a
    real empty row)."""
    if len(bands) < 3:
        return bands
    limit = rules.sliver * _median([b.size for b in bands])
    out = [Band(b.lo, b.hi, b.score) for b in bands]
    keep = [i in moved for i in range(len(bands))]
    i = 0
    while i < len(out) and len(out) > 1:
        b = out[i]
        empty = not any(m.hi > b.lo and m.lo < b.hi for m in marks)
        if keep[i] and empty and b.size < limit:
            if i == 0:
                out[1].lo = b.lo
            elif i == len(out) - 1:
                out[i - 1].hi = b.hi
            else:
                mid = (b.lo + b.hi) / 2
                out[i - 1].hi = mid
                out[i + 1].lo = mid
            del out[i]
            del keep[i]
            continue
        i += 1
    return out


def typical_gap_of(bands: list[Band], runs: list[Interval]) -> float:
    """The usual whitespace between neighbouring bands' text: the gaps the model's boundaries
    fall in (gaps between lines inside one cell are smaller and would mislead a plain median)."""
    between: list[float] = []
    for a, b in zip(runs, runs[1:]):
        if any(a[1] <= band.hi <= b[0] for band in bands[:-1]):
            between.append(b[0] - a[1])
    if not between:
        between = [b[0] - a[1] for a, b in zip(runs, runs[1:])]
    return max(_median([g for g in between if g > 0]), 1.0)


def refine_axis(
    bands: list[Band],
    marks: Sequence[Mark],
    lines: Sequence[float],
    cross_bands: Sequence[Interval],
    rules: RefineRules,
    what: str,
    repairs: list[str],
    every_word: Sequence[Mark] = (),
    cell_edges: Sequence[float] = (),
) -> list[Band]:
    """All enabled rules along one axis; `marks` are the words that may not be cut on it,
    `every_word` all of them (a band touching any word is not an empty sliver)."""
    if not bands or not marks or not rules.any:
        return bands
    bands = [Band(b.lo, b.hi, b.score) for b in bands]
    every_word = every_word or marks
    runs = clusters(marks)
    typical_gap = typical_gap_of(bands, runs)
    lines = sorted(x for x in lines if bands[0].lo < x < bands[-1].hi)
    moved: set[int] = set()
    on_lines, into_gaps = _move_boundaries(bands, marks, len(cross_bands), runs, lines, rules, typical_gap, moved)
    if on_lines:
        repairs.append(f"{on_lines} {what} boundar{'y' if on_lines == 1 else 'ies'} moved onto a ruling line")
    if into_gaps:
        repairs.append(
            f"{into_gaps} {what} boundar{'y' if into_gaps == 1 else 'ies'} cutting words moved into the gap beside them"
        )
    if rules.slivers:
        before = len(bands)
        bands = _drop_slivers(bands, every_word, rules, moved)
        if len(bands) < before:
            repairs.append(f"{before - len(bands)} thin empty {what}(s) merged into their neighbours")
    if rules.split:
        before = len(bands)
        bands = split_bands(
            bands, marks, runs, lines if rules.lines else [], cross_bands, rules, typical_gap, cell_edges, every_word
        )
        if len(bands) > before:
            repairs.append(f"{len(bands) - before} {what}(s) recovered by splitting bands holding two lines of words")
    return bands


def marks_for(
    words: Sequence[tuple[BBox, str]], axis: str, skip: Sequence[BBox] = (), shrink: float = 0.0
) -> list[Mark]:
    """Word boxes as marks on `axis` ('y' for rows, 'x' for columns), leaving out words whose
    centre lies in one of `skip` (spanning cells, headers: their text may cross a boundary).
    `shrink` trims each extent by that share of its size on both ends (OCR boxes of
    neighbouring lines touch)."""
    out: list[Mark] = []
    for box, text in words:
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        if any(s[0] <= cx <= s[2] and s[1] <= cy <= s[3] for s in skip):
            continue
        lo, hi, cross = (box[1], box[3], cx) if axis == "y" else (box[0], box[2], cy)
        d = (hi - lo) * shrink
        t = text.strip()
        out.append(Mark(lo + d, hi - d, cross, any(ch.isalnum() for ch in t), t[:1].islower()))
    return out
