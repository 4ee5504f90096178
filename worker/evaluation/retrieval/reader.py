"""A strict rule-based reader: the value a unit's text states for a question's labels, or None.

No model and no guessing. In a unit's text the reader looks for
- a `key: value` line (`Row label; Column path: value; ...`): the row labels in the line's
  first segment (its head), the stub labels (further first-column texts) in order after it,
  and a `label: value` segment whose label holds the column labels in order; or
- a pipe row of a Markdown table: its first cell (under the section rows above it) holding
  the row labels, read by position under the header cell holding the column labels.
Among the lines that qualify, one whose head ends in the row label is preferred (as
`Q4 2009` should not read from `Q1 2009 - Q4 2009`). Word matches are whole words
(`worker.evaluation.probes`), compared on whitespace-collapsed text. A value the unit marks
as doubtful (`worker.core.doubt.UNSURE_MARK`) is read with its mark, and scored `unsure`.
"""

from __future__ import annotations

import re

from worker.evaluation.probes import Probe, _at, _in_order, norm

_SEP_ROW = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+$")
_PIPE = re.compile(r"(?<!\\)\|")


def _exact_head(head: str, probe: Probe) -> bool:
    return bool(re.search(r"(?:^|: | / )" + re.escape(probe.row_labels[-1]) + "$", head))


def _kv_reads(lines: list[str], probe: Probe) -> list[tuple[bool, str]]:
    out: list[tuple[bool, str]] = []
    for line in lines:
        if line.startswith("|"):
            continue
        segs = line.split("; ")
        head = segs[0]
        if not _in_order(head, probe.row_labels):
            continue
        for k, seg in enumerate(segs[1:], start=1):
            i = seg.find(": ")
            if i < 0:
                continue
            label, value = seg[:i], seg[i + 2 :]
            if _in_order(label, probe.col_labels) and _in_order("; ".join(segs[1:k]), probe.stub_labels):
                out.append((_exact_head(head, probe), value))
                break
    return out


def _cells(line: str) -> list[str]:
    parts = _PIPE.split(line.strip())
    return [p.strip().replace("\\|", "|").replace("\\\\", "\\") for p in parts[1:-1]]


def _pipe_reads(lines: list[str], probe: Probe) -> list[tuple[bool, str]]:
    out: list[tuple[bool, str]] = []
    i = 0
    while i < len(lines) - 1:
        if not (lines[i].startswith("|") and _SEP_ROW.match(lines[i + 1].replace(" ", ""))):
            i += 1
            continue
        header = _cells(lines[i])
        cols = [k for k, h in enumerate(header) if k > 0 and _in_order(h, probe.col_labels)]
        group = ""
        j = i + 2
        while j < len(lines) and lines[j].startswith("|"):
            cells = _cells(lines[j])
            j += 1
            if len(cells) != len(header):
                continue
            if cells[0] and not any(cells[1:]):
                group = cells[0]  # a section row: its label heads the rows under it
                continue
            head = f"{group} {cells[0]}".strip()
            if not cols or not _in_order(head, probe.row_labels):
                continue
            k = cols[0]
            if _in_order(" ".join(cells[1:k]), probe.stub_labels) and cells[k]:
                out.append((_exact_head(cells[0], probe), cells[k]))
        i = j
    return out


def read(text: str, probe: Probe) -> str | None:
    """The value `text` states for the probe's labels (see the module docstring), else None."""
    lines = [norm(x) for x in text.split("\n")]
    lines = [x for x in lines if x]
    reads = _kv_reads(lines, probe) + _pipe_reads(lines, probe)
    if not reads:
        return None
    return next((v for exact, v in reads if exact), reads[0][1])


def holds(text: str, probe: Probe) -> bool:
    """The unit states the value beside its row label (what `find` asks of a unit)."""
    t = norm(text)
    return _at(t, norm(probe.value)) >= 0 and _at(t, probe.row_labels[-1]) >= 0
