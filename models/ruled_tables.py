"""Ruled tables found on a page by their lines: a second, model-free table finder for scans.

The layout detector reads tables by their look (shaded headers, text texture). On a
black-and-white photocopy the shading is gone, the strokes are bolder and toner specks are
everywhere, and it drops tables or draws one box over two of them (docs/scans.md). The ruling
lines survive a photocopy: a grid of horizontal and vertical rules that cross one another is a
table whatever the detector thinks of its texture.

A grid is a set of horizontal and vertical rules, connected through their crossings, with at
least `MIN_H` horizontal and `MIN_V` vertical lines (pieces of one rule count once): more than a
box drawn round a paragraph or a figure's frame. Its density is judged by its rules' pieces, as
a chart's or a halftone's are many. Rules are found as in `models.rules` (long, thin dark runs),
after one-pixel gaps along a line are closed (a photocopy drops ink out of its rules). On a
black-and-white page, where these plain rules make no grid, the page is looked at again with
dashed and dotted rules bridged over paper (a threshold breaks a thin grey rule into dashes,
where a grey page keeps it whole and its dashes are a chart's gridlines); only there, since
bridged, a shaded band's dots make a table too dense. A shaded band, photocopied, is a field of
dots whose every column reads as a short rule, so its table looks packed too tight for one: on a
black-and-white page such a grid is looked for again with the halftone screens' ink taken out,
its rules counted by line (the mask cuts them where dots touched them), and a whole table found
so, with `MIN_ACROSS` horizontal rules across most of its width, is kept (a chart's patterned
bars are screens too, and what is left of a chart or a flowchart is no whole table).

numpy and PIL; plain data out (boxes in the page's pixels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from models.dotted_rules import dotted_rule_mask
from models.halftone import screen_mask
from models.page_normalise import is_binary, wipe_specks
from models.rules import DARK, RULE_MAX_THICKNESS_PX, rule_length, runs
from worker.core.geometry import intersection_area

MIN_H = 3  # horizontal rules in a grid: a frame and at least one row line
MIN_V = 3  # vertical rules in a grid: a frame and at least one column line
CROSS_TOL = 3  # px: a rule reaching this close to another crosses it
# a whole table has at least this many horizontal rules across FULL_SHARE of its width (its top
# and bottom, or its header's); a grid with fewer is a part, or no table (a flowchart's boxes)
MIN_ACROSS, FULL_SHARE = 2, 0.75
SAME_LINE_PX = 2  # pieces of rules this close across are one line (a chart's gridlines are 4 px apart or more)
MIN_WIDTH_IN, MIN_HEIGHT_IN = 1.0, 0.4  # smaller grids are logos, checkboxes, icons
# a table of two ruled rows is lower (0.35 in at 10 pt): such a grid is taken only as a table of
# its own, where no box covers it, never to reshape a box (a big table's ruled header band is one)
MIN_LONE_HEIGHT_IN = 0.25
MIN_ROW_PITCH_IN = 0.08  # rules closer on average than this (about a 6-pt line) are a chart's ...
MIN_COLUMN_PITCH_IN = 0.15  # ... gridlines, a halftone or a photo, not a table's rows and columns
FRAME_SIDES_IN = 0.05  # grids one above the other whose sides lie this close ...
FRAME_GAP_IN = 0.5  # ... this close, ...
FRAME_INK = 0.8  # ... and whose side rules run on through the gap (ink on this share of its rows) are one
FRAME_SLACK_PX = 2  # a side rule is looked for this far either side of the grid's edge
PAPER = 208  # grey level a dashed rule's gaps reach at least: halfway from DARK to white
SCREEN_REACH_PX = 40  # how far the screen mask looks round a pixel (its squares and its closing), and more
BODY_X_HEIGHT_IN = 0.065  # x-height of 9-10 pt body text: dashed rules' gaps and thickness are measured in it


@dataclass(frozen=True)
class Rule:
    """One rule: `at` is its y (horizontal) or x (vertical), `lo`-`hi` its extent along itself."""

    at: float
    lo: int
    hi: int


@dataclass(frozen=True)
class Grid:
    """A ruled table: its box (page pixels) and the rules it is made of."""

    box: tuple[float, float, float, float]
    horizontal: int  # rules: their pieces, or their lines where the screens were taken out
    vertical: int
    across: int  # horizontal rules across most of its width (`FULL_SHARE`)


def find_grids(image: Image.Image, dpi: int, min_height_in: float = MIN_HEIGHT_IN) -> list[Grid]:
    """Ruled grids on a page rendered or scanned at `dpi`, top to bottom, at least
    `min_height_in` high (`is_low` tells the two-row ones when a lower bound is asked for)."""
    grey = np.asarray(image.convert("L"))
    dark, paper = grey < DARK, grey >= PAPER
    grids = _ruled(dark, paper, dpi, by_line=False, bridge=False)
    seen = [g.box for g in grids if _big_enough(g, dpi, min_height_in)]
    found = [g for g in grids if _table_like(g, dpi, min_height_in)]
    table_boxes = {g.box for g in found}
    dense = [b for b in seen if b not in table_boxes]
    if not is_binary(image):  # a grey page keeps its thin rules whole: its dashes are drawn so
        return sorted(found, key=lambda g: (g.box[1], g.box[0]))
    # dashed tables, where the plain rules made no grid
    bridged = _ruled(dark, paper, dpi, by_line=False, bridge=True)
    found += [
        g
        for g in bridged
        if _table_like(g, dpi, min_height_in) and not any(intersection_area(g.box, b) > 0 for b in seen)
    ]
    if dense:  # a shaded band's dots, photocopied, read as rules packed tighter than rows
        screen = _screens(dark, dense)  # its dots, taken out, are paper
        screened = _ruled(dark & ~screen, paper | screen, dpi, by_line=True, bridge=True)
        whole = [g for g in screened if _table_like(g, dpi, min_height_in) and _whole(g)]
        found += [g for g in whole if any(_within(g.box, d) for d in dense)]
    return sorted(found, key=lambda g: (g.box[1], g.box[0]))


def _screens(dark: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> np.ndarray:
    """The halftone screens of `dark` in `boxes` (a page's screen mask costs a fifth of a second;
    the mask is local, so each box is masked with `SCREEN_REACH_PX` of the page around it)."""
    screen = np.zeros_like(dark)
    h, w = dark.shape
    for x0, y0, x1, y1 in boxes:
        top, bottom = max(0, int(y0) - SCREEN_REACH_PX), min(h, int(y1) + SCREEN_REACH_PX + 1)
        left, right = max(0, int(x0) - SCREEN_REACH_PX), min(w, int(x1) + SCREEN_REACH_PX + 1)
        screen[top:bottom, left:right] |= screen_mask(dark[top:bottom, left:right])
    return screen


def _ruled(dark: np.ndarray, paper: np.ndarray, dpi: int, by_line: bool, bridge: bool) -> list[Grid]:
    """Every connected set of crossing rules in `dark` with enough of each kind, table-like or not;
    counted `by_line` (pieces of one rule once) or by the pieces; dashes bridged or not."""
    min_len = rule_length(dpi)
    rows, columns = dark, np.ascontiguousarray(dark.T)
    if bridge:
        rows = dashes_bridged(rows, paper, dpi, min_len)
        columns = dashes_bridged(columns, np.ascontiguousarray(paper.T), dpi, min_len)
    return _grids(_rules(close_gaps(rows), min_len), _rules(close_gaps(columns), min_len), by_line)


def _within(inner: tuple[float, float, float, float], outer: tuple[float, float, float, float]) -> bool:
    """Whether `inner` lies inside `outer`, give or take `CROSS_TOL`."""
    return (
        inner[0] >= outer[0] - CROSS_TOL
        and inner[1] >= outer[1] - CROSS_TOL
        and inner[2] <= outer[2] + CROSS_TOL
        and inner[3] <= outer[3] + CROSS_TOL
    )


def dashes_bridged(dark: np.ndarray, paper: np.ndarray, dpi: int, min_len: int) -> np.ndarray:
    """`dark` with the gaps of its dashed and dotted rules along rows filled in (transpose both
    masks for columns): a photocopy breaks a thin grey rule into dashes further apart than
    `close_gaps` closes (eu-007 p5's two-row table, seed 1). The gaps are measured against the
    x-height of body text at `dpi` (`BODY_X_HEIGHT_IN`), as `models.dotted_rules` measures them on
    a page's own, and only `paper` pixels are gaps: a dashed rule is printed on paper, while the
    specks that scanner noise leaves in a grey shaded cell are ink on grey (eu-020 p3, noise scan)."""
    return dark | (dotted_rule_mask(dark, BODY_X_HEIGHT_IN * dpi, min_len) & paper)


def frames(
    image: Image.Image, grids: list[tuple[float, float, float, float]], dpi: int
) -> list[tuple[float, float, float, float]]:
    """The frames `grids` (top to bottom) are parts of: grids stacked with the same sides
    (`FRAME_SIDES_IN`), less than `FRAME_GAP_IN` apart, the two side rules running on through
    the paper between them (ink beside each side's line on `FRAME_INK` of the rows between, its
    dots bridged), joined into one box. A photocopy broke the thin rules of eu-007 p5's rows, so
    that its grid came out as three and the table's box was split into them (seed 1); two
    tables one above the other have a caption between them and no side rules through it."""
    out = sorted(grids, key=lambda g: g[1])
    grey: np.ndarray | None = None  # read only where two grids line up
    i = 0
    while i + 1 < len(out):
        a, b = out[i], out[i + 1]
        if _lined_up(a, b, dpi):
            grey = np.asarray(image.convert("L")) if grey is None else grey
            if _sides_run_on(a, b, grey):
                out[i : i + 2] = [(min(a[0], b[0]), a[1], max(a[2], b[2]), max(a[3], b[3]))]
                continue
        i += 1
    return out


def _lined_up(a: tuple[float, float, float, float], b: tuple[float, float, float, float], dpi: int) -> bool:
    """Whether grid `b`, just under grid `a`, has `a`'s sides and lies close under it (see `frames`)."""
    sides = FRAME_SIDES_IN * dpi
    return abs(a[0] - b[0]) <= sides and abs(a[2] - b[2]) <= sides and b[1] - a[3] <= FRAME_GAP_IN * dpi


def _sides_run_on(a: tuple[float, float, float, float], b: tuple[float, float, float, float], grey: np.ndarray) -> bool:
    """Whether both side rules of grid `a` run on through the paper (`grey`, the page) down to grid `b`."""
    top, bottom = int(round(a[3])), int(round(b[1]))
    if bottom - top <= 2:
        return True
    for x in (a[0], a[2]):
        x0, x1 = max(0, int(round(x)) - FRAME_SLACK_PX), int(round(x)) + FRAME_SLACK_PX + 1
        rows: np.ndarray = np.asarray((grey[top:bottom, x0:x1] < DARK).any(axis=1))
        bridged = rows.copy()  # a dotted rule's dots, a pixel or two apart, bridged
        for d in range(1, FRAME_SLACK_PX + 1):
            bridged[d:] |= rows[:-d]
            bridged[:-d] |= rows[d:]
        if bridged.mean() < FRAME_INK:
            return False
    return True


def _whole(grid: Grid) -> bool:
    """With `MIN_ACROSS` rules across its width: less is a part of a table, or no table at all."""
    return grid.across >= MIN_ACROSS


def is_low(grid: Grid, dpi: int) -> bool:
    """Lower than `MIN_HEIGHT_IN`: a table of two rows, or a part of a bigger table."""
    return (grid.box[3] - grid.box[1]) / dpi < MIN_HEIGHT_IN


def _big_enough(grid: Grid, dpi: int, min_height_in: float = MIN_HEIGHT_IN) -> bool:
    """Wider and higher than logos, checkboxes and icons are."""
    x0, y0, x1, y1 = grid.box
    return (x1 - x0) / dpi >= MIN_WIDTH_IN and (y1 - y0) / dpi >= min_height_in


def _table_like(grid: Grid, dpi: int, min_height_in: float = MIN_HEIGHT_IN) -> bool:
    """Big enough for a table, with rows and columns no denser than text allows."""
    x0, y0, x1, y1 = grid.box
    width, height = (x1 - x0) / dpi, (y1 - y0) / dpi
    if not _big_enough(grid, dpi, min_height_in):
        return False
    return height / (grid.horizontal - 1) >= MIN_ROW_PITCH_IN and width / (grid.vertical - 1) >= MIN_COLUMN_PITCH_IN


def close_gaps(mask: np.ndarray) -> np.ndarray:
    """One-pixel gaps along rows closed (ink drop-outs in a photocopied rule)."""
    out = mask.copy()
    out[:, 1:-1] |= mask[:, :-2] & mask[:, 2:]
    return out


def _rules(mask: np.ndarray, min_len: int) -> list[Rule]:
    """Horizontal rules of `mask` (transpose it for vertical ones): runs of at least `min_len`
    dark pixels on a row, joined with the runs overlapping them on the rows next to them, at
    most RULE_MAX_THICKNESS_PX rows thick (thicker dark areas are bars or fills, not rules)."""
    long = runs(mask, min_len)
    rules: list[Rule] = []
    open_: list[list[int]] = []  # [first row, last row, lo, hi] of lines still growing
    for y in range(long.shape[0]):
        row = long[y]
        if not row.any():
            segments: list[tuple[int, int]] = []
        else:
            edges = np.flatnonzero(np.diff(np.concatenate([[0], row.astype(np.int8), [0]])))
            segments = [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2])]
        grown: list[list[int]] = []
        used = [False] * len(open_)
        for a, b in segments:
            for i, line in enumerate(open_):
                if not used[i] and a < line[3] and line[2] < b:
                    used[i] = True
                    grown.append([line[0], y, min(a, line[2]), max(b, line[3])])
                    break
            else:
                grown.append([y, y, a, b])
        for i, line in enumerate(open_):
            if not used[i]:
                _close_line(line, rules)
        open_ = grown
    for line in open_:
        _close_line(line, rules)
    return rules


