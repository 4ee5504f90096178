"""Header labels kept whole when words are dealt out to cells.

Words go to the cell holding their centre. A column boundary a few pixels into a label then
deals its words to two columns ("Mean Std." | "Dev."), and both columns lose their labels.
In the header rows a label is one unit: the words of one line set closer than half a text
height (a word space) are joined into one word before they are dealt out, so the whole label
goes to the column its centre lies over. The body keeps its words as they are.
"""

from __future__ import annotations

from worker.core.bands import Band
from worker.core.types import Word

WORD_SPACE = 0.5  # words closer than this many text heights on one line are one label


def join_header_labels(words: list[Word], rows: list[Band], head: set[int]) -> list[Word]:
    """`words` with each header label's words joined into one word (text in reading order,
    box the union, the lowest confidence)."""
    if not head or not words:
        return words
    bands = [rows[i] for i in sorted(head) if 0 <= i < len(rows)]

    def in_head(w: Word) -> bool:
        cy = (w.bbox[1] + w.bbox[3]) / 2
        return any(b.lo <= cy < b.hi for b in bands)

    body = [w for w in words if not in_head(w)]
    labels: list[list[Word]] = []
    for w in sorted((w for w in words if in_head(w)), key=lambda w: w.bbox[0]):
        h = w.bbox[3] - w.bbox[1]
        for group in labels:
            last = group[-1]
            lh = max(h, last.bbox[3] - last.bbox[1])
            same_line = min(w.bbox[3], last.bbox[3]) - max(w.bbox[1], last.bbox[1]) >= 0.5 * lh
            if same_line and 0 <= w.bbox[0] - last.bbox[2] <= WORD_SPACE * lh:
                group.append(w)
                break
        else:
            labels.append([w])
    joined = [_join(g) for g in labels]
    return body + joined


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
