"""Label binding: is each ground-truth value found under its own labels in a prediction?

TEDS forgives a header cell that spans one column too many; every value below it is then
read under the wrong label, which is exactly the confident wrong answer retrieval must not
give. This measure scores what a reader of the table gets: for each ground-truth value cell,
is the same value in the predicted table, under a similar row label and a similar column path?

- Header rows. Ground truth: its own markup (`<thead>`, or leading rows of `<th>` cells);
  where it marks none (ICDAR-2013), the rows above the first row holding a value (a number or
  a placeholder dash) outside the first column, or, for tables of text values, above the
  first row whose first column starts a label. This rule belongs to the measure, not to the
  pipeline, so tuning the pipeline's header inference cannot move the ground truth. Prediction:
  what the output claims (`<thead>` or leading `<th>` rows); where it claims none, the header
  our serialisations would infer from the grid (`infer_header_rows`), the same for every tool.
- Stub. The first column, plus further leading columns whose body holds no values while a
  column to their right does (multi-column stubs: `Region | State`). The row label of a body
  cell is the text of the stub columns left of it in its row (row spans repeated).
- Column path. The texts of the header cells over the cell's columns, top to bottom, spans
  repeated into every column they cover, dot leaders dropped.
- Labels compare as case-folded letters and digits. Where the ground truth has no label
  (an empty stub cell, a table whose ground truth starts below its header), any predicted
  label passes: there is nothing to be wrong about. They are similar when their numbers
  (digit runs such as years) are the same, and the edit distance of the rest is at most one
  character in ten of the ground truth's (so `Totai` for `Total` fails, a slip in
  `Hydro-fluorocarbons` passes, and `2007` never passes for `2009`).
- Values compare exactly after whitespace is collapsed, or as equal numbers (`1 234` = `1,234`);
  every placeholder for a missing value (`-`, `–`, `n/a`) is the same value.
- One to one: a predicted cell binds at most one ground-truth cell (maximum matching among
  cells holding the same value). A table that was not detected binds nothing.

Three rates come out of the same matching: both labels, column path only, row label only.

Wrong values stated as certain. A ground-truth value that is not in the prediction while a cell
under its own labels holds another value (`misread`) is what a reader is told instead: a wrong
answer under the right question. Given the slots the prediction marks as doubtful (`unsure`,
from `worker.core.doubt`), each such value counts as `stated_wrong` when a cell under its labels
that no ground-truth value bound is unmarked, else `marked_wrong`; `marked_right` counts bound
values whose cell is marked (the mark's cost). TEDS and binding see neither the wrong value's
confidence nor the mark; this does.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rapidfuzz.distance import Levenshtein

from worker.core.headers import infer_header_rows, is_value_like, slot_cells
from worker.core.html_parse import html_to_grid
from worker.core.numbers import parse_number
from worker.core.types import TableGrid

_ALNUM = re.compile(r"[^0-9a-z]+")
_DOT_LEADER = re.compile(r"(?:\s*[.·…_]){3,}\s*$")
_DIGITS = re.compile(r"\d+")
MAX_EDITS_PER_CHAR = 0.1  # one slip in ten characters
MAX_GT_HEADER_ROWS = 5  # a ground-truth header deeper than this is a table of text values
_GT_CLASS_RANGE = re.compile(r"^\d{1,3}\s*[-–]\s*\d{1,3}$")  # an age band or size class: a label


@dataclass(frozen=True, slots=True)
class BoundCell:
    """One body cell as a reader sees it: its value and the labels it is read under."""

    row: int
    col: int
    value: str
    key: tuple[Any, ...]
    row_label: str
    col_path: str


def value_key(text: str) -> tuple[Any, ...]:
    """What two cells must share to hold the same value: the number, or the collapsed text."""
    t = " ".join(text.split())
    parsed = parse_number(t)
    if parsed.kind == "number":
        return ("n", parsed.value, parsed.percent)
    if parsed.kind == "null":
        return ("null",)
    return ("t", t)


def label_norm(text: str) -> str:
    """A label as compared: dot leaders dropped, case-folded, letters and digits only.

    The measure's own rule, not the pipeline's `label_text`: letters OCR made of a leader
    (`All ages ee ee`) stay in a predicted label and cost it, so a cleaner pipeline shows."""
    t = _DOT_LEADER.sub("", " ".join(text.split()))
    return _ALNUM.sub(" ", t.casefold()).strip()


@lru_cache(maxsize=65536)
def similar(gt: str, pred: str) -> bool:
    """Whether a predicted label reads as the ground truth's (both already `label_norm`ed)."""
    if gt == pred or not gt:  # no ground-truth label: nothing to be wrong about
        return True
    if _DIGITS.findall(gt) != _DIGITS.findall(pred):
        return False
    a, b = gt.replace(" ", ""), pred.replace(" ", "")
    budget = int(len(a) * MAX_EDITS_PER_CHAR)
    return Levenshtein.distance(a, b, score_cutoff=budget) <= budget


