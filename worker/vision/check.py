"""A model's answer -> a checked table, or the reason it is not one.

Sanitise to table markup, parse with the core's parser (which repairs ragged rows and
overlapping spans and lists each repair), refuse what is not a table worth storing (no
table, no cells, no text, absurdly large), and re-write it with the core's writer so the
stored HTML follows the same rules as the detector's (escaped text, one `<tr>` per row).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from worker.core.html_out import grid_to_html
from worker.core.html_parse import html_to_grid
from worker.core.types import TableGrid
from worker.vision.sanitise import sanitise_answer

MAX_SLOTS = 50_000  # rows x columns; far beyond any real table on a page


@dataclass(slots=True)
class CheckedAnswer:
    """`html`/`grid` are set when ok; otherwise `failure` (a code) and `reason` say why not."""

    html: str | None = None
    grid: TableGrid | None = None
    caption: str = ""
    failure: str | None = None
    reason: str | None = None
    removed: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.html is not None


def check_answer(text: str, max_chars: int = 200_000) -> CheckedAnswer:
    """Never raises on model output: every answer ends as a checked table or a failure."""
    repairs: list[str] = []
    if len(text) > max_chars:
        text = text[:max_chars]
        repairs.append(f"answer cut at {max_chars} characters")
    clean = sanitise_answer(text)
    out = CheckedAnswer(caption=clean.caption, removed=clean.removed, repairs=repairs + clean.repairs)
    if clean.html is None:
        return _fail(out, "no-table", "the answer contains no table" + ("" if text.strip() else " (it is empty)"))
    try:
        grid = html_to_grid(clean.html)
    except ValueError:
        return _fail(out, "no-table", "the answer contains no table")
    out.repairs += grid.repairs
    slots = grid.n_rows * grid.n_cols
    if slots == 0:
        return _fail(out, "empty-table", "the answer's table has no cells")
    if slots > MAX_SLOTS:
        return _fail(out, "too-large", f"the answer's table has {grid.n_rows}x{grid.n_cols} slots (> {MAX_SLOTS})")
    if not any(c.text for c in grid.cells):
        return _fail(out, "empty-table", f"the answer's table ({grid.n_rows}x{grid.n_cols}) has no text in any cell")
    html = grid_to_html(grid)
    if clean.caption:
        html = html.replace("<table>", f"<table><caption>{escape(clean.caption, quote=False)}</caption>", 1)
    out.html, out.grid = html, grid
    return out


def _fail(out: CheckedAnswer, failure: str, reason: str) -> CheckedAnswer:
    out.failure, out.reason = failure, reason
    return out
