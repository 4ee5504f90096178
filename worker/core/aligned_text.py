"""Unruled tables found as aligned text: a third, model-free table finder for scans.

The layout detector loses tables on degraded pages (blur: 3 of 8 dev tables kept at one
seed), and the ruled-grid finder (`worker.core.ruled_boxes`) sees only tables whose rules
survive: unruled tables, and rules too faint after a blur, get nothing from it. What survives
any of that is the text's layout: a table is several rows of short blobs (words, numbers)
separated by gutters that line up down the rows.

The blobs come from the page's pixels (`models.aligned_text`: ink closed along rows, so a
blob is a word or a phrase). Here, in plain Python and in units of the text's x-height (so no
rule depends on the resolution):

- `text_rows`: blobs grouped into text lines by their vertical centres;
- `aligned_regions`: runs of consecutive lines whose blobs leave the same column gutters
  free, kept as a table when they have enough rows, at least three columns (or two, with
  numbers-like short cells on the right, over more rows), and are not prose: a column whose
  blobs are long and fill it (a page column of body text, with its one gutter) is set aside;
- `reconcile_regions`: a region no table box covers is added, and a box holding only part of
  a region (the detector cut the table short) is lengthened to its rows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from statistics import median

from worker.core.detections import TableBox
from worker.core.geometry import area, intersection_area, union_box
from worker.core.types import BBox

ROW_TOL_XH = 0.6  # blobs whose vertical centres are this close are on one line
GUTTER_XH = 1.5  # a column gutter is at least this wide (a word space is about 0.5)
ROW_GAP_XH = 5.0  # consecutive table rows are at most this far apart (blank paper between them)
MIN_ROWS = 4  # a table has at least this many rows of two or more cells
MIN_ROWS_TWO_COLUMNS = 6  # ... and a two-column one (label and number) this many
MIN_COLUMNS = 2
MIN_FILL = 0.3  # an outer column with blobs on fewer of the rows than this is specks or a stray mark
SHORT_XH = 10.0  # a numbers-like column's blobs are this short (median; a digit is about 1 x-height)
PROSE_XH = 45.0  # a blob this long is a line of body text (a wide table's labels ran to 42) ...
PROSE_FILL = 0.7  # ... and fill this share of its width is body text, not a table column
MAX_SINGLES = 1  # lines of one blob (a wrapped cell) let through in a row
MERGE_GAP_XH = 2.5  # runs this close one above the other (one line between) are one table's parts
HEADER_ROWS = 3  # lines above a region, within its width, taken in as its column headings
MIN_BLOB_XH = 0.6  # blobs lower than this are dots and specks, ...
DASH_XH = 0.4  # ... but dashes (an empty cell): flat blobs this wide at least ...
MAX_DASH_XH = 6.0  # ... and this wide at most (a dotted rule, its dots closed into one, is longer)
MIN_LINE_XH = 0.8  # a line none of whose blobs stands this high is a broken rule's pieces, not text
MAX_BLOB_XH = 3.5  # blobs taller than this are figures, bars, or lines run together
ROTATED_XH = 2.0  # blobs taller than this and than wide are words set sideways
HEADING_SHARE = 0.6  # a line above a region is its heading when no blob is wider than this share of it
HEADING_SLACK_XH = 3.0  # ... and it lies within the region, but for this much (a heading wider than its column)
UNCOVERED = 0.2  # a region covered this little by table boxes is a table the detector missed
HELD = 0.5  # a box holding this share of a region, and ...
INSIDE = 0.7  # ... lying this much inside it, is the region's table cut short
WIDEN_XH = 5.0  # a box is lengthened only where the region's rows run on this far (two rows)


@dataclass(frozen=True)
class Region:
    """An aligned-text region: its box (page pixels), rows and columns."""

    box: BBox  # the rows and the headings above them
    rows: int
    columns: int
    core: BBox | None = None  # the rows alone (a box is widened to these only); None: `box`


def text_rows(blobs: list[BBox], x_height: float) -> list[list[BBox]]:
    """Blobs grouped into text lines, top to bottom, each line left to right. Blobs far
    lower or taller than text (`MIN_BLOB_XH`, `MAX_BLOB_XH`) are left out, and so are lines
    with no blob as high as a letter (`MIN_LINE_XH`): a dotted rule a photocopy dropped dots
    from leaves pieces as flat as dashes, whose line of gutters matches no column and cut
    eu-018 p1's second table in two at its rules (docs/scans.md, Round 20)."""
    kept = sorted((b for b in blobs if _text(b, x_height)), key=lambda b: (b[1] + b[3]) / 2)
    rows: list[list[BBox]] = []
    centre = 0.0
    for b in kept:
        c = (b[1] + b[3]) / 2
        if rows and c - centre <= ROW_TOL_XH * x_height:
            rows[-1].append(b)
            centre = sum((r[1] + r[3]) / 2 for r in rows[-1]) / len(rows[-1])
        else:
            rows.append([b])
            centre = c
    return [sorted(r) for r in rows if max(b[3] - b[1] for b in r) >= MIN_LINE_XH * x_height]