def _leading_th_rows(html: str) -> int:
    """Leading rows made of `<th>` cells only (a header marked without `<thead>`)."""
    rows = re.findall(r"<tr\b[^>]*>(.*?)</tr>", html, flags=re.IGNORECASE | re.DOTALL)
    n = 0
    for row in rows:
        tags = re.findall(r"<(td|th)\b", row, flags=re.IGNORECASE)
        if not tags or any(t.lower() == "td" for t in tags):
            break
        n += 1
    return n


def gt_header_rows(grid: TableGrid) -> int:
    """The measure's own rule for ground truth that marks no header: the rows above the first
    row with a value outside the first column (class ranges beside worded labels, "15-24" beside
    "Female", are labels); when that is deeper than a header ever is (a
    table of text values), the rows above the first one whose first column starts a label."""
    if grid.n_rows < 2 or grid.n_cols < 2:
        return 0
    slots = slot_cells(grid)
    for r in range(grid.n_rows):
        own = [slots[r][c].text.strip() for c in range(1, grid.n_cols) if slots[r][c].row == r]
        worded = any(t and not is_value_like(t) for t in own)
        if any(is_value_like(t) and not (worded and _GT_CLASS_RANGE.match(t)) for t in own):
            if r <= MAX_GT_HEADER_ROWS:
                return min(r, grid.n_rows - 1)
            break
    for r in range(1, grid.n_rows):
        if slots[r][0].row == r and slots[r][0].text.strip():
            return r
    return 1


def stub_columns(grid: TableGrid, header_rows: int) -> int:
    """How many leading columns form the stub: the first, and next ones without values while
    a column to their right has them."""
    if grid.n_cols < 2:
        return grid.n_cols
    slots = slot_cells(grid)

    def value_share(c: int) -> float:
        texts = [slots[r][c].text for r in range(header_rows, grid.n_rows) if slots[r][c].col == c]
        filled = [t for t in texts if t.strip()]
        return sum(is_value_like(t) for t in filled) / len(filled) if filled else 0.0

    shares = [value_share(c) for c in range(grid.n_cols)]
    k = 1
    while k < grid.n_cols - 1 and shares[k] == 0.0 and max(shares[k + 1 :]) >= 0.5:
        k += 1
    return k


def read_cells(html: str, ground_truth: bool) -> list[BoundCell]:
    """Every non-empty body cell of `html`'s table with its row label and column path.

    Ground-truth cells in the stub are left out (labels, not values); predicted stub cells
    stay in, so a value a prediction put in its stub can still be found.
    """
    try:
        grid = html_to_grid(html) if html and html.strip() else None
    except ValueError:
        grid = None
    if grid is None or grid.n_rows == 0:
        return []
    header = grid.header_rows or _leading_th_rows(html)
    if not header:
        header = gt_header_rows(grid) if ground_truth else infer_header_rows(grid)
    header = min(header, grid.n_rows)
    stub = stub_columns(grid, header)
    slots = slot_cells(grid)
    paths: list[list[str]] = []
    for c in range(grid.n_cols):
        parts: list[str] = []
        seen: set[int] = set()
        for r in range(header):
            cell = slots[r][c]
            text = label_norm(cell.text)
            if id(cell) not in seen and text and (not parts or parts[-1] != text):
                parts.append(text)
            seen.add(id(cell))
        paths.append(parts)
    out: list[BoundCell] = []
    for cell in grid.cells:
        if cell.row < header or not cell.text.strip() or (ground_truth and cell.col < stub):
            continue
        labels: list[str] = []
        for c in range(min(stub, cell.col)):
            owner = slots[cell.row][c]
            text = label_norm(owner.text)
            if text and (not labels or labels[-1] != text):
                labels.append(text)
        path: list[str] = []
        for c in range(cell.col, min(cell.col + cell.colspan, grid.n_cols)):
            path += [p for p in paths[c] if p not in path]
        out.append(BoundCell(cell.row, cell.col, cell.text, value_key(cell.text), " ".join(labels), " ".join(path)))
    return out


def _max_matching(edges: dict[int, list[int]]) -> dict[int, int]:
    """A maximum bipartite matching, predicted -> GT (Kuhn's augmenting paths; groups are small)."""
    owner: dict[int, int] = {}

    def augment(g: int, seen: set[int]) -> bool:
        for p in edges[g]:
            if p in seen:
                continue
            seen.add(p)
            if p not in owner or augment(owner[p], seen):
                owner[p] = g
                return True
        return False

    for g in edges:
        augment(g, set())
    return owner


