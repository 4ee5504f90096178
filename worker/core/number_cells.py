"""How well a grid keeps a table's numbers apart: the evidence for reading its structure again.

A table's figures stand apart: one value to a cell, or several each with its own label. Two
numbers side by side in one cell ("2.3 0.21") are figures of two rows or two columns read
together. So the share of the OCR's numbers that sit apart in the cells of the rebuilt grid
says how well the structure fits the text, without any ground truth. When the structure model
collapses rows (a noisy or photocopied crop: fifteen lines of figures read as three rows with
tall cells) or runs columns together, figures pile up side by side and the share falls to a
few tenths; on clean renders it stays high. Wrapped labels ("Number of financial companies
who applied ...") leave it alone, since words that are not numbers do not count, and so do
lists of labelled values ("Effi (10.5%) Plantafin (20.1%)") and dates.

Pure Python: the grid and the words are plain data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from worker.core.numbers import parse_number
from worker.core.types import TableGrid, Word


@dataclass(frozen=True, slots=True)
class NumberFit:
    """Of the `numbers` the words hold, `apart` sit apart in the cells of the grid."""

    apart: int
    numbers: int

    @property
    def share(self) -> float:
        return self.apart / self.numbers if self.numbers else 1.0


def _is_number(token: str) -> bool:
    return parse_number(token).kind == "number"


def _number_flags(text: str) -> list[bool]:
    """Which of a text's tokens are numbers; the whole text as one token when it reads as one
    number (`2 230`, thousands grouped by a space, is one number, not two)."""
    if not text.strip():
        return []
    if _is_number(text):
        return [True]
    return [_is_number(t) for t in text.split()]


def numbers_in(text: str) -> int:
    """Numbers a text holds."""
    return sum(_number_flags(text))


def numbers_apart(text: str) -> int:
    """Numbers of a cell's text with no other number beside them: a stack of figures read into
    one cell ("2.3 0.21 8.8") has none, while a cell that lists labelled values ("Effi (10.5%)
    Plantafin (20.1%)") or a date ("1 January 2008") keeps all of its numbers apart."""
    flags = _number_flags(text)
    return sum(
        f and not (i > 0 and flags[i - 1]) and not (i + 1 < len(flags) and flags[i + 1]) for i, f in enumerate(flags)
    )


def number_tokens(words: Sequence[Word]) -> int:
    """Numbers the words hold (the same count for every grid they are put in)."""
    return sum(numbers_in(w.text) for w in words)


def number_fit(grid: TableGrid, numbers: int) -> NumberFit:
    """How many of the table's `numbers` sit apart in the cells of `grid`."""
    apart = sum(numbers_apart(cell.text) for cell in grid.cells)
    return NumberFit(min(apart, numbers), numbers)


def needs_second_look(fit: NumberFit, below: float, min_numbers: int) -> bool:
    """True when enough numbers sit beside another in a cell that the structure deserves another reading."""
    return fit.numbers >= min_numbers and fit.share < below


def better_fit(candidate: NumberFit, current: NumberFit, margin: float) -> bool:
    """True when `candidate` parts clearly more numbers than `current` (by `margin` of them, at
    least two). A collapse costs most of a table's numbers, while cells that rightly hold two
    figures side by side (an estimate and its error) make readings differ by a few: those keep
    the first reading."""
    return candidate.apart >= current.apart + max(2, margin * current.numbers)
