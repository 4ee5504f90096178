"""A caption detected as a table of its own becomes the caption of the table under it.

A detector sometimes boxes a table's caption apart from its body ("Table BR3. Reported
confirmed brucellosis cases ..." over the country rows). The body then has no caption, so a
question about the topic cannot find it, and similar tables of other documents outrank it;
the caption "table" holds no values at all. So, as retrieval sees a document: a table whose
only filled row reads as a caption (`worker.core.headers.is_caption_text`), followed on the
same page by a table of at least two rows without a caption of its own, is that table's
caption. The stored tables, their HTML and cell lists stay as extracted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from worker.core.headers import clean, is_caption_text
from worker.core.serialise import TableContext, serialisations
from worker.retrieval.logical_tables import LogicalTable


def caption_text(t: LogicalTable) -> str:
    """The text of a one-row table that reads as a caption, else ""."""
    filled = [c for c in t.grid.cells if clean(c.text)]
    if not filled or len({c.row for c in filled}) != 1 or len(t.pages) != 1:
        return ""
    text = clean(" ".join(c.text for c in sorted(filled, key=lambda c: c.col)))
    return text if is_caption_text(text) else ""


def _captioned(t: LogicalTable, caption: str) -> LogicalTable:
    ser = t.serialisations
    own = clean(str(ser.get("caption") or ""))
    context = TableContext(f"{caption} {own}".strip(), [str(n) for n in ser.get("notes") or []], list(t.pages))
    ser = serialisations(t.grid, context, table_id=t.table_id)
    return LogicalTable(t.table_id, t.parts, t.pages, t.grid, ser, t.row_pages)


def with_caption_tables(tables: Iterable[LogicalTable]) -> Iterator[LogicalTable]:
    """`tables` in order, each caption-only table folded into the table after it (see above)."""
    held: LogicalTable | None = None
    for t in tables:
        if held is not None:
            own = clean(str(t.serialisations.get("caption") or ""))
            if t.pages[:1] == held.pages and t.grid.n_rows >= 2 and not is_caption_text(own):
                t = _captioned(t, caption_text(held))
            else:
                yield held
            held = None
        if caption_text(t):
            held = t
            continue
        yield t
    if held is not None:
        yield held