def _text(b: BBox, x_height: float) -> bool:
    """A blob as high as text, or a dash; not a word set sideways (a chart's axis labels)."""
    h, w = b[3] - b[1], b[2] - b[0]
    if h > ROTATED_XH * x_height and h > 1.5 * w:
        return False
    if MIN_BLOB_XH * x_height <= h <= MAX_BLOB_XH * x_height:
        return True
    return h < MIN_BLOB_XH * x_height and DASH_XH * x_height <= w <= MAX_DASH_XH * x_height and w >= 1.5 * h


def columns(rows: list[list[BBox]], gutter: float) -> list[tuple[float, float]]:
    """The x-intervals the rows' blobs occupy together, merged across gaps narrower than
    `gutter`: the block's columns, left to right."""
    spans = sorted((b[0], b[2]) for r in rows for b in r)
    out: list[tuple[float, float]] = []
    for x0, x1 in spans:
        if out and x0 - out[-1][1] < gutter:
            out[-1] = (out[-1][0], max(out[-1][1], x1))
        else:
            out.append((x0, x1))
    return out


def aligned_regions(blobs: list[BBox], x_height: float) -> list[Region]:
    """Table-like regions of aligned text on a page, top to bottom (see the module docstring).

    A table cut in two by a row that spans its columns (a group heading, a wrapped label) gives
    two runs: runs one above the other, close (`MERGE_GAP_XH`) and overlapping across, are one
    region with the lines between them; and up to `HEADER_ROWS` lines just above a region that
    lie within its width (column headings over the cells) are taken in."""
    if x_height <= 0:
        return []
    rows = text_rows(blobs, x_height)
    runs: list[tuple[int, int, Region]] = []
    i = 0
    while i < len(rows):
        end = _grow(rows, i, x_height)
        region = _table(rows[i:end], x_height)
        if region is not None:
            runs.append((i, end, region))
            i = end
        else:
            i += 1
    merged: list[tuple[int, int, Region]] = []
    for start, end, region in runs:
        if merged and _joins(merged[-1][2].box, region.box, x_height):
            first, _, above = merged[-1]
            box = union_box([above.box, region.box])
            merged[-1] = (first, end, Region(box, above.rows + region.rows, max(above.columns, region.columns)))
        else:
            merged.append((start, end, region))
    out = []
    for start, end, region in merged:
        core = _within(rows[start:end], region.box, x_height)
        out.append(replace(region, box=_headed(rows[:start], core, x_height), core=core))
    return out


def _joins(above: BBox, below: BBox, x_height: float) -> bool:
    """Two regions close one above the other and overlapping across: one table's parts."""
    across = min(above[2], below[2]) - max(above[0], below[0])
    narrower = min(above[2] - above[0], below[2] - below[0])
    return below[1] - above[3] <= MERGE_GAP_XH * x_height and across >= 0.5 * narrower


def _within(rows: list[list[BBox]], box: BBox, x_height: float) -> BBox:
    """`box` grown to the blobs of `rows` lying within its width (lines between merged runs)."""
    slack = x_height
    inside = [b for r in rows for b in r if b[0] >= box[0] - slack and b[2] <= box[2] + slack]
    return union_box([box, *inside])


def _headed(above: list[list[BBox]], box: BBox, x_height: float) -> BBox:
    """`box` grown upwards by the lines just above it that lie within its width."""
    taken = 0
    for row in reversed(above):
        if taken >= HEADER_ROWS or box[1] - max(b[3] for b in row) > ROW_GAP_XH * x_height:
            break
        if any(b[0] < box[0] - HEADING_SLACK_XH * x_height or b[2] > box[2] + HEADING_SLACK_XH * x_height for b in row):
            break
        if any(b[2] - b[0] > HEADING_SHARE * (box[2] - box[0]) for b in row) or _has_prose(row, x_height):
            break  # a title or a line of body text above the table
        box = union_box([box, *row])
        taken += 1
    return box


