"""Caption above a table, notes below it, from the words of its page.

Units and scope often live outside the grid ("Table 3: Revenue by region, EUR million",
"Note: figures are unaudited"). Words come from the text layer or from OCR of the page
strips above and below the table, in page pixels. Lines are grouped from words; the block
of lines closest to the table on each side is taken when it is short and separated from
other text by a gap (a caption or a note), or, inside longer text, from a line that starts
like one ("Table 4", "Source:", "*"). Lines nearer another table belong to that table.
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from worker.core.types import BBox, Word

CAPTION_START = re.compile(
    r"^(?i:table|tab\.|tabelle|tableau|tabla|tabella|exhibit|schedule|annex\s+table)\s*"
    r"(?:[A-Z]{0,3}\d+(?:[.\-]\s?\d+)*[a-z]?|[IVXLC]+|[A-Z])(?=$|[\s:.\-–—|)])"
)
NOTE_START = re.compile(
    r"^(?:(?:\S\s)?(?:notes?|sources?)\b|\*|†|‡|§|¹|²|³|\(?[a-z1-9]\)\s|[a-z1-9]\)|"
    r"all (?:figures|amounts|values)|figures (?:are )?in|amounts (?:are )?in|"
    r"n\s*=|p\s*[<=>])",
    re.IGNORECASE,
)
PAGE_MARGIN = 0.08  # share of the page height at top and bottom holding running heads, page numbers
CONTINUED = re.compile(r"\b(?:continued|cont(?:'|’)?d|cont\.|\(cont|fortsetzung|suite|continuación)\b", re.IGNORECASE)


def plain(text: str) -> str:
    """`text` without accents: OCR puts them on plain letters ("Sourcé: ...", "Tablé 3"), and a
    caption's or a note's start is matched on its letters alone. NFD, not NFKD: "¹" stays a
    footnote mark."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def starts_caption(text: str) -> bool:
    """Whether `text` starts as a numbered caption does ("Table 3", "Tab. IV")."""
    return bool(CAPTION_START.match(plain(text)))


def starts_note(text: str) -> bool:
    """Whether `text` starts as a note does ("Source:", "Note", "*", "(a) "; "1 Source:", a mark
    or a speck read as one before the word)."""
    return bool(NOTE_START.match(plain(text)))


@dataclass(slots=True)
class Line:
    """A line of text: its words left to right and their union box."""

    text: str
    bbox: BBox
    height: float


@dataclass(slots=True)
class Context:
    """Caption and notes of one table, and whether the page is free of other text beyond them.

    above_clear / below_clear: True when no other text lies between the table and the page's
    top (bottom) margin, False when some does, None when that part of the page was not seen.
    """

    caption: str = ""
    notes: list[str] = field(default_factory=list)
    above_clear: bool | None = None
    below_clear: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "caption": self.caption,
            "notes": list(self.notes),
            "above_clear": self.above_clear,
            "below_clear": self.below_clear,
        }


def group_lines(words: list[Word], split_gap: float = 3.0) -> list[Line]:
    """Words into lines, top to bottom: a word joins a line its vertical centre falls in; a line
    is cut where words stand more than `split_gap` word heights apart (another text column)."""
    rows: list[list[Word]] = []
    extents: list[tuple[float, float]] = []
    for w in sorted(words, key=lambda w: ((w.bbox[1] + w.bbox[3]) / 2, w.bbox[0])):
        cy = (w.bbox[1] + w.bbox[3]) / 2
        for i, (top, bottom) in enumerate(extents):
            if top <= cy <= bottom:
                rows[i].append(w)
                extents[i] = (min(top, w.bbox[1]), max(bottom, w.bbox[3]))
                break
        else:
            rows.append([w])
            extents.append((w.bbox[1], w.bbox[3]))
    lines = []
    for members in rows:
        members.sort(key=lambda w: w.bbox[0])
        height = statistics.median(w.bbox[3] - w.bbox[1] for w in members)
        pieces: list[list[Word]] = [[members[0]]]
        for w in members[1:]:
            if w.bbox[0] - pieces[-1][-1].bbox[2] > split_gap * height:
                pieces.append([])
            pieces[-1].append(w)
        for piece in pieces:
            text = " ".join(w.text.strip() for w in piece if w.text.strip())
            if text:
                box = (
                    min(w.bbox[0] for w in piece),
                    min(w.bbox[1] for w in piece),
                    max(w.bbox[2] for w in piece),
                    max(w.bbox[3] for w in piece),
                )
                lines.append(Line(text, box, height))
    lines.sort(key=lambda ln: ln.bbox[1])
    return lines


