"""A table as typed columns: what a query engine needs from the grid.

Row lines serve retrieval; a question like "the total of column X where Y" needs columns
with a type. Every grid column becomes one column with a SQL-safe, unique name (the header
path is kept beside it as metadata), numeric when nearly all its non-null cells parse as
numbers (`worker.core.numbers`); such a column also keeps each cell's text in `<name>__text`
and the footnote markers split off in `<name>__note`, so nothing printed is lost. Row-group
labels (projected row headers, full-width section rows) become the `row_group` column, not
rows (a group label with no data row after it, such as a closing full-width row, is kept as a
row with only `row_group` set); `grid_row` ties each row back to the grid (and the HTML).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from worker.core.headers import PATH_SEP, body_rows, column_paths, header_rows_of
from worker.core.numbers import parse_number
from worker.core.types import TableGrid
from worker.core.units import column_units

SCHEMA_VERSION = 1
NUMERIC_SHARE = 0.9  # of a column's non-null cells that must parse for it to be numeric
MAX_NAME = 60
GRID_ROW = "grid_row"
ROW_GROUP = "row_group"
TEXT_SUFFIX = "__text"
NOTE_SUFFIX = "__note"

# Words a SQL parser reserves (DuckDB's list, plus common ones): a name equal to one gets a `_`.
RESERVED = frozenset(
    """all analyse analyze and any array as asc asymmetric both case cast check collate column constraint create
    default deferrable desc describe distinct do else end except false fetch for foreign from grant group having in
    initially intersect into lambda lateral leading limit not null offset on only or order pivot pivot_longer
    pivot_wider placing primary qualify references returning select show some summarize symmetric table then to
    trailing true union unique unpivot using variadic when where window with join inner outer left right full cross
    natural by between like is exists values delete insert update drop alter""".split()
)


@dataclass(slots=True)
class Column:
    """One output column. kind: 'integer', 'number' or 'text' (the values' type);
    role: 'row', 'group', 'label' (the stub), 'value', 'text' (of a value) or 'note'.
    `source_col` is the grid column it comes from (-1 for `grid_row` and `row_group`)."""

    name: str
    kind: str
    role: str
    source_col: int = -1
    path: list[str] = field(default_factory=list)
    unit: str | None = None
    unit_source: str | None = None
    percent: bool = False

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "type": self.kind, "role": self.role}
        if self.source_col >= 0:
            d["source_col"] = self.source_col
            d["path"] = list(self.path)
            d["label"] = PATH_SEP.join(self.path)
        if self.unit:
            d["unit"] = self.unit
            d["unit_source"] = self.unit_source
        if self.percent:
            d["percent"] = True
        return d


@dataclass(slots=True)
class TypedTable:
    """Columns and row values (one list per row, in column order; None is SQL NULL)."""

    columns: list[Column]
    rows: list[list[Any]]
    header_rows: int = 0
    row_label_column: str | None = None
    caption: str = ""

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def values(self, name: str) -> list[Any]:
        i = [c.name for c in self.columns].index(name)
        return [row[i] for row in self.rows]

    def value_column(self, source_col: int) -> Column | None:
        """The column holding grid column `source_col`'s values (parsed when numeric)."""
        return next((c for c in self.columns if c.source_col == source_col and c.role in ("value", "label")), None)

    def schema(self) -> dict[str, Any]:
        """What the table JSON stores under `schema` (and the Parquet file's metadata)."""
        return {
            "version": SCHEMA_VERSION,
            "n_rows": len(self.rows),
            "header_rows": self.header_rows,
            "row_label_column": self.row_label_column,
            "columns": [c.to_dict() for c in self.columns],
        }


def sql_name(text: str, fallback: str) -> str:
    """A lower-case identifier of ASCII letters, digits and `_` that needs no quoting:
    accents folded, other characters turned into `_`, a leading digit prefixed with `c`,
    reserved words suffixed with `_`, at most MAX_NAME characters; `fallback` when empty."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    folded = folded.replace("%", " pct ").replace("#", " num ").replace("&", " and ")
    name = re.sub(r"[^a-z0-9]+", "_", folded).strip("_")[:MAX_NAME].rstrip("_")
    if not name:
        name = fallback
    if name[0].isdigit():
        name = "c" + name
    if name in RESERVED:
        name += "_"
    return name


def _unique(name: str, taken: set[str]) -> str:
    out, k = name, 2
    while out in taken:
        suffix = f"_{k}"
        out = name[: MAX_NAME - len(suffix)] + suffix
        k += 1
    taken.add(out)
    return out


def _reserve(name: str, taken: set[str], suffixes: Sequence[str]) -> str:
    """A unique name whose `__text`/`__note` companions are free as well."""
    base, k = name, 2
    while name in taken or any(name + s in taken for s in suffixes):
        suffix = f"_{k}"
        name = base[: MAX_NAME - len(suffix)] + suffix
        k += 1
    taken.add(name)
    taken.update(name + s for s in suffixes)
    return name


def typed_table(
    grid: TableGrid,
    *,
    header_rows: int | None = None,
    caption: str = "",
    notes: Sequence[str] = (),
    numeric_share: float = NUMERIC_SHARE,
) -> TypedTable:
    """The typed column view of a grid (header rows as `header_rows_of` finds them unless given)."""
    if header_rows is None:
        header_rows = header_rows_of(grid)[0]
    paths = column_paths(grid, header_rows)
    rows = body_rows(grid, header_rows)
    data = [r for r in rows if r.kind == "data"]
    parsed = [[parse_number(r.cells[c]) for r in data] for c in range(grid.n_cols)]
    numeric = []
    for c in range(grid.n_cols):
        filled = [p for p, r in zip(parsed[c], data) if r.cells[c] and p.kind != "null"]
        good = [p for p in filled if p.kind == "number"]
        numeric.append(bool(good) and len(good) >= numeric_share * len(filled) and (c > 0 or grid.n_cols == 1))
    percent = [
        sum(p.percent for p in col if p.kind == "number") > 0.5 * sum(p.kind == "number" for p in col) for col in parsed
    ]
    units = column_units(paths, numeric, caption, notes, percent)
    taken: set[str] = {GRID_ROW}
    columns = [Column(GRID_ROW, "integer", "row")]
    has_groups = any(r.group for r in data) or any(r.kind == "group" for r in rows)
    if has_groups:
        columns.append(Column(ROW_GROUP, "text", "group"))
        taken.add(ROW_GROUP)
    getters: list[Any] = [lambda r, i: r.row]
    if has_groups:
        getters.append(lambda r, i: PATH_SEP.join(r.group) or None)
    row_label = None
    for c in range(grid.n_cols):
        base = sql_name(PATH_SEP.join(paths[c]).replace(PATH_SEP, "_"), f"col_{c + 1}")
        unit = units[c]
        if numeric[c]:
            has_note = any(p.note for p in parsed[c])
            name = _reserve(base, taken, (TEXT_SUFFIX, NOTE_SUFFIX))
            values = [p.value if p.kind == "number" else None for p in parsed[c]]
            is_int = all(isinstance(v, int) for v in values if v is not None)
            pct = sum(p.percent for p in parsed[c] if p.kind == "number") > 0.5 * sum(
                p.kind == "number" for p in parsed[c]
            )
            if pct and not unit:
                unit = {"unit": "%", "source": "values"}
            columns.append(
                Column(
                    name,
                    "integer" if is_int else "number",
                    "value",
                    c,
                    paths[c],
                    unit["unit"] if unit else None,
                    unit["source"] if unit else None,
                    pct,
                )
            )
            getters.append(lambda r, i, c=c: parsed[c][i].value if parsed[c][i].kind == "number" else None)
            columns.append(Column(name + TEXT_SUFFIX, "text", "text", c, paths[c]))
            getters.append(lambda r, i, c=c: r.cells[c] or None)
            if has_note:
                columns.append(Column(name + NOTE_SUFFIX, "text", "note", c, paths[c]))
                getters.append(lambda r, i, c=c: parsed[c][i].note or None)
        else:
            name = _unique(base, taken)
            role = "label" if c == 0 else "value"
            columns.append(
                Column(
                    name, "text", role, c, paths[c], unit["unit"] if unit else None, unit["source"] if unit else None
                )
            )
            getters.append(lambda r, i, c=c: r.cells[c] or None)
            if c == 0:
                row_label = name
    out_rows = [[get(r, i) for get in getters] for i, r in enumerate(data)]
    # group labels with no data row after them (a closing full-width row): kept as rows of their own
    last = max((k for k, r in enumerate(rows) if r.kind == "data"), default=-1)
    for r in rows[last + 1 :]:
        if r.kind == "group" and r.group:
            out_rows.append([r.row, PATH_SEP.join(r.group)] + [None] * (len(columns) - 2))
    return TypedTable(columns, out_rows, header_rows, row_label, caption)


def typed_from_serialisations(grid: TableGrid, ser: dict[str, Any]) -> TypedTable:
    """The typed view with the header rows, caption and notes a table's serialisations chose."""
    return typed_table(
        grid,
        header_rows=int(ser.get("header_rows", 0)) if "header_rows" in ser else None,
        caption=str(ser.get("caption") or ""),
        notes=[str(n) for n in ser.get("notes") or []],
    )
