"""Words grouped into text lines: the one rule the core's line-aware repairs share."""

from __future__ import annotations

from dataclasses import dataclass

from worker.core.types import Word


@dataclass(slots=True)
class TextLine:
    """The words of one text line, left to right."""

    words: list[Word]

    @property
    def text(self) -> str:
        return " ".join(w.text.strip() for w in self.words if w.text.strip())

    @property
    def top(self) -> float:
        return min(w.bbox[1] for w in self.words)

    @property
    def bottom(self) -> float:
        return max(w.bbox[3] for w in self.words)


def text_lines(words: list[Word]) -> list[TextLine]:
    """Words into text lines, top to bottom: a word joins the line its vertical centre falls in."""
    lines: list[TextLine] = []
    for w in sorted(words, key=lambda w: ((w.bbox[1] + w.bbox[3]) / 2, w.bbox[0])):
        cy = (w.bbox[1] + w.bbox[3]) / 2
        for line in lines:
            if line.top <= cy <= line.bottom:
                line.words.append(w)
                break
        else:
            lines.append(TextLine([w]))
    for line in lines:
        line.words.sort(key=lambda w: w.bbox[0])
    return sorted(lines, key=lambda ln: ln.top)
