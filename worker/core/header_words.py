"""Header labels kept whole when words are dealt out to cells.

Words go to the cell holding their centre. A column boundary a few pixels into a label then
deals its words to two columns ("Mean Std." | "Dev."), and both columns lose their labels.
In the header rows a label is one unit: the words of one line set closer than half a text
height (a word space) are joined into one word before they are dealt out, so the whole label
goes to the column its centre lies over. The body keeps its words as they are. And a label
set centred over several columns but read into one of them is given the empty header slots
it is centred over (`centre_header_labels`).
"""

from __future__ import annotations

from worker.core.bands import Band
from worker.core.spans import SpanRect
from worker.core.types import Word

WORD_SPACE = 0.7  # words closer than this many text heights on one line are one label (a word space
# between capitals is about half their height, and OCR boxes at 150 dpi jitter by a pixel or two)
RULE_GLYPHS = frozenset("1lI|!")  # what OCR makes of a short vertical rule
RULE_TALL = 1.4  # a "glyph" this many median text heights tall is a rule ...
RULE_THIN = 0.2  # ... and so is one narrower than this share of its height
CENTRED = 0.15  # a label this near (a share of its column's width) its column's middle is centred on it
REACH = 0.1  # a label reaching this share into an empty neighbour column, centred nearer over both, takes it