def is_rule(text: str) -> bool:
    """A line drawn with characters (`_____`, `-----`): a separator, never caption or note."""
    t = text.replace(" ", "")
    return len(t) >= 3 and all(ch in "_-=—–·.*~" for ch in t)


def _inside(word: Word, box: BBox) -> bool:
    cx, cy = (word.bbox[0] + word.bbox[2]) / 2, (word.bbox[1] + word.bbox[3]) / 2
    return box[0] <= cx <= box[2] and box[1] <= cy <= box[3]


def _block(lines: list[Line], start_gap: float, line_h: float, max_gap: float) -> list[Line]:
    """Lines in order away from the table while each gap is a line gap, not a paragraph break."""
    out: list[Line] = []
    for i, ln in enumerate(lines):
        if is_rule(ln.text):
            break
        gap = start_gap if i == 0 else _gap(out[-1], ln)
        if gap > (max_gap if i == 0 else 0.9) * line_h:
            break
        out.append(ln)
    return out


def _x_overlap(box: BBox, ln: Line) -> bool:
    return box[0] < ln.bbox[2] and box[2] > ln.bbox[0]


def _until_table(lines: list[Line], edges: list[float], pos: Any, direction: int) -> list[Line]:
    """Lines (ordered away from the table) up to the first that lies beyond another table's edge."""
    for i, ln in enumerate(lines):
        if any((pos(ln) - e) * direction > 0 for e in edges):
            return lines[:i]
    return lines


def _centre_in(box: BBox, other: BBox) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return other[0] <= cx <= other[2] and other[1] <= cy <= other[3]


def _read_part(lines: list[Line]) -> list[Line]:
    """The lines up to the first unread one (text ""), which is never caption or note text."""
    return next((lines[:i] for i, ln in enumerate(lines) if not ln.text), lines)


def _gap(a: Line, b: Line) -> float:
    return max(b.bbox[1] - a.bbox[3], a.bbox[1] - b.bbox[3], 0.0)


def _notes(lines: list[Line]) -> list[str]:
    """Note lines into notes: a line starting like a note opens a new one, others continue it."""
    notes: list[str] = []
    for ln in lines:
        if not notes or starts_note(ln.text):
            notes.append(ln.text)
        else:
            notes[-1] += " " + ln.text
    return notes


