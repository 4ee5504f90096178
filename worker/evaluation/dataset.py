"""Ground-truth tables of an evaluation folder (`<data>/<source>/gt.jsonl`, see eval README).

Records come back typed and with a complete grid: ICDAR lists only non-empty cells, so the
missing slots are filled with empty 1x1 cells (as its HTML does). Tables that cannot give
oracle objects (flagged `gt_issue`, no cell box at all, a grid that is not a partition) are
skipped and counted, so a report can say what it did not measure.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, cast

from worker.core.types import BBox

SKIP_GT_ISSUE = "gt_issue"
SKIP_NO_BBOX = "no_cell_bbox"
SKIP_BAD_GRID = "bad_grid"


@dataclass(frozen=True, slots=True)
class GtCell:
    """One ground-truth cell; bbox is the text-content box in image pixels (None if unknown)."""

    row: int
    col: int
    rowspan: int
    colspan: int
    text: str
    bbox: BBox | None
    is_header: bool = False

    @property
    def is_span(self) -> bool:
        return self.rowspan > 1 or self.colspan > 1


@dataclass
class GtTable:
    """One ground-truth table: its complete cell grid, HTML and image (size read lazily)."""

    source: str
    table_id: str
    image_path: Path
    html: str
    n_rows: int
    n_cols: int
    cells: list[GtCell]
    has_span: bool
    header_rows: int = 0
    _image_size: tuple[int, int] | None = field(default=None, repr=False)

    @property
    def image_size(self) -> tuple[int, int]:
        """(width, height) of the table image; opened only on first use (the header only)."""
        if self._image_size is None:
            from PIL import Image

            with Image.open(self.image_path) as im:
                self._image_size = (int(im.size[0]), int(im.size[1]))
        return self._image_size


class _TheadRows(HTMLParser):
    """Counts the `<tr>` inside `<thead>`: the header rows the ground truth marks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.in_thead = False
        self.rows = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "thead":
            self.in_thead = True
        elif tag == "tr" and self.in_thead:
            self.rows += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self.in_thead = False


def thead_rows(html: str) -> int:
    """Number of header rows marked by `<thead>` (0 when the HTML has none, as ICDAR)."""
    p = _TheadRows()
    p.feed(html)
    p.close()
    return p.rows


def _bbox(value: object) -> BBox | None:
    if not value:
        return None
    x0, y0, x1, y1 = (float(v) for v in cast(list[float], value))
    if x1 <= x0 or y1 <= y0:
        return None
    return (x0, y0, x1, y1)


def complete_grid(raw_cells: list[dict], n_rows: int, n_cols: int, header_rows: int) -> list[GtCell] | None:
    """Typed cells covering every slot exactly once, or None when the cells overlap or leave it."""
    owner = [[False] * n_cols for _ in range(n_rows)]
    cells: list[GtCell] = []
    for c in raw_cells:
        r, k = int(c["row"]), int(c["col"])
        rs, cs = int(c.get("rowspan", 1)), int(c.get("colspan", 1))
        if r < 0 or k < 0 or rs < 1 or cs < 1 or r + rs > n_rows or k + cs > n_cols:
            return None
        for i in range(r, r + rs):
            for j in range(k, k + cs):
                if owner[i][j]:
                    return None
                owner[i][j] = True
        cells.append(GtCell(r, k, rs, cs, str(c.get("text") or ""), _bbox(c.get("bbox")), is_header=r < header_rows))
    for i in range(n_rows):
        for j in range(n_cols):
            if not owner[i][j]:
                cells.append(GtCell(i, j, 1, 1, "", None, is_header=i < header_rows))
    cells.sort(key=lambda c: (c.row, c.col))
    return cells


def iter_tables(data_dir: Path, skipped: Counter[tuple[str, str]] | None = None) -> Iterator[GtTable]:
    """Yield every usable table of `data_dir/*/gt.jsonl`; count skips as (source, reason)."""
    data_dir = Path(data_dir)
    for gt in sorted(data_dir.glob("*/gt.jsonl")):
        source = gt.parent.name
        with gt.open(encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                rec = json.loads(line)
                reason = _skip_reason(rec)
                if reason is None:
                    table = _to_table(rec, source, data_dir)
                    if table is not None:
                        yield table
                        continue
                    reason = SKIP_BAD_GRID
                if skipped is not None:
                    skipped[(source, reason)] += 1


def load_tables(data_dir: Path, limit: int | None = None) -> tuple[list[GtTable], dict[str, dict[str, int]]]:
    """All usable tables (the first `limit` of them) and the skip counts by source and reason."""
    skipped: Counter[tuple[str, str]] = Counter()
    tables: list[GtTable] = []
    for table in iter_tables(data_dir, skipped):
        if limit is not None and len(tables) >= limit:
            break
        tables.append(table)
    by_source: dict[str, dict[str, int]] = {}
    for (source, reason), n in sorted(skipped.items()):
        by_source.setdefault(source, {})[reason] = n
    return tables, by_source


def _skip_reason(rec: dict) -> str | None:
    if rec.get("gt_issue"):
        return SKIP_GT_ISSUE
    if not any(_bbox(c.get("bbox")) for c in rec.get("cells", [])):
        return SKIP_NO_BBOX
    return None


def _to_table(rec: dict, source: str, data_dir: Path) -> GtTable | None:
    html = str(rec["html"])
    n_rows, n_cols = int(rec["n_rows"]), int(rec["n_cols"])
    header = thead_rows(html)
    cells = complete_grid(rec.get("cells", []), n_rows, n_cols, header)
    if cells is None or n_rows < 1 or n_cols < 1:
        return None
    image = str(rec["image"])
    return GtTable(
        source=source,
        table_id=Path(image).stem,
        image_path=data_dir / image,
        html=html,
        n_rows=n_rows,
        n_cols=n_cols,
        cells=cells,
        has_span=bool(rec.get("has_span", any(c.is_span for c in cells))),
        header_rows=header,
    )


def cells_in_crop(
    cells: Iterable[GtCell | dict[str, Any]], origin: tuple[float, float], scale: float = 1.0, key: str = "text_bbox"
) -> list[GtCell]:
    """Ground-truth cells moved into a crop's pixels: boxes scaled by `scale` (page to render
    resolution), then shifted so that `origin` (the crop's top left, already scaled) is (0, 0).

    Takes `GtCell`s or the sample pages' cell dicts (their `key` box, else `bbox`)."""
    dx, dy = origin
    out = []
    for c in cells:
        if isinstance(c, GtCell):
            cell, box = c, c.bbox
        else:
            cell = GtCell(c["row"], c["col"], c["rowspan"], c["colspan"], c["text"], None, c.get("is_header", False))
            box = c.get(key) or c["bbox"]
        moved = (
            None
            if box is None
            else (box[0] * scale - dx, box[1] * scale - dy, box[2] * scale - dx, box[3] * scale - dy)
        )
        out.append(replace(cell, bbox=moved))
    return out