def join_header_labels(
    words: list[Word], rows: list[Band], head: set[int], cols: list[Band] | None = None
) -> list[Word]:
    """`words` with each header label's words joined into one word (text in reading order,
    box the union, the lowest confidence), and rule debris in the header dropped. With `cols`,
    two words on either side of a column boundary that is a gutter of the body (no body word
    runs across it, body words on both sides) are two labels however close: on a photocopy
    "Our estimates" and "LDA", two columns' labels, stood a word space apart and were read as
    one label over the first column."""
    if not head or not words:
        return words
    bands = [rows[i] for i in sorted(head) if 0 <= i < len(rows)]

    def in_head(w: Word) -> bool:
        cy = (w.bbox[1] + w.bbox[3]) / 2
        return any(b.lo <= cy < b.hi for b in bands)

    body = [w for w in words if not in_head(w)]
    heights = sorted(w.bbox[3] - w.bbox[1] for w in words)
    median_h = heights[len(heights) // 2]
    labels: list[list[Word]] = []
    for w in sorted((w for w in words if in_head(w) and not is_rule_debris(w, median_h)), key=lambda w: w.bbox[0]):
        h = w.bbox[3] - w.bbox[1]
        for group in labels:
            last = group[-1]
            # the label's line height is its tallest word's: a word of x-height letters or small
            # capitals ("FOR RELEASES" after "THRESHOLD") understates it, and a tight box then
            # parts a word space
            lh = max(h, *(x.bbox[3] - x.bbox[1] for x in group))
            # on one line: the lower word lies half within the taller one's height (a speck
            # fused to "THRESHOLD" on a photocopy doubled its box, and "FOR" no longer joined it)
            pair = min(h, last.bbox[3] - last.bbox[1])
            same_line = min(w.bbox[3], last.bbox[3]) - max(w.bbox[1], last.bbox[1]) >= 0.5 * pair
            if same_line and 0 <= w.bbox[0] - last.bbox[2] <= WORD_SPACE * lh:
                group.append(w)
                break
        else:
            labels.append([w])
    if cols:
        gutters = _body_gutters(body, cols)
        head_words = [w for g in labels for w in g]
        labels = [
            part for g in labels for part in _part_at_gutters(g, cols, gutters, _lines_under(g, head_words, bands))
        ]
    joined = [_join(g) for g in labels]
    return body + joined


def _body_gutters(body: list[Word], cols: list[Band]) -> list[float]:
    """The column boundaries (x) that no body word runs across, with body words centred in the
    columns on both sides."""
    centres = [(w.bbox[0] + w.bbox[2]) / 2 for w in body]
    out = []
    for left, right in zip(cols, cols[1:]):
        x = left.hi
        if any(w.bbox[0] < x < w.bbox[2] for w in body):
            continue
        if any(left.lo <= c < x for c in centres) and any(x <= c < right.hi for c in centres):
            out.append(x)
    return out


def _part_at_gutters(group: list[Word], cols: list[Band], gutters: list[float], under: list[Word]) -> list[list[Word]]:
    """A label's words parted at a body gutter where the words on each side are centred over
    their own column (`CENTRED` of its width) and go on in a line of their own column under them
    in the same header row (`under`): two columns' cells of two lines each ("Our estimates" over
    "1996", "LDA" over "1997"). A group label over several columns is centred over none of them
    on either side, or heads a row of its own ("number of franchisors" over "1993 | 1994" in the
    row below), and stays whole. Two sides centred over their own columns are also two labels
    where they stand further apart than a word space of the lower of the two words beside the
    gutter (`_apart`): a speck or a dashed rule fused to one word's box makes it look taller,
    and its word space wider ("Butter" | "Margarine" on a photocopy, each over its own column,
    joined into one label spanning both)."""
    for x in gutters:
        left = [w for w in group if (w.bbox[0] + w.bbox[2]) / 2 < x]
        right = [w for w in group if (w.bbox[0] + w.bbox[2]) / 2 >= x]
        if (
            left
            and right
            and all(_centred_on_column(side, cols) for side in (left, right))
            and (all(_goes_on(side, cols, under) for side in (left, right)) or _apart(left, right))
        ):
            return _part_at_gutters(left, cols, gutters, under) + _part_at_gutters(right, cols, gutters, under)
    return [group]


def _apart(left: list[Word], right: list[Word]) -> bool:
    """The words either side of a gutter stand further apart than a word space of the lower one."""
    a = max(left, key=lambda w: w.bbox[2])
    b = min(right, key=lambda w: w.bbox[0])
    low = min(a.bbox[3] - a.bbox[1], b.bbox[3] - b.bbox[1])
    return b.bbox[0] - a.bbox[2] > WORD_SPACE * low


def _lines_under(group: list[Word], head_words: list[Word], bands: list[Band]) -> list[Word]:
    """The header words under `group`'s line in the same header row."""
    cy = sum((w.bbox[1] + w.bbox[3]) / 2 for w in group) / len(group)
    band = next((b for b in bands if b.lo <= cy < b.hi), None)
    bottom = max(w.bbox[3] for w in group)
    if band is None:
        return []
    return [
        w
        for w in head_words
        if w not in group and band.lo <= (w.bbox[1] + w.bbox[3]) / 2 < band.hi and w.bbox[1] >= bottom - 1
    ]


def _goes_on(side: list[Word], cols: list[Band], under: list[Word]) -> bool:
    """Some word of `under` is centred in the column `side` is centred in."""
    _, col = _middle_and_column(side, cols)
    return col is not None and any(col.lo <= (w.bbox[0] + w.bbox[2]) / 2 < col.hi for w in under)


def _centred_on_column(words: list[Word], cols: list[Band]) -> bool:
    mid, col = _middle_and_column(words, cols)
    return col is not None and abs(mid - col.mid) <= CENTRED * col.size


def _middle_and_column(words: list[Word], cols: list[Band]) -> tuple[float, Band | None]:
    """The middle (x) of the words' extent and the column holding it, if any."""
    mid = (min(w.bbox[0] for w in words) + max(w.bbox[2] for w in words)) / 2
    return mid, next((c for c in cols if c.lo <= mid < c.hi), None)


def is_rule_debris(w: Word, median_height: float) -> bool:
    """A vertical rule between header cells read as a glyph ("1 1996 1 1991"): one character
    of `RULE_GLYPHS` in a box far taller than the text or thinner than any glyph. Such a "1"
    made the header row read as values, so no column had a label."""
    h, width = w.bbox[3] - w.bbox[1], w.bbox[2] - w.bbox[0]
    return w.text.strip() in RULE_GLYPHS and (h >= RULE_TALL * median_height or width < RULE_THIN * h)


def _join(group: list[Word]) -> Word:
    if len(group) == 1:
        return group[0]
    confs = [w.confidence for w in group if w.confidence is not None]
    box = (
        min(w.bbox[0] for w in group),
        min(w.bbox[1] for w in group),
        max(w.bbox[2] for w in group),
        max(w.bbox[3] for w in group),
    )
    return Word(" ".join(w.text for w in group), box, min(confs) if confs else None)


def centre_header_labels(
    rects: list[SpanRect], rows: list[Band], cols: list[Band], words: list[Word], head: set[int], repairs: list[str]
) -> list[SpanRect]:
    """A header label belongs over the columns it is centred on: a header cell whose words sit
    centred off its own columns grows over empty header cells beside it, column by column,
    while that brings its columns' centre nearer the label's, by a quarter column or with the
    label's words reaching into that column ("hypermarkets" set over two sub-columns but read
    into the first). Never into the stub column, never over words."""
    if not head or not words:
        return rects
    rects = list(rects)
    taken = {slot for r in rects for slot in r.slots()}
    for row in sorted(head):  # header slots no cell claims are cells of their own here
        if 0 <= row < len(rows):
            for c in range(len(cols)):
                if (row, c) not in taken:
                    rects.append(SpanRect(row, row, c, c, min(rows[row].score, cols[c].score)))

    def label_of(r: SpanRect) -> tuple[float, float] | None:
        x0, x1 = cols[r.c0].lo, cols[r.c1].hi
        y0, y1 = rows[r.r0].lo, rows[r.r1].hi
        inside = [w for w in words if x0 <= (w.bbox[0] + w.bbox[2]) / 2 < x1 and y0 <= (w.bbox[1] + w.bbox[3]) / 2 < y1]
        if not inside:
            return None
        return min(w.bbox[0] for w in inside), max(w.bbox[2] for w in inside)

    def owner(r0: int, r1: int, c: int) -> int | None:
        """The one rect covering column `c` over exactly rows r0..r1, if any."""
        for i, o in enumerate(rects):
            if o.c0 <= c <= o.c1 and o.r0 == r0 and o.r1 == r1:
                return i
        return None

    grown = 0
    for i in range(len(rects)):
        r = rects[i]
        if r.c0 == 0 or not all(row in head for row in range(r.r0, r.r1 + 1)):
            continue
        label = label_of(r)
        if label is None:
            continue
        cx = (label[0] + label[1]) / 2
        for step in (1, -1):
            while True:
                r = rects[i]
                c = r.c1 + 1 if step == 1 else r.c0 - 1
                if c <= 0 or c >= len(cols):
                    break
                j = owner(r.r0, r.r1, c)
                if j is None or label_of(rects[j]) is not None:
                    break
                now = abs((cols[r.c0].lo + cols[r.c1].hi) / 2 - cx)
                lo, hi = (r.c0, c) if step == 1 else (c, r.c1)
                after = abs((cols[lo].lo + cols[hi].hi) / 2 - cx)
                reaches = (
                    label[1] > cols[c].lo + REACH * cols[c].size
                    if step == 1
                    else label[0] < cols[c].hi - REACH * cols[c].size
                )
                if not reaches and after > now - 0.25 * cols[c].size:
                    break
                o = rects[j]
                rects[i] = SpanRect(r.r0, r.r1, lo, hi, r.score, r.projected)
                rest = (
                    SpanRect(o.r0, o.r1, o.c0 + 1, o.c1, o.score)
                    if step == 1
                    else SpanRect(o.r0, o.r1, o.c0, o.c1 - 1, o.score)
                )
                if rest.c0 > rest.c1:
                    rects[j] = SpanRect(-1, -1, -1, -1)
                else:
                    rects[j] = rest
                grown += 1
    if grown:
        repairs.append(f"{grown} header column slot(s) given to the label centred over them")
    return [r for r in rects if r.r0 >= 0]