def capture_context(
    words: list[Word],
    table: BBox,
    page_size: tuple[float, float],
    *,
    other_tables: list[BBox] | None = None,
    seen: tuple[float, float] | None = None,
    max_gap: float = 2.5,
    caption_max_lines: int = 3,
    notes_max_lines: int = 4,
    margin: float = PAGE_MARGIN,
    unread: Sequence[BBox] = (),
) -> Context:
    """Caption and notes of the table at `table` (page px) from the page's `words` (page px).

    seen: the vertical range of the page the words cover (None: the whole page, as with a
    text layer); margin: the share of the page height at top and bottom that holds running
    heads and page numbers, ignored when judging whether the page beyond is clear; unread: boxes
    of text lines seen but not read (worker.core.strip_lines), as tall as their ink: they weigh in
    the line height, end or lengthen a block and make the page beyond not clear, as read lines
    do, but are never caption or note text.
    """
    width, height = page_size
    others = [b for b in other_tables or [] if b != tuple(table)]
    x_lo = table[0] - 0.05 * width
    x_hi = table[2] + 0.05 * width
    outside = [w for w in words if w.text.strip() and not _inside(w, table) and not any(_inside(w, b) for b in others)]
    lines = [ln for ln in group_lines(outside) if ln.bbox[2] > x_lo and ln.bbox[0] < x_hi]
    blanks = [
        Word("\u2022", (b[0], b[1], b[2], b[3]))
        for b in unread
        if b[2] > x_lo and b[0] < x_hi and not any(_centre_in(b, o) for o in others)
    ]  # grouped into lines as words are (one line a row unless a wide gap parts it), then blanked
    lines += [Line("", ln.bbox, ln.height) for ln in group_lines(blanks)] if blanks else []
    heights = [ln.height for ln in lines] or [w.bbox[3] - w.bbox[1] for w in words] or [height * 0.01]
    line_h = max(1.0, statistics.median(heights))
    above = sorted((ln for ln in lines if ln.bbox[3] <= table[1] + 0.5 * ln.height), key=lambda ln: -ln.bbox[3])
    below = sorted((ln for ln in lines if ln.bbox[1] >= table[3] - 0.5 * ln.height), key=lambda ln: ln.bbox[1])
    # a line just above another table is that table's caption, not this one's note; a note
    # line just below another table is that table's note; nothing beyond another table is ours
    below = [
        ln for ln in below if not any(0 <= b[1] - ln.bbox[3] <= max_gap * line_h and _x_overlap(b, ln) for b in others)
    ]
    above = [
        ln
        for ln in above
        if not (
            starts_note(ln.text)
            and any(0 <= ln.bbox[1] - b[3] <= max_gap * line_h and _x_overlap(b, ln) for b in others)
        )
    ]
    below = _until_table(below, [b[1] for b in others if b[1] >= table[3]], lambda ln: ln.bbox[1], 1)
    above = _until_table(above, [b[3] for b in others if b[3] <= table[1]], lambda ln: ln.bbox[3], -1)

    ctx = Context()
    block = _block(above, table[1] - above[0].bbox[3] if above else 0.0, line_h, max_gap)
    caption_lines: list[Line] = []
    if block:
        marked = next((i for i, ln in enumerate(block[:caption_max_lines]) if starts_caption(ln.text)), None)
        if marked is not None:
            caption_lines = block[: marked + 1]
        elif len(block) <= caption_max_lines:
            caption_lines = block
    caption_lines = _read_part(caption_lines)
    ctx.caption = " ".join(ln.text for ln in reversed(caption_lines))
    block = _block(below, below[0].bbox[1] - table[3] if below else 0.0, line_h, max_gap)
    note_lines: list[Line] = []
    if block:
        if len(block) <= notes_max_lines:
            note_lines = block
        elif starts_note(block[0].text):
            note_lines = block[:notes_max_lines]
    note_lines = _read_part(note_lines)
    ctx.notes = _notes(note_lines)

    top_zone, bottom_zone = margin * height, (1 - margin) * height
    seen_top, seen_bottom = seen if seen is not None else (0.0, height)
    rest_above = [ln for ln in above[len(caption_lines) :] if ln.bbox[1] >= top_zone and not is_rule(ln.text)]
    rest_below = [ln for ln in below[len(note_lines) :] if ln.bbox[3] <= bottom_zone and not is_rule(ln.text)]
    tables_above = any(b[3] <= table[1] for b in others)
    tables_below = any(b[1] >= table[3] for b in others)
    ctx.above_clear = False if rest_above or tables_above else (True if seen_top <= top_zone else None)
    ctx.below_clear = False if rest_below or tables_below else (True if seen_bottom >= bottom_zone else None)
    return ctx


def is_continued_caption(caption: str) -> bool:
    """True for captions that say the table goes on from an earlier page ("Table 3 (continued)")."""
    return bool(CONTINUED.search(caption))
