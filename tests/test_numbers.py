"""Numbers as statistical tables print them, and the typed column view built from a grid."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.core.columns import GRID_ROW, RESERVED, ROW_GROUP, sql_name, typed_table
from worker.core.describe import describe_table
from worker.core.numbers import parse_number, split_note
from worker.core.types import Cell, TableGrid


@pytest.mark.parametrize(
    "text, value",
    [
        ("1234", 1234),
        ("1,234", 1234),
        ("1,234,567", 1234567),
        ("1,234.5", 1234.5),
        ("1 234", 1234),  # space
        ("1\u00a0234", 1234),  # no-break space
        ("1\u2009234,5", 1234.5),  # thin space, decimal comma
        ("1\u202f234 567", 1234567),  # narrow no-break space
        ("1'234", 1234),  # Swiss
        ("1.234.567", 1234567),
        ("1.234,56", 1234.56),
        ("12,5", 12.5),
        ("0.5", 0.5),
        (".5", 0.5),
        ("3.0", 3.0),
        ("(12)", -12),  # accounting negative
        ("(1,234.5)", -1234.5),
        ("-12", -12),
        ("–12", -12),  # en dash
        ("—12", -12),  # em dash
        ("−12.25", -12.25),  # minus sign
        ("+7", 7),
        ("$1,200", 1200),
        ("£-3", -3),
        ("-€4.5", -4.5),
        ("$(12)", -12),
        ("1e5", 100000.0),
        ("  42  ", 42),
        ("0", 0),
    ],
)
def test_numbers(text, value):
    p = parse_number(text)
    assert p.kind == "number" and p.value == value and type(p.value) is type(value)
    assert not p.percent and p.note == ""


@pytest.mark.parametrize(
    "text, value",
    [("12.5%", 12.5), ("12 %", 12), ("(12.5%)", -12.5), ("–3%", -3), ("(4)%", -4), ("1,234‰", 1234)],
)
def test_percentages_keep_the_printed_scale(text, value):
    p = parse_number(text)
    assert (p.kind, p.value, p.percent) == ("number", value, True)


@pytest.mark.parametrize(
    "text, value, note",
    [
        ("1,234*", 1234, "*"),
        ("1,234 **", 1234, "**"),
        ("12†", 12, "†"),
        ("12‡§", 12, "‡§"),
        ("7¹", 7, "¹"),
        ("7²³", 7, "²³"),
        ("7ᵃ", 7, "ᵃ"),
        ("45[2]", 45, "[2]"),
        ("(12)*", -12, "*"),
        ("12.5%*", 12.5, "*"),
        ("*12", 12, "*"),
        ("†(3)", -3, "†"),
    ],
)
def test_footnote_markers_are_split_off(text, value, note):
    p = parse_number(text)
    assert (p.kind, p.value, p.note) == ("number", value, note)


@pytest.mark.parametrize(
    "text", ["", "   ", "-", "--", "–", "—", "−", "(X)", "(x)", "x", "n/a", "N/A", "na", "n.a.", "..", "...", "…", ":"]
)
def test_placeholders_are_nulls(text):
    p = parse_number(text)
    assert p.kind == "null" and p.value is None


def test_a_placeholder_with_a_note_is_a_null_with_the_note():
    assert parse_number("–*") == parse_number("–*")
    p = parse_number("..¹")
    assert (p.kind, p.note) == ("null", "¹")


@pytest.mark.parametrize(
    "text",
    [
        "abc",
        "<0.5",
        "10-20",
        "12m",
        "1,23,456",
        "1.2.3",
        "2024/25",
        "1:2",
        "12 a",
        "()",
        "%",
        "$",
        "(",
        "'; DROP TABLE t; --",
        '") OR 1=1 --',
        "Robert'); DROP TABLE students;--",
        "\x00\x01",
        "1" * 61,  # a long run of digits is a code, not a quantity (and never a crash)
        "9" * 5000,
        "1e999",  # would overflow to infinity
    ],
)
def test_not_numbers_stay_text(text):
    p = parse_number(text)
    assert p.kind == "text" and p.value is None


def test_split_note_keeps_text_without_markers():
    assert split_note("North") == ("North", "")
    assert split_note("*") == ("*", "")  # a marker alone is not a note of nothing


@settings(max_examples=200, deadline=None)
@given(n=st.integers(-(10**15), 10**15), style=st.sampled_from(["plain", "comma", "space", "bracket", "minus", "dash"]))
def test_printed_integers_read_back(n, style):
    body = {
        "plain": f"{abs(n)}",
        "comma": f"{abs(n):,}",
        "space": f"{abs(n):,}".replace(",", " "),
        "bracket": f"{abs(n):,}",
        "minus": f"{abs(n):,}",
        "dash": f"{abs(n):,}",
    }[style]
    if n < 0:
        body = {"bracket": f"({body})", "minus": f"−{body}", "dash": f"–{body}"}.get(style, f"-{body}")
    assert parse_number(body).value == n


@settings(max_examples=100, deadline=None)
@given(x=st.decimals(min_value=-(10**9), max_value=10**9, places=2, allow_nan=False, allow_infinity=False))
def test_printed_decimals_read_back(x):
    assert parse_number(f"{x:,.2f}").value == pytest.approx(float(x), abs=0)


# --- typed columns ---------------------------------------------------------------------------


def grid(rows: list[list[str]], header_rows: int = 1, group_rows: tuple[int, ...] = ()) -> TableGrid:
    n_cols = len(rows[0])
    cells = []
    for r, row in enumerate(rows):
        if r in group_rows:
            cells.append(Cell(r, 0, 1, n_cols, row[0], is_projected_row_header=True))
            continue
        cells += [Cell(r, c, text=t, is_header=r < header_rows) for c, t in enumerate(row)]
    g = TableGrid(len(rows), n_cols, cells, header_rows=header_rows)
    g.owner_map()
    return g


def test_typed_columns_numbers_nulls_notes_and_groups():
    g = grid(
        [
            ["Region", "Revenue (£m)", "Share", "Status"],
            ["Europe", "", "", ""],
            ["North", "1,234*", "12.5%", "open"],
            ["South", "(12)", "–", "closed"],
            ["Asia", "", "", ""],
            ["East", "n/a", "3%", "open"],
            ["West", "7.5", "(X)", "x"],
        ],
        group_rows=(1, 4),
    )
    t = typed_table(g)
    names = [c.name for c in t.columns]
    assert names == [
        GRID_ROW,
        ROW_GROUP,
        "region",
        "revenue_m",
        "revenue_m__text",
        "revenue_m__note",
        "share",
        "share__text",
        "status",
    ]
    assert t.row_label_column == "region"
    assert t.values(ROW_GROUP) == ["Europe", "Europe", "Asia", "Asia"]  # groups are a column, not rows
    assert t.values("region") == ["North", "South", "East", "West"]
    assert t.values("revenue_m") == [1234, -12, None, 7.5]
    assert t.values("revenue_m__text") == ["1,234*", "(12)", "n/a", "7.5"]
    assert t.values("revenue_m__note") == ["*", None, None, None]
    assert t.values("share") == [12.5, None, 3, None]
    rev, share = t.column("revenue_m"), t.column("share")
    assert (rev.kind, rev.unit, rev.unit_source, rev.path) == ("number", "£m", "header", ["Revenue (£m)"])
    assert (share.unit, share.unit_source, share.percent) == ("%", "values", True)
    assert t.column("status").kind == "text"
    assert t.values(GRID_ROW) == [2, 3, 5, 6]
    schema = t.schema()
    assert schema["n_rows"] == 4 and schema["columns"][3]["label"] == "Revenue (£m)"


def test_numeric_only_when_nearly_all_non_null_cells_parse():
    rows = [["Item", "Value"]] + [[f"r{i}", str(i)] for i in range(18)]
    t = typed_table(grid(rows + [["r18", "about 3"], ["r19", "–"]]))
    assert t.column("value").kind == "integer"  # 18 of 19 non-null cells parse: numeric
    assert t.values("value")[-2:] == [None, None] and t.values("value__text")[-2:] == ["about 3", "–"]
    t = typed_table(grid(rows[:6] + [["r5", "about 3"], ["r6", "many"]]))
    assert t.column("value").kind == "text"  # 5 of 7: text, every value as printed
    assert t.values("value")[-2:] == ["about 3", "many"]


def test_a_closing_full_width_row_is_kept():
    t = typed_table(grid([["Item", "Qty"], ["a", "1"], ["b", "2"], ["Source: survey", ""]], group_rows=(3,)))
    assert t.values(GRID_ROW) == [1, 2, 3]
    assert t.values(ROW_GROUP) == [None, None, "Source: survey"] and t.values("qty") == [1, 2, None]


def test_no_value_is_lost():
    rows = [["Label", "A", "B"], ["x1", "1,0", "(3)†"], ["x2", "n/a", "foo"], ["x3", "2", "4"], ["x4", "", "5"]]
    t = typed_table(grid(rows))
    printed = {t for row in rows[1:] for t in row if t}
    kept = {v for row in t.rows for v, c in zip(row, t.columns) if c.kind == "text" and c.role != "note" and v}
    assert printed <= kept


def test_unit_from_the_caption_applies_to_numeric_columns():
    t = typed_table(grid([["Country", "2023", "2024"], ["FR", "1", "2"]]), caption="Exports (EUR million)")
    assert [(c.name, c.unit, c.unit_source) for c in t.columns if c.role == "value"] == [
        ("c2023", "EUR million", "caption"),
        ("c2024", "EUR million", "caption"),
    ]


def test_names_are_sql_safe_and_unique_for_hostile_headers():
    headers = [
        'id"; DROP TABLE t; --',
        "select",
        "2024",
        "",
        "Row group",
        "Grid row",
        "Total__text",
        "Total",
        "Total",
        "Ünïcødé ✓",
        "✓✓",
        "a" * 200,
    ]
    t = typed_table(grid([headers, ["x"] + ["1"] * (len(headers) - 1)]))
    names = [c.name for c in t.columns]
    assert len(set(names)) == len(names)
    for n in names:
        assert re.fullmatch(r"[a-z_][a-z0-9_]*", n) and len(n) <= 60 + len("__text") and n not in RESERVED
    value_names = [c.name for c in t.columns if c.role in ("label", "value")]
    assert value_names[:4] == ["id_drop_table_t", "select_", "c2024", "col_4"]
    assert [c.path for c in t.columns if c.role in ("label", "value")][0] == ['id"; DROP TABLE t; --']


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=30), min_size=1, max_size=8))
def test_sql_name_is_always_an_identifier(texts):
    for i, text in enumerate(texts):
        name = sql_name(text, f"col_{i + 1}")
        assert re.fullmatch(r"[a-z_][a-z0-9_]*", name) and name not in RESERVED


def test_description_names_rows_columns_units_and_view():
    rows = [["Region", "Revenue (£m)"]] + [[f"Site {i}", f"{i},000"] for i in range(1, 301)]
    t = typed_table(grid(rows), caption="Table 4: Revenue by site")
    text = describe_table(t, table_id="p0003-t01", caption="Table 4: Revenue by site", pages=[3], view="p0003-t01")
    lines = text.splitlines()
    assert lines[0] == "Table p0003-t01: Table 4: Revenue by site"
    assert "Page: 3" in lines and "Rows: 300, from 'Site 1' to 'Site 300'" in lines
    assert "Revenue (£m) [revenue_m: number, £m]" in text
    assert "Sample rows: (region=Site 1, revenue_m=1000)" in text
    assert lines[-1] == 'SQL view: "p0003-t01"'