def _close_line(line: list[int], rules: list[Rule]) -> None:
    first, last, lo, hi = line
    if last - first + 1 <= RULE_MAX_THICKNESS_PX:
        rules.append(Rule((first + last) / 2, lo, hi))


def _crosses(h: Rule, v: Rule) -> bool:
    return h.lo - CROSS_TOL <= v.at <= h.hi + CROSS_TOL and v.lo - CROSS_TOL <= h.at <= v.hi + CROSS_TOL


def _lines(rules: list[Rule]) -> list[list[Rule]]:
    """`rules` grouped by the line they lie on, in order: pieces of one rule broken by drop-outs
    or cut by a halftone band (`at` within `SAME_LINE_PX` of the last) are one line."""
    lines: list[list[Rule]] = []
    for r in sorted(rules, key=lambda r: r.at):
        if lines and r.at - lines[-1][-1].at <= SAME_LINE_PX:
            lines[-1].append(r)
        else:
            lines.append([r])
    return lines


def _across(lines: list[list[Rule]], lo: float, hi: float) -> int:
    """How many of `lines` run across `FULL_SHARE` of `lo`-`hi` or more, their pieces together."""
    return sum(1 for pieces in lines if _covered(pieces) >= FULL_SHARE * (hi - lo))


def _covered(pieces: list[Rule]) -> int:
    """The length the union of `pieces` covers."""
    total, end = 0, -1
    for r in sorted(pieces, key=lambda r: r.lo):
        if r.hi > end:
            total += r.hi - max(r.lo, end)
            end = r.hi
    return total