def _grow(rows: list[list[BBox]], start: int, x_height: float) -> int:
    """The end (exclusive) of the longest run of lines from `start` that keeps two or more
    columns, loses none of them, has no line of body text (`_has_prose`) and no gap between lines
    wider than `ROW_GAP_XH`. A line of one blob that reaches into one column only (a wrapped
    cell) is let through, but not two in a row, and the run neither starts nor ends with one;
    a heading between two tables sits across a column's edge and stops the run."""
    gutter, gap = GUTTER_XH * x_height, ROW_GAP_XH * x_height
    if len(rows[start]) < 2 or _has_prose(rows[start], x_height):
        return start + 1
    count = len(columns(rows[start : start + 1], gutter))
    end, singles = start + 1, 0
    while end < len(rows):
        row = rows[end]
        top = min(b[1] for b in row)
        bottom = max(b[3] for r in rows[start:end] for b in r)
        if top - bottom > gap or _has_prose(row, x_height):
            break
        now = len(columns(rows[start : end + 1], gutter))
        if now < MIN_COLUMNS or now < count:
            break
        if len(row) < 2:
            singles += 1
            b = row[0]
            touched = [c for c in columns(rows[start:end], gutter) if b[0] < c[1] + gutter and c[0] - gutter < b[2]]
            if singles > MAX_SINGLES or len(touched) != 1:
                break
        else:
            singles = 0
        count = now
        end += 1
    while end - 1 > start and len(rows[end - 1]) < 2:
        end -= 1
    return end


def _table(rows: list[list[BBox]], x_height: float) -> Region | None:
    """The run of lines as a table region, or None when it does not look like one: too few
    rows or columns, body text, or (two columns) no numbers-like column on the right."""
    if len(rows) < MIN_ROWS:
        return None
    cols = columns(rows, GUTTER_XH * x_height)
    members = [[b for r in rows for b in r if x0 <= b[0] and b[2] <= x1] for x0, x1 in cols]
    least = MIN_FILL * len(rows)

    def aside(c: int) -> bool:  # a page column of body text beside it, or specks far out
        filled = sum(1 for r in rows if any(cols[c][0] <= b[0] and b[2] <= cols[c][1] for b in r))
        return _prose(cols[c], members[c], x_height) or filled < least

    while cols and aside(0):
        cols, members = cols[1:], members[1:]
    while cols and aside(len(cols) - 1):
        cols, members = cols[:-1], members[:-1]
    if len(cols) < MIN_COLUMNS:
        return None
    kept = [[b for b in r if cols[0][0] <= b[0] and b[2] <= cols[-1][1]] for r in rows]
    full = [r for r in kept if len(columns([r], GUTTER_XH * x_height)) >= 2]
    short = [median(b[2] - b[0] for b in m) <= SHORT_XH * x_height for m in members]
    need = MIN_ROWS if len(cols) >= 3 else MIN_ROWS_TWO_COLUMNS
    if len(full) < need or not any(short[1:]):
        return None
    if any(_prose(c, m, x_height) for c, m in zip(cols, members)):
        return None
    return Region(union_box(b for r in kept for b in r), len(full), len(cols))


def _has_prose(row: list[BBox], x_height: float) -> bool:
    """A line holding a blob as long as a line of body text: no table row. A line of a page
    column of body text beside the table (first or last on the line, with two or more blobs
    left besides it) does not count: `_table` sets that column aside."""
    long = PROSE_XH * x_height
    inner = list(row)
    if len(inner) >= 3 and inner[0][2] - inner[0][0] >= long:
        inner = inner[1:]
    if len(inner) >= 3 and inner[-1][2] - inner[-1][0] >= long:
        inner = inner[:-1]
    return any(b[2] - b[0] >= long for b in inner)


def _prose(col: tuple[float, float], members: list[BBox], x_height: float) -> bool:
    """A column of body text: its blobs (lines, once the words are joined) long and filling it."""
    if not members:
        return False
    width = median(b[2] - b[0] for b in members)
    return width >= PROSE_XH * x_height and width >= PROSE_FILL * (col[1] - col[0])


def reconcile_regions(
    boxes: list[TableBox], regions: list[Region], score: float, x_height: float
) -> tuple[list[TableBox], int, int]:
    """The page's tables with the aligned regions: a region no box covers (`UNCOVERED`) is
    added at `score` (the detector's threshold); a box holding most of one region and lying
    inside it is the table cut short, and is lengthened to the region's rows where they run on
    by `WIDEN_XH` or more above or below it (never sideways, never to a heading: widened to the
    headings and sideways, clean pages lost 0.07 TEDS). Returns the boxes, how many were added
    and how many lengthened."""
    out = list(boxes)
    added = widened = 0
    for region in regions:
        size = area(region.box)
        if size <= 0:
            continue
        shares = [intersection_area(region.box, b.bbox) for b in out]
        if sum(shares) <= UNCOVERED * size:
            out.append(TableBox(region.box, score, False))
            added += 1
            continue
        holders = [
            i
            for i, b in enumerate(out)
            if shares[i] >= HELD * size and area(b.bbox) > 0 and shares[i] >= INSIDE * area(b.bbox)
        ]
        if len(holders) == 1 and not out[holders[0]].rotated:
            i = holders[0]
            grown = _lengthened(out[i].bbox, region.core or region.box, WIDEN_XH * x_height)
            if grown != out[i].bbox:
                out[i] = replace(out[i], bbox=grown)
                widened += 1
    return out, added, widened


