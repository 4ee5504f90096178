"""Totals that add up: check a table's printed totals against the sum of their members.

A misread digit in a number table is the one failure a reader cannot see: `2,535` looks as
right as `2,335`. But statistical tables often say what their numbers must add up to. Where a
row is labelled as a total ("Total", "Grand total", "EU15 Total", "All ages", "Overall",
"Sub-total", "Insgesamt"), each additive column's value in it must equal the sum of the rows
above it back to the previous total, section row or outer row group; where a column is labelled
as a total, each row's value in it must equal the sum of the columns left of it (or right of
it, when the total comes first) under the same parent header. Rounding is tolerated by the
decimals printed: n rounded members and a rounded total differ by at most (n + 1) half-units.

Conservative by design, since a false alarm on a correct table is a bug:
- only labels whose last word (or first, when it stands alone) is a total word count, so
  "Total nitrogen" or "Not at all" are quantities, not totals; a row label merely empty is
  never taken for a total;
- percent, rate, average, median, index and share columns are never summed (an "All ages" row
  of a rate column is not a sum), nor rows labelled so in a total column;
- a cell that is not a plain number (text, a span over the numbers) leaves its check out;
- several member sets are tried (the rows since the last total, with or without the sub-totals
  in between, every row above, the rows below a total that opens its section); the one that
  agrees in the most columns is the line's;
- a mismatch counts only where the same total line agrees in another column (the members are
  right, so the odd column holds a misread), or where the difference is one digit at one place
  (`200`, `0.3`), what a single misread character does. Otherwise the line is `unverified`:
  the table's totals may cover rows it does not show.

The result is plain data (`TotalsReport`); `choose_readings` uses the same check to pick, among
several OCR readings of a cell, those that make the totals agree.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from worker.core.columns import NUMERIC_SHARE
from worker.core.headers import PATH_SEP, BodyRow, body_rows, column_paths, header_rows_of, label_text, slot_cells
from worker.core.numbers import parse_number, split_note
from worker.core.types import Cell, TableGrid
from worker.core.units import is_unit, units_in_text

# Words that make a label a total, in the languages of European statistics (lower case).
TOTAL_WORDS = frozenset(
    {
        "total",
        "totals",
        "subtotal",
        "sub-total",
        "sum",
        "overall",
        "gesamt",
        "insgesamt",
        "summe",
        "zusammen",
        "totaal",
        "totale",
        "totali",
        "totalt",
        "somme",
        "suma",
        "ensemble",
        "yhteensä",
        "razem",
        "celkem",
        "összesen",
        "σ",
        "∑",
    }
)
# Words of a label that make its numbers a rate, share or statistic, never a sum.
RATE_WORDS = frozenset(
    {
        "%",
        "‰",
        "percent",
        "percentage",
        "percentages",
        "pct",
        "per",
        "cent",
        "rate",
        "rates",
        "ratio",
        "ratios",
        "average",
        "averages",
        "avg",
        "mean",
        "means",
        "median",
        "share",
        "shares",
        "index",
        "proportion",
        "prevalence",
        "incidence",
        "growth",
        "change",
        "density",
        "score",
        "sd",
        "se",
        "std",
        "ci",
        "min",
        "max",
        "minimum",
        "maximum",
        "range",
        "or",
        "hr",
        "rr",
        "p",
        "pp",
        "yield",
        "margin",
    }
)
# Member rows that break a total down rather than add to it ("of which: exports").
_PART_OF = re.compile(r"^(?:of which|of whom|thereof|including|incl\.?|memo|excluding|excl\.?|darunter|davon)\b")
_BRACKETS = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_TOKEN_SPLIT = re.compile(r"[\s:;,]+")
_SCALED_CODE = re.compile(r"^(?:[a-z]{3}|[£$€¥])(?:bn|mn|m|k|000s?|mio|mrd)$")
_RATE_SPLIT = re.compile(r"[^\w%‰]+")
MAX_ALL_WORDS = 3  # "All ages", "All persons", "All companies analysed"
MIN_MEMBERS = 2  # a total of one member proves nothing

AGREE, MISMATCH, UNVERIFIED = "agree", "mismatch", "unverified"


def _tokens(text: str) -> list[str]:
    t, _ = split_note(label_text(text))
    t = _BRACKETS.sub(" ", t.lower()).replace("sub total", "subtotal").replace("grand total", "total")
    return [tok for tok in _TOKEN_SPLIT.split(t) if tok and tok not in ("-", "–", ".")]


def _is_unitish(token: str) -> bool:
    return bool(is_unit(token)) or bool(_SCALED_CODE.match(token))


def is_total_label(text: str) -> bool:
    """A label that names a total: its last word is a total word ("Grand total", "EU15 Total"),
    or it is a total word followed only by units ("Total (n)", "Total EURbn"), or "All" and up
    to two more words ("All ages"). "Total nitrogen" and "Not at all" are not."""
    tokens = _tokens(text)
    if not tokens:
        return False
    if tokens[-1] in TOTAL_WORDS:
        return True
    if tokens[0] in TOTAL_WORDS and all(_is_unitish(t) for t in tokens[1:]):
        return True
    return tokens[0] == "all" and len(tokens) <= MAX_ALL_WORDS


def is_rate_label(text: str) -> bool:
    """A label saying its numbers are rates, shares or statistics (`%`, "Rate", "Mean age")."""
    low = label_text(text).lower()
    if "%" in low or "‰" in low or "per cent" in low:
        return True
    return any(tok in RATE_WORDS for tok in _RATE_SPLIT.split(low) if tok)


def decimals(text: str) -> int:
    """Digits printed after the decimal mark (0 for an integer)."""
    parsed = parse_number(text)
    if parsed.kind != "number" or isinstance(parsed.value, int):
        return 0
    m = re.search(r"[.,](\d+)\D*$", text.strip())
    return len(m.group(1)) if m else 0


def one_digit_apart(difference: float, places: int) -> bool:
    """True when `difference` is what one misread digit makes: d x 10^k, d in 1..9."""
    units = int(round(abs(difference) * 10**places))
    if units <= 0:
        return False
    while units % 10 == 0:
        units //= 10
    return units < 10


@dataclass(frozen=True, slots=True)
class SumCheck:
    """One printed total against the sum of its members.

    axis: "row" (a total row; the sum runs down one column) or "column" (a total column; the
    sum runs across one row). `total` and `members` are (row, col) grid slots; `label` says
    which total ("Total / 2024 / Cost"); status: "agree", "mismatch" or "unverified"."""

    axis: str
    total: tuple[int, int]
    members: tuple[tuple[int, int], ...]
    label: str
    printed: float
    computed: float
    difference: float
    tolerance: float
    status: str
    members_rule: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "axis": self.axis,
            "total": list(self.total),
            "members": [list(m) for m in self.members],
            "label": self.label,
            "printed": _plain(self.printed),
            "computed": _plain(self.computed),
            "difference": _plain(self.difference),
            "tolerance": _plain(self.tolerance),
            "status": self.status,
            "members_rule": self.members_rule,
        }


def _plain(v: float) -> float | int:
    r = round(v, 9)
    return int(r) if float(r).is_integer() and abs(r) < 2**53 else r


@dataclass(slots=True)
class TotalsReport:
    """Every total checked in a table; `status` sums it up: "agree" (every checked total adds
    up), "mismatch" (at least one does not), "unverified" (none could be confirmed) or "none"."""

    checks: list[SumCheck] = field(default_factory=list)
    # slots of totals and members that were blank or not a number where the rest of the check
    # was: reading them (again) would let that total be checked
    unread: list[tuple[int, int]] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for c in self.checks if c.status == status)

    @property
    def mismatches(self) -> list[SumCheck]:
        return [c for c in self.checks if c.status == MISMATCH]

    @property
    def status(self) -> str:
        if not self.checks:
            return "none"
        if self.count(MISMATCH):
            return MISMATCH
        return AGREE if self.count(AGREE) else UNVERIFIED

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "checked": len(self.checks),
            "agreed": self.count(AGREE),
            "mismatched": self.count(MISMATCH),
            "unverified": self.count(UNVERIFIED),
            "unread": len(self.unread),
            "checks": [c.to_dict() for c in self.checks],
        }


@dataclass(slots=True)
class _Table:
    """What the checks read from a grid: slots, rows, column paths, kinds, label columns."""

    slots: list[list[Cell]]
    rows: list[BodyRow]
    paths: list[list[str]]
    numeric: list[bool]
    additive: list[bool]
    n_label: int


def _numeric_columns(grid: TableGrid, rows: list[BodyRow], slots: list[list[Cell]]) -> tuple[list[bool], list[bool]]:
    """(numeric, percent-valued) per column, over data rows, as the typed view decides it."""
    numeric, percent = [], []
    data = [r for r in rows if r.kind == "data"]
    for c in range(grid.n_cols):
        parsed = [parse_number(r.cells[c]) for r in data if r.cells[c] and slots[r.row][c].col == c]
        filled = [p for p in parsed if p.kind != "null"]
        good = [p for p in filled if p.kind == "number"]
        numeric.append(bool(good) and len(good) >= NUMERIC_SHARE * len(filled))
        percent.append(bool(good) and sum(p.percent for p in good) > 0.5 * len(good))
    return numeric, percent


def _table(grid: TableGrid, header_rows: int | None, caption: str, notes: Sequence[str]) -> _Table | None:
    if grid.n_rows < 2 or grid.n_cols < 2:
        return None
    if header_rows is None:
        header_rows = header_rows_of(grid)[0]
    slots = slot_cells(grid)
    rows = body_rows(grid, header_rows)
    paths = column_paths(grid, header_rows)
    numeric, percent = _numeric_columns(grid, rows, slots)
    # label columns: the first (as in the typed view: years or codes there are labels) and the
    # text columns after it, up to the first numeric one
    n_label = next((c for c in range(1, grid.n_cols) if numeric[c]), grid.n_cols)
    wide = [u for u in units_in_text(caption) + [u for n in notes for u in units_in_text(n)]]
    rates = any(is_rate_label(u) for u in wide)  # "(in %)" over the whole table
    additive = [
        numeric[c] and not rates and not percent[c] and c >= n_label and not any(is_rate_label(p) for p in paths[c])
        for c in range(grid.n_cols)
    ]
    return _Table(slots, rows, paths, numeric, additive, n_label)


def cell_value(text: str) -> float | None:
    """A member's or total's value; a null placeholder ("-", "..") is 0; None when not a number."""
    p = parse_number(text)
    if p.kind == "null":
        return 0.0
    if p.kind == "number" and p.value is not None:
        return float(p.value)
    return None


_SUB_WORDS = frozenset({"subtotal", "sub-total"})


def _row_total_level(t: _Table, r: int) -> tuple[int, int] | None:
    """(label column holding this row's total label, 1 for a sub-total word else 0), or None when
    the row is no total row. Lower is higher: a grand total (0, 0) covers sub-totals (0, 1)."""
    row = t.slots[r]
    for k in range(t.n_label):
        cell = row[k]
        if cell.row != r or cell.rowspan > 1 or not is_total_label(cell.text):
            continue
        # label columns right of it must be empty or the same cell ("Total | Men" is not a total)
        if all(row[j] is cell or not row[j].text.strip() for j in range(k + 1, t.n_label)):
            return k, int(any(tok in _SUB_WORDS for tok in _tokens(cell.text)))
        return None
    return None


def _row_label(t: _Table, r: int) -> str:
    parts: list[str] = []
    for k in range(t.n_label):
        text = label_text(t.slots[r][k].text)
        if text and (not parts or parts[-1] != text):
            parts.append(text)
    return PATH_SEP.join(parts)


def _member_row_ok(t: _Table, r: int) -> bool:
    label = _row_label(t, r).lower()
    return not _PART_OF.match(label) and not is_rate_label(label)


def _row_candidates(t: _Table, pos: int, levels: dict[int, tuple[int, int]]) -> list[tuple[str, list[int]]]:
    """Member row sets for the total row at body position `pos`, in order of preference."""
    rows = t.rows
    total = rows[pos]
    level = levels[total.row]
    k = level[0]
    leaves: list[int] = []
    subs: list[int] = []
    i = pos - 1
    while i >= 0:
        b = rows[i]
        if b.kind in ("group", "header"):
            break
        if b.kind == "data":
            if any(t.slots[b.row][j] is not t.slots[total.row][j] for j in range(k)):
                break  # another outer row group
            lv = levels.get(b.row)
            if lv is not None and lv <= level:
                break
            if lv is not None:  # a deeper sub-total stands for the rows since the one before it
                subs.append(b.row)
            elif _member_row_ok(t, b.row):
                leaves.append(b.row)
        i -= 1
    local_top = i
    out: list[tuple[str, list[int]]] = []
    leaves.reverse()
    if subs:
        out.append(("sub-totals above", sorted(subs + [r for r in leaves if r not in _covered(t, subs, levels)])))
    out.append(("rows above", leaves))
    if local_top >= 0 and k == 0:  # every leaf row above, across sections
        wide = [
            b.row
            for b in rows[:pos]
            if b.kind == "data" and b.row not in levels and _member_row_ok(t, b.row) and b.row not in leaves
        ]
        if wide:
            out.append(("all rows above", sorted(leaves + wide)))
    if not leaves and not subs:  # a total opening its section: the rows below it
        below: list[int] = []
        for b in rows[pos + 1 :]:
            if b.kind in ("group", "header") or b.row in levels:
                break
            if b.kind == "data":
                if any(t.slots[b.row][j] is not t.slots[total.row][j] for j in range(k)):
                    break
                if _member_row_ok(t, b.row):
                    below.append(b.row)
        out.append(("rows below", below))
    return [(rule, m) for rule, m in out if len(m) >= MIN_MEMBERS]


def _covered(t: _Table, subs: list[int], levels: dict[int, tuple[int, int]]) -> set[int]:
    """Leaf rows above each sub-total back to the total row before it (what it stands for)."""
    covered: set[int] = set()
    index = {b.row: i for i, b in enumerate(t.rows)}
    for s in subs:
        i = index[s] - 1
        while i >= 0 and t.rows[i].kind not in ("group", "header") and t.rows[i].row not in levels:
            covered.add(t.rows[i].row)
            i -= 1
    return covered


def _compare(
    t: _Table, axis: str, total: tuple[int, int], members: Sequence[tuple[int, int]]
) -> tuple[float, float, float, int] | None:
    """(printed, computed, tolerance, decimals), or None when a cell is not a plain number."""
    cells = [total, *members]
    for r, c in cells:
        cell = t.slots[r][c]
        if cell.rowspan > 1 or cell.colspan > 1:
            return None
    printed = cell_value(t.slots[total[0]][total[1]].text)
    if printed is None or not t.slots[total[0]][total[1]].text.strip():
        return None
    texts = [t.slots[r][c].text.strip() for r, c in members]
    if not all(texts):  # a blank member is unknown, not zero ("-" and ".." are nil)
        return None
    values = [cell_value(text) for text in texts]
    if any(v is None for v in values) or all(parse_number(text).kind == "null" for text in texts):
        return None
    places = max(decimals(t.slots[r][c].text) for r, c in cells)
    computed = math.fsum(v for v in values if v is not None)
    tolerance = 0.5 * 10.0**-places * (len(members) + 1) * 1.000001
    return printed, computed, tolerance, places


def _unread(t: _Table, slots: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The slots (no spans among them) whose text is blank or not a number."""
    if any(t.slots[r][c].rowspan > 1 or t.slots[r][c].colspan > 1 for r, c in slots):
        return []
    return [(r, c) for r, c in slots if not t.slots[r][c].text.strip() or cell_value(t.slots[r][c].text) is None]


def _judge(
    line: list[tuple[str, dict[int, tuple[tuple[int, int], list[tuple[int, int]]]]]],
    t: _Table,
    axis: str,
    label_of: Mapping[int, str],
) -> tuple[list[SumCheck], list[tuple[int, int]]]:
    """Pick the member rule agreeing along the most positions of one total line, then judge each;
    also the unread slots of the positions that rule could not check."""
    best: list[SumCheck] = []
    best_unread: list[tuple[int, int]] = []
    best_agree = -1
    for rule, positions in line:
        checks = []
        unread: list[tuple[int, int]] = []
        for pos, (total, members) in positions.items():
            got = _compare(t, axis, total, members)
            if got is None:
                unread += _unread(t, [total, *members])
                continue
            printed, computed, tolerance, places = got
            diff = printed - computed
            status = AGREE if abs(diff) <= tolerance else MISMATCH
            checks.append(
                (
                    SumCheck(
                        axis, total, tuple(members), label_of[pos], printed, computed, diff, tolerance, status, rule
                    ),
                    places,
                )
            )
        agree = sum(1 for c, _ in checks if c.status == AGREE)
        if agree > best_agree:
            best_agree = agree
            best_unread = unread
            confirmed = agree > 0
            best = [
                c
                if c.status == AGREE or confirmed or one_digit_apart(c.difference, p)
                else replace(c, status=UNVERIFIED)
                for c, p in checks
            ]
    return best, best_unread


def check_totals(
    grid: TableGrid, header_rows: int | None = None, caption: str = "", notes: Sequence[str] = ()
) -> TotalsReport:
    """Every labelled total of the grid checked against its members (see the module docstring);
    a caption or note stating a table-wide rate unit ("in %") leaves every column unsummed."""
    t = _table(grid, header_rows, caption, notes)
    report = TotalsReport()
    if t is None:
        return report
    # total rows: one line each, positions are the additive columns
    levels = {b.row: lv for b in t.rows if b.kind == "data" and (lv := _row_total_level(t, b.row)) is not None}
    for pos, b in enumerate(t.rows):
        if b.row not in levels:
            continue
        cols = [c for c in range(t.n_label, grid.n_cols) if t.additive[c] and t.slots[b.row][c].col == c]
        label = _row_label(t, b.row)
        label_of = {c: PATH_SEP.join([label, *t.paths[c]]) for c in cols}
        line = [
            (rule, {c: ((b.row, c), [(r, c) for r in members]) for c in cols})
            for rule, members in _row_candidates(t, pos, levels)
        ]
        checks, unread = _judge(line, t, "row", label_of)
        report.checks += checks
        report.unread += [u for u in unread if u not in report.unread]
    # total columns: one line each, positions are the data rows
    totals = [c for c in range(grid.n_cols) if t.additive[c] and t.paths[c] and is_total_label(t.paths[c][-1])]
    for c in totals:
        line_c = []
        for rule, members_c in _column_candidates(t, c, set(totals)):
            positions = {
                b.row: ((b.row, c), [(b.row, m) for m in members_c])
                for b in t.rows
                if b.kind == "data" and _member_row_ok(t, b.row) and t.slots[b.row][c].col == c
            }
            line_c.append((rule, positions))
        label_of = {b.row: PATH_SEP.join([*t.paths[c], _row_label(t, b.row)]) for b in t.rows if b.kind == "data"}
        checks, unread = _judge(line_c, t, "column", label_of)
        report.checks += checks
        report.unread += [u for u in unread if u not in report.unread]
    return report


def _column_candidates(t: _Table, c: int, totals: set[int]) -> list[tuple[str, list[int]]]:
    parent = t.paths[c][:-1]

    def run(step: int) -> list[int]:
        out = []
        m = c + step
        while 0 <= m < len(t.paths) and m >= t.n_label:
            if m in totals or not t.additive[m] or t.paths[m][:-1] != parent or not t.paths[m]:
                break
            out.append(m)
            m += step
        return sorted(out)

    left, right = run(-1), run(1)
    out = [("columns left", left)] if len(left) >= MIN_MEMBERS else []
    if len(right) >= MIN_MEMBERS and len(left) < MIN_MEMBERS:
        out.append(("columns right", right))
    return out


# --- choosing among OCR readings -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reading:
    """One reading of a cell's text: what was read, by which reader, with what confidence."""

    text: str
    source: str
    confidence: float | None = None


@dataclass(slots=True)
class Decision:
    """What `choose_readings` did: the grid with the chosen texts, the report on it, and per
    changed cell {row, col, text, previous, source, readings}; `tried` combinations tested."""

    grid: TableGrid
    report: TotalsReport
    decided: list[dict[str, Any]] = field(default_factory=list)
    tried: int = 0


def cells_to_reread(report: TotalsReport, max_unread: int = 48) -> list[tuple[int, int]]:
    """The slots of every total and member of a check that does not agree, and (up to
    `max_unread`) the blank or unreadable cells that kept a total from being checked."""
    out: set[tuple[int, int]] = set()
    for c in report.checks:
        if c.status != AGREE:
            out.add(c.total)
            out.update(c.members)
    out.update(report.unread[:max_unread])
    return sorted(out)


def _with_texts(grid: TableGrid, texts: Mapping[tuple[int, int], str]) -> TableGrid:
    cells = [replace(cell, text=texts.get((cell.row, cell.col), cell.text)) for cell in grid.cells]
    return replace(grid, cells=cells, repairs=list(grid.repairs), row_bboxes=list(grid.row_bboxes))


def _score(report: TotalsReport) -> tuple[int, int]:
    return (report.count(AGREE), -report.count(MISMATCH) - report.count(UNVERIFIED))


def choose_readings(
    grid: TableGrid,
    readings: Mapping[tuple[int, int], Sequence[Reading]],
    *,
    header_rows: int | None = None,
    caption: str = "",
    notes: Sequence[str] = (),
    max_cells: int = 12,
    max_changes: int = 2,
    max_combinations: int = 400,
) -> Decision:
    """Among alternative readings of cells (keyed by the cell's (row, col)), the combination that
    makes the most totals agree, without undoing any that agreed.

    Bounded: only cells of checks that do not agree, whose readings parse to a different number
    than the current text, at most `max_cells` of them (least confident first), at most
    `max_changes` changed at once and `max_combinations` tried. Ties go to fewer changes, then
    to the more confident readings. A reading wins only if it turns a check to "agree"."""
    report = check_totals(grid, header_rows, caption, notes)
    decision = Decision(grid, report)
    if report.status in ("agree", "none") and not report.unread:
        return decision
    original = {(c.row, c.col): c.text for c in grid.cells}
    filled = _fill_unread(grid, report, readings, header_rows, caption, notes)
    if filled:
        grid = _with_texts(grid, {s: a.text for s, a in filled.items()})
        report = check_totals(grid, header_rows, caption, notes)
        decision = Decision(grid, report)
        decision.decided = [_decided(s, a, original[s], readings[s]) for s, a in sorted(filled.items())]
    if report.status in ("agree", "none"):
        return decision
    current = {(c.row, c.col): c.text for c in grid.cells}
    involved = set(cells_to_reread(report))
    options: dict[tuple[int, int], list[Reading]] = {}
    for slot, alts in readings.items():
        if slot not in involved or slot not in current:
            continue
        now = cell_value(current[slot])
        seen: set[float] = set()
        for alt in alts:
            v = cell_value(alt.text)
            if v is None or v == now or v in seen or not alt.text.strip():
                continue
            seen.add(v)
            options.setdefault(slot, []).append(alt)
    if not options:
        return decision
    ranked = sorted(options, key=lambda s: min((a.confidence or 0.0) for a in options[s]))[:max_cells]
    agreed_before = {(c.axis, c.total) for c in report.checks if c.status == AGREE}
    best: tuple[tuple[int, int], int, float] | None = None
    best_pick: dict[tuple[int, int], Reading] = {}
    best_report = report
    tried = 0
    for n in range(1, max_changes + 1):
        for slots in itertools.combinations(ranked, n):
            for alts in itertools.product(*(options[s] for s in slots)):
                if tried >= max_combinations:
                    break
                tried += 1
                pick = dict(zip(slots, alts))
                trial = check_totals(
                    _with_texts(grid, {s: a.text for s, a in pick.items()}), header_rows, caption, notes
                )
                agreed = {(c.axis, c.total) for c in trial.checks if c.status == AGREE}
                if not agreed_before <= agreed or len(agreed) <= len(agreed_before):
                    continue
                conf = sum(a.confidence or 0.0 for a in alts)
                key = (_score(trial), -n, conf)
                if best is None or key > best:
                    best, best_pick, best_report = key, pick, trial
        if best is not None:
            break  # fewer changes first: a wider search only when no smaller one helps
    decision.tried = tried
    if best is None:
        return decision
    decision.grid = _with_texts(grid, {s: a.text for s, a in best_pick.items()})
    decision.report = best_report
    decision.decided += [_decided(s, a, original[s], readings[s]) for s, a in sorted(best_pick.items())]
    return decision


def _decided(slot: tuple[int, int], alt: Reading, previous: str, readings: Sequence[Reading]) -> dict[str, Any]:
    return {
        "row": slot[0],
        "col": slot[1],
        "text": alt.text,
        "previous": previous,
        "source": alt.source,
        "confidence": alt.confidence,
        "readings": [{"text": a.text, "source": a.source, "confidence": a.confidence} for a in readings],
        "decided_by": "totals",
    }


def _fill_unread(
    grid: TableGrid,
    report: TotalsReport,
    readings: Mapping[tuple[int, int], Sequence[Reading]],
    header_rows: int | None,
    caption: str,
    notes: Sequence[str],
) -> dict[tuple[int, int], Reading]:
    """Readings of blank or unreadable cells that let a total be checked and agree.

    All are tried at once (a dropped column of small numbers has many); a filled cell is kept
    only where a check it takes part in then agrees, and only if no total that agreed before is
    lost: the sum confirms the reading, as it does for a choice between two readings."""
    texts = {(c.row, c.col): c.text for c in grid.cells}
    fills: dict[tuple[int, int], Reading] = {}
    for slot in report.unread:
        if slot not in texts or (texts[slot].strip() and cell_value(texts[slot]) is not None):
            continue
        # only a number fills a blank: a nil mark ("-") adds what the blank did, so no sum confirms it
        alt = next((a for a in readings.get(slot, ()) if parse_number(a.text).kind == "number"), None)
        if alt is not None:
            fills[slot] = alt
    if not fills:
        return {}
    trial = check_totals(_with_texts(grid, {s: a.text for s, a in fills.items()}), header_rows, caption, notes)
    confirmed = {s for c in trial.checks if c.status == AGREE for s in (c.total, *c.members)}
    kept = {s: a for s, a in fills.items() if s in confirmed}
    if not kept:
        return {}
    before = {(c.axis, c.total) for c in report.checks if c.status == AGREE}
    after = check_totals(_with_texts(grid, {s: a.text for s, a in kept.items()}), header_rows, caption, notes)
    agreed = {(c.axis, c.total) for c in after.checks if c.status == AGREE}
    return kept if before <= agreed and len(agreed) > len(before) else {}