def _grids(h_rules: list[Rule], v_rules: list[Rule], by_line: bool) -> list[Grid]:
    """Connected sets of crossing rules with enough lines of each kind, as grids whose rules are
    counted `by_line` or by the pieces (their density)."""
    parent = list(range(len(h_rules) + len(v_rules)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, h in enumerate(h_rules):
        for j, v in enumerate(v_rules):
            if _crosses(h, v):
                a, b = find(i), find(len(h_rules) + j)
                if a != b:
                    parent[a] = b
    groups: dict[int, tuple[list[Rule], list[Rule]]] = {}
    for i, h in enumerate(h_rules):
        groups.setdefault(find(i), ([], []))[0].append(h)
    for j, v in enumerate(v_rules):
        groups.setdefault(find(len(h_rules) + j), ([], []))[1].append(v)
    grids = []
    for hs, vs in groups.values():
        rows, columns = _lines(hs), _lines(vs)
        if len(rows) < MIN_H or len(columns) < MIN_V:
            continue
        x0 = min(min(h.lo for h in hs), min(v.at for v in vs))
        x1 = max(max(h.hi for h in hs), max(v.at for v in vs))
        y0 = min(min(v.lo for v in vs), min(h.at for h in hs))
        y1 = max(max(v.hi for v in vs), max(h.at for h in hs))
        box = (float(x0), float(y0), float(x1), float(y1))
        counts = (len(rows), len(columns)) if by_line else (len(hs), len(vs))
        grids.append(Grid(box, *counts, _across(rows, x0, x1)))
    return sorted(grids, key=lambda g: (g.box[1], g.box[0]))


TRIM_WINDOW_IN = 0.1  # ink is weighed in strips this wide ...
TRIM_INK_IN2 = 0.004  # ... and a strip with less ink than this (square inches) is blank: a speck or two
TRIM_KEEP_IN = 0.05  # paper left beside the ink (about the detector's own margin round a table)
TRIM_MIN_BAND_IN = 0.25  # only a blank band this wide or wider is trimmed off


def trim_to_grid(
    image: Image.Image, box: tuple[float, float, float, float], grid: tuple[float, float, float, float], dpi: int
) -> tuple[float, float, float, float]:
    """`box` (holding `grid`) without the blank paper between its edges and the grid's: the
    detector drew a photocopied demo table's box twice as wide as its ruled frame, over empty
    paper dotted with specks. Outside the grid, a strip `TRIM_WINDOW_IN` wide is blank when it
    holds less than `TRIM_INK_IN2` of ink; the box keeps everything from its first inked strip
    in (a title or notes line beside the frame is kept), and never less than the grid. Only
    bands `TRIM_MIN_BAND_IN` wide or wider go: trimming the detector's usual few pixels of margin
    cost SLANet a spanning header on a JPEG page (docs/scans.md)."""
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    ink = np.asarray(image.convert("L").crop((x0, y0, x1, y1))) < DARK
    if ink.size == 0:
        return box
    window = max(2, round(TRIM_WINDOW_IN * dpi))
    mass, keep = TRIM_INK_IN2 * dpi * dpi, TRIM_KEEP_IN * dpi
    gx0, gy0, gx1, gy1 = grid[0] - x0, grid[1] - y0, grid[2] - x0, grid[3] - y0
    pad = RULE_MAX_THICKNESS_PX // 2  # the frame's own rules (the grid's box runs along their centres)
    ink[max(0, int(gy0) - pad) : max(0, int(gy1) + pad + 1), max(0, int(gx0) - pad) : max(0, int(gx1) + pad + 1)] = (
        False  # only ink outside the grid decides
    )
    left, right = _inked_from(ink.sum(axis=0), window, mass, gx0, gx1)
    top, bottom = _inked_from(ink.sum(axis=1), window, mass, gy0, gy1)
    edges = (
        max(box[0], min(grid[0], x0 + left - keep)),
        max(box[1], min(grid[1], y0 + top - keep)),
        min(box[2], max(grid[2], x0 + right + keep)),
        min(box[3], max(grid[3], y0 + bottom + keep)),
    )
    band = TRIM_MIN_BAND_IN * dpi  # a thinner band is the detector's own margin: SLANet reads crops with it
    return (
        edges[0] if edges[0] - box[0] >= band else box[0],
        edges[1] if edges[1] - box[1] >= band else box[1],
        edges[2] if box[2] - edges[2] >= band else box[2],
        edges[3] if box[3] - edges[3] >= band else box[3],
    )


def _inked_from(profile: np.ndarray, window: int, mass: float, lo: float, hi: float) -> tuple[float, float]:
    """The first and last positions of `profile` (ink per row or column) where a strip of
    `window` holds at least `mass`, searched outside [lo, hi] only (inside is the grid)."""
    sums = np.convolve(profile.astype(np.float64), np.ones(window), mode="same")
    inked = np.flatnonzero(sums >= mass)
    before, after = inked[inked < lo], inked[inked > hi]
    first = float(before[0]) - window / 2 if before.size else lo
    last = float(after[-1]) + window / 2 if after.size else hi
    return max(0.0, first), min(float(profile.size), last)


FOREIGN_RULE_FILL = 0.9  # a row this dark across the grid's width and past both its sides is a rule
FOREIGN_PAST_IN = 0.1  # ... running this far past the grid on each side: the page's, not the table's
FOREIGN_GAP_IN = 0.05  # ... and this far from the grid's own frame (a double frame rule is the table's)


def cut_at_foreign_rules(
    image: Image.Image,
    box: tuple[float, float, float, float],
    grid: tuple[float, float, float, float],
    dpi: int,
    margins: tuple[float, float],
) -> tuple[float, float, float, float]:
    """`box` (holding `grid`) cut above or below so that its crop, which reaches `margins` (top,
    bottom) past it, stops short of a page-wide rule outside the grid whenever it would reach past
    that rule into ink beyond it: a section heading and the rule under it. On bold photocopies the
    detector's box rose 12-25 px into the heading over a table, and SLANet read the heading and
    its rule as rows and columns (docs/scans.md, "Photocopies: page rules and cut lines in the
    crop"). A rule runs past the grid on both sides by `FOREIGN_PAST_IN`: a table's own rules end
    at its frame. The box never shrinks inside the grid, and a crop that holds no ink beyond the
    rule is kept."""
    grey = np.asarray(image.convert("L"))
    past, gap = FOREIGN_PAST_IN * dpi, FOREIGN_GAP_IN * dpi
    xa, xb = int(round(grid[0] - past)), int(round(grid[2] + past))
    if xa < 0 or xb > grey.shape[1]:
        return box
    mass = TRIM_INK_IN2 * dpi * dpi
    x0, y0, x1, y1 = box
    crop_top, crop_bottom, cx0, cx1 = crop_window(grey.shape, box, margins)
    top, bottom = margins
    dark = grey[crop_top:crop_bottom] < DARK
    band = close_gaps(dark[:, xa:xb])  # one-pixel drop-outs closed, as for the grid's own rules
    band = band | np.vstack([band[1:], band[-1:]])  # a rule across two rows (a slight tilt) counts
    frame = RULE_MAX_THICKNESS_PX // 2  # the grid's box runs along its frame's centres
    sides = (band[:, : max(1, int(grid[0]) - frame - xa)], band[:, int(grid[2]) + frame + 1 - xa :])
    filled = band.mean(axis=1) >= FOREIGN_RULE_FILL
    for side in sides:  # dark past the frame on both sides: a table's own rules end at its frame
        filled &= side.mean(axis=1) >= FOREIGN_RULE_FILL if side.size else False
    above = [y for y in rule_rows(filled) if crop_top + y[1] < grid[1] - gap]
    if above:
        r0, r1 = above[-1]  # the rule nearest the grid
        if dark[:r0, cx0:cx1].sum() >= mass:
            y0 = max(y0, min(grid[1], crop_top + r1 + 1 + top))
    below = [y for y in rule_rows(filled) if crop_top + y[0] > grid[3] + gap]
    if below:
        r0, r1 = below[0]
        if dark[r1 + 1 :, cx0:cx1].sum() >= mass:
            y1 = min(y1, max(grid[3], crop_top + r0 - 1 - bottom))
    return (x0, y0, x1, y1)


def crop_window(
    shape: tuple[int, ...], box: tuple[float, float, float, float], margins: tuple[float, float]
) -> tuple[int, int, int, int]:
    """The page rows (top, bottom) and columns (left, right) of the crop of `box` that reaches
    `margins` (top, bottom) past it; sideways it reaches the top margin past the box."""
    h, w = shape[:2]
    x0, y0, x1, y1 = box
    top, bottom = margins
    return (
        max(0, int(np.floor(y0 - top))),
        min(h, int(np.ceil(y1 + bottom))),
        max(0, int(x0 - top)),
        min(w, int(x1 + top)),
    )


def rule_rows(filled: np.ndarray) -> list[tuple[int, int]]:
    """Runs [first, last] of consecutive filled rows no thicker than a rule, top to bottom."""
    out = []
    rows = np.flatnonzero(filled)
    start = prev = None
    for r in [*rows.tolist(), None]:
        if r is not None and prev is not None and r == prev + 1:
            prev = r
            continue
        if start is not None and prev is not None and prev - start + 1 <= RULE_MAX_THICKNESS_PX:
            out.append((start, prev))
        start = prev = r
    return out


CUT_LINE_EDGE_ROWS = 2  # a crop's outermost rows ...
CUT_LINE_INK_IN = 0.1  # ... holding this much ink (inches of dark pixels) cut through a line of text


def clear_cut_lines(
    image: Image.Image,
    box: tuple[float, float, float, float],
    grid: tuple[float, float, float, float],
    dpi: int,
    margins: tuple[float, float],
) -> tuple[float, float, float, float]:
    """`box` (holding `grid`) moved in above or below so that its crop, which reaches `margins`
    (top, bottom) past it, does not cut through a line of text outside the grid: it then starts
    at the first blank row between that line and the grid. A caption cut in half at the crop's
    top edge read as junk words in a photocopied table's header row ("Abe Taaoękan"). A line
    the crop holds whole, a title or a note, is kept; specks and rules are not text (specks by a
    page rule at the crop's edge moved a mild photocopy's crop and cost its table 0.12 TEDS);
    the box never shrinks inside the grid."""
    grey = np.asarray(image.convert("L"))
    h = grey.shape[0]
    x0, y0, x1, y1 = box
    top, bottom = margins
    crop_top, crop_bottom, cx0, cx1 = crop_window(grey.shape, box, margins)
    paper = wipe_specks(grey[crop_top:crop_bottom, cx0:cx1].astype(np.float32))  # specks are no text
    dark = paper < DARK
    dark &= ~runs(close_gaps(dark), rule_length(dpi))  # nor is a rule along the crop's edge
    ink = dark.sum(axis=1)
    need, pad = CUT_LINE_INK_IN * dpi, RULE_MAX_THICKNESS_PX
    g0, g1 = int(grid[1]) - pad - crop_top, int(grid[3]) + pad - crop_top  # the grid's frame, in crop rows
    if crop_top > 0 and 0 < g0 and ink[:CUT_LINE_EDGE_ROWS].sum() >= need:
        blank = np.flatnonzero(ink[:g0] == 0)
        if blank.size:
            y0 = max(y0, min(grid[1], crop_top + float(blank[0]) + top))
    if crop_bottom < h and g1 < ink.size and ink[-CUT_LINE_EDGE_ROWS:].sum() >= need:
        blank = np.flatnonzero(ink[g1:] == 0)
        if blank.size:
            y1 = min(y1, max(grid[3], crop_top + g1 + float(blank[-1]) + 1 - bottom))
    return (x0, y0, x1, y1)