def _lengthened(box: BBox, rows: BBox, by: float) -> BBox:
    """`box` pushed up or down to `rows` where they stick out by `by` or more."""
    return (
        box[0],
        rows[1] if box[1] - rows[1] >= by else box[1],
        box[2],
        rows[3] if rows[3] - box[3] >= by else box[3],
    )


THIN_BOX_XH = 6.0  # a detected box this low (two lines of text) is no whole table ...
UNDER_GAP_XH = 10.0  # ... and a region starting this close under it is the table it heads


def is_thin(box: BBox, x_height: float) -> bool:
    """A box no taller than two lines of text: a caption or a header band, not a table."""
    return box[3] - box[1] <= THIN_BOX_XH * x_height


def under_thin_boxes(boxes: list[TableBox], regions: list[Region], x_height: float) -> tuple[list[TableBox], int]:
    """A page whose every box is thin (`is_thin`: the layout detector took a caption or a header
    band for the table, and missed the rows) gets the aligned regions no box covers: a region
    starting just under a thin box, and overlapping it across, grows that box down over its
    rows (the box keeps the header band between them); any other region is added at the thin
    boxes' best score. Returns the boxes and how many regions were taken."""
    if not boxes or not all(is_thin(b.bbox, x_height) for b in boxes):
        return boxes, 0
    out = list(boxes)
    score = max(b.score for b in boxes)
    taken = 0
    for region in regions:
        size = area(region.box)
        if size <= 0 or sum(intersection_area(region.box, b.bbox) for b in out) > UNCOVERED * size:
            continue
        above = [
            i
            for i, b in enumerate(out)
            if 0 <= region.box[1] - b.bbox[3] <= UNDER_GAP_XH * x_height
            and min(b.bbox[2], region.box[2]) - max(b.bbox[0], region.box[0])
            >= 0.5 * min(b.bbox[2] - b.bbox[0], region.box[2] - region.box[0])
        ]
        if above and not out[above[-1]].rotated:
            i = above[-1]
            out[i] = replace(out[i], bbox=union_box([out[i].bbox, region.box]))
        else:
            out.append(TableBox(region.box, score, False))
        taken += 1
    return out, taken


PART_HEIGHT = 0.5  # a grid box at most this share of its region's height is a part of the table


def parts_into_regions(boxes: list[TableBox], regions: list[Region]) -> tuple[list[TableBox], int]:
    """Boxes that are parts of tables (ruled grids found on a page the detector found nothing
    on: on a photocopy, a header band's rules are often the only solid ones, the rows being
    dotted) joined with the aligned regions they lie in: a box lying mostly inside a region
    (`INSIDE`) and at most half its height grows to the whole region, unless it would then reach
    over another box outside the region (on a noisy scan the grids had found two whole tables, and
    the region of the lower one ran up into the upper one's last row), and boxes that grew over
    one another become one.
    Regions holding no box are left to `reconcile_regions`. Returns the boxes and how many
    grew."""
    out = list(boxes)
    grown = 0
    for region in regions:
        inside = [area(b.bbox) > 0 and intersection_area(b.bbox, region.box) >= INSIDE * area(b.bbox) for b in out]
        for i, b in enumerate(out):
            if b.rotated or not inside[i] or b.bbox[3] - b.bbox[1] > PART_HEIGHT * (region.box[3] - region.box[1]):
                continue  # a box as high as the region is a whole table: the region ran on past it
            joined = union_box([b.bbox, region.box])
            if any(j != i and not inside[j] and intersection_area(joined, o.bbox) > 0 for j, o in enumerate(out)):
                continue  # grown, it would reach over another table
            if joined != b.bbox:
                out[i] = replace(b, bbox=joined)
                grown += 1
    merged: list[TableBox] = []
    for b in sorted(out, key=lambda t: -area(t.bbox)):
        if any(intersection_area(b.bbox, m.bbox) >= INSIDE * area(b.bbox) for m in merged):
            continue  # one grown box over another: the same table
        merged.append(b)
    return merged, grown