def bind(pred_html: str, gt_html: str, unsure: frozenset[tuple[int, int]] = frozenset()) -> dict[str, Any]:
    """Binding counts of one prediction against its ground truth (pass `""` for a missed table);
    `unsure`: the prediction's (row, col) slots marked as doubtful (see the module docstring)."""
    gt = read_cells(gt_html, ground_truth=True)
    pred = read_cells(pred_html, ground_truth=False) if pred_html else []
    by_value: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for i, p in enumerate(pred):
        by_value[p.key].append(i)
    both: dict[int, list[int]] = {}
    col: dict[int, list[int]] = {}
    row: dict[int, list[int]] = {}
    for g, cell in enumerate(gt):
        both[g], col[g], row[g] = [], [], []
        for i in by_value.get(cell.key, ()):
            c_ok = similar(cell.col_path, pred[i].col_path)
            r_ok = similar(cell.row_label, pred[i].row_label)
            if c_ok:
                col[g].append(i)
            if r_ok:
                row[g].append(i)
            if c_ok and r_ok:
                both[g].append(i)
    matching = _max_matching(both)
    bound = set(matching.values())
    lost = dict.fromkeys(LOST_KINDS, 0)
    stated = dict.fromkeys(STATED_KINDS, 0)
    told_wrong: list[list[Any]] = []  # [ground truth, what was told, marked]: the cases, to look at
    for g, cell in enumerate(gt):
        if g in bound:
            continue
        kind = _lost_kind(cell, pred, by_value, col[g], row[g])
        lost[kind] += 1
        if kind == "misread":
            # the cells under its labels that hold no bound value: what a reader is told instead
            told = [p for i, p in enumerate(pred) if i not in matching and _labelled(cell, p)]
            if told:
                marked = all((p.row, p.col) in unsure for p in told)
                stated["marked_wrong" if marked else "stated_wrong"] += 1
                told_wrong.append([cell.value, " | ".join(p.value for p in told), marked])
    marked_right = [pred[i].value for i in matching if (pred[i].row, pred[i].col) in unsure]
    stated["marked_right"] = len(marked_right)
    return {
        "values": len(gt),
        "bound": len(bound),
        "col_bound": len(_max_matching(col)),
        "row_bound": len(_max_matching(row)),
        "lost": lost,
        **stated,
        "told_wrong": told_wrong,
        "marked_right_values": marked_right,
    }


# wrong values told under their labels, unmarked and marked, and right values marked
STATED_KINDS = ("stated_wrong", "marked_wrong", "marked_right")


def _labelled(gt: BoundCell, pred: BoundCell) -> bool:
    return similar(gt.col_path, pred.col_path) and similar(gt.row_label, pred.row_label)


# why a GT value is not bound, in the order a reader would ask
LOST_KINDS = ("no_table", "missing", "misread", "wrong_column", "wrong_row", "wrong_both", "taken")


def _lost_kind(
    cell: BoundCell,
    pred: list[BoundCell],
    by_value: dict[tuple[Any, ...], list[int]],
    col_ok: list[int],
    row_ok: list[int],
) -> str:
    """Where an unbound GT value went: its table not found (`no_table`); not in the output
    (`missing`); not there but a cell under its own labels holds another value (`misread`:
    OCR or a merged cell); there
    under the right row label only (`wrong_column`), the right column path only
    (`wrong_row`), neither (`wrong_both`); or there with both labels but bound to another GT
    cell of the same value (`taken`)."""
    if not pred:
        return "no_table"
    if not by_value.get(cell.key):
        return "misread" if any(_labelled(cell, p) for p in pred) else "missing"
    if set(col_ok) & set(row_ok):
        return "taken"
    if row_ok and not col_ok:
        return "wrong_column"
    if col_ok and not row_ok:
        return "wrong_row"
    return "wrong_both"


def rates(counts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Shares of all ground-truth values (micro): both labels, column path only, row label only;
    the counts of wrong values stated unmarked and marked, and of right ones marked."""
    total = {"values": 0, "bound": 0, "col_bound": 0, "row_bound": 0, **dict.fromkeys(STATED_KINDS, 0)}
    lost = dict.fromkeys(LOST_KINDS, 0)
    for c in counts:
        for k in total:
            total[k] += int(c.get(k, 0))
        for k, v in (c.get("lost") or {}).items():
            lost[k] += int(v)
    n = total["values"]
    return {
        "values": n,
        "lost": lost,
        "binding": round(total["bound"] / n, 4) if n else 0.0,
        "binding_col": round(total["col_bound"] / n, 4) if n else 0.0,
        "binding_row": round(total["row_bound"] / n, 4) if n else 0.0,
        **{k: total[k] for k in STATED_KINDS},
    }


def format_lost(rows: list[tuple[str, dict[str, Any]]]) -> str:
    """A Markdown table of where the unbound values went, per (tool, summary), as shares of
    all GT values so a row adds up with the binding rate to 100%."""
    head = "| tool | mode | values | bound | " + " | ".join(k.replace("_", " ") for k in LOST_KINDS) + " |"
    lines = [head, "|" + "---|" * (4 + len(LOST_KINDS))]
    for name, s in rows:
        n = s.get("values") or 0
        lost = s.get("lost") or {}
        shares = " | ".join(f"{100 * lost.get(k, 0) / n:.1f}%" if n else "-" for k in LOST_KINDS)
        mode = f"{s['mode']} {s['degrade']}" if s.get("degrade") else s.get("mode", "")
        lines.append(f"| {name} | {mode} | {n} | {100 * s.get('binding', 0):.1f}% | {shares} |")
    return "\n".join(lines)
