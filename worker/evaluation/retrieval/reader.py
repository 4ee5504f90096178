"""A strict rule-based reader: the value a unit's text states for a question's labels, or None.

No model and no guessing. In a unit's text the reader looks for
- a `key: value` line (`Row label; Column path: value; ...`): the row labels in the line's
  first segment (its head), the stub labels (further first-column texts) in order after it,
  and a `label: value` segment whose label holds the column labels in order; or
- a pipe row of a Markdown table: its first cell (under the section rows above it) holding
  the row labels, read by position under the header cell holding the column labels.
Among the lines that qualify, one whose head ends in the row label is preferred (as
`Q4 2009` should not read from `Q1 2009 - Q4 2009`). Word matches are whole words.

Text is compared `folded` (the default): letter case and whitespace do not count, on both
sides, for every source and representation alike. The question's labels come from the
ground truth's transcription, which spaces and cases words its own way (`CzechRepublic`,
`domestic(%)`, `%Pos` where the PDF prints `Czech Republic`, `Domestic (%)`, `% Pos`); a
reader who cannot see that these are the same words measures the transcription, not the
table. `exact` compares the characters (whitespace collapsed), as the first rounds did.
A value the unit marks as doubtful (`worker.core.doubt.UNSURE_MARK`) is read with its mark,
and scored `unsure`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from worker.evaluation.probes import Probe, _at, norm

READERS = ("folded", "exact")
_SEP_ROW = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+$")
_PIPE = re.compile(r"(?<!\\)\|")
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=1 << 16)
def _folded(label: str) -> re.Pattern[str]:
    """`label` as whole words, case and whitespace ignored (`Czech Republic` = `CzechRepublic`)."""
    chars = [re.escape(ch) for ch in label if not ch.isspace()]
    return re.compile(r"(?<!\w)" + r"\s*".join(chars) + r"(?!\w)", re.IGNORECASE)


def _find(text: str, label: str, pos: int, fold: bool) -> tuple[int, int]:
    """(start, end) of `label` in `text` from `pos` as whole words, else (-1, -1)."""
    if not fold:
        i = _at(text, label, pos)
        return (i, i + len(label)) if i >= 0 else (-1, -1)
    m = _folded(label).search(text, pos)
    return (m.start(), m.end()) if m else (-1, -1)


def _in_order(text: str, parts: Sequence[str], fold: bool) -> bool:
    pos = 0
    for p in parts:
        i, end = _find(text, p, pos, fold)
        if i < 0:
            return False
        pos = end
    return True


def same_value(read: str, value: str, fold: bool = True) -> bool:
    """The value read is the cell's (`folded`: case and whitespace aside, `1 000` = `1000`)."""
    if not fold:
        return norm(read) == norm(value)
    return _SPACE.sub("", norm(read)).casefold() == _SPACE.sub("", norm(value)).casefold()


def _exact_head(head: str, probe: Probe, fold: bool) -> bool:
    """The head ends in the row label, after a start, a `: ` or a ` / `."""
    label = probe.row_labels[-1]
    if not fold:
        return bool(re.search(r"(?:^|: | / )" + re.escape(label) + "$", head))
    return any(
        m.end() == len(head) and (m.start() == 0 or head[: m.start()].endswith((": ", " / ")))
        for m in _folded(label).finditer(head)
    )


def _kv_reads(lines: list[str], probe: Probe, fold: bool) -> list[tuple[bool, str]]:
    out: list[tuple[bool, str]] = []
    for line in lines:
        if line.startswith("|"):
            continue
        segs = line.split("; ")
        head = segs[0]
        if not _in_order(head, probe.row_labels, fold):
            continue
        for k, seg in enumerate(segs[1:], start=1):
            i = seg.find(": ")
            if i < 0:
                continue
            label, value = seg[:i], seg[i + 2 :]
            if _in_order(label, probe.col_labels, fold) and _in_order("; ".join(segs[1:k]), probe.stub_labels, fold):
                out.append((_exact_head(head, probe, fold), value))
                break
    return out


def _cells(line: str) -> list[str]:
    parts = _PIPE.split(line.strip())
    return [p.strip().replace("\\|", "|").replace("\\\\", "\\") for p in parts[1:-1]]


def _pipe_reads(lines: list[str], probe: Probe, fold: bool) -> list[tuple[bool, str]]:
    out: list[tuple[bool, str]] = []
    i = 0
    while i < len(lines) - 1:
        if not (lines[i].startswith("|") and _SEP_ROW.match(lines[i + 1].replace(" ", ""))):
            i += 1
            continue
        header = _cells(lines[i])
        cols = [k for k, h in enumerate(header) if k > 0 and _in_order(h, probe.col_labels, fold)]
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
            if not cols or not _in_order(head, probe.row_labels, fold):
                continue
            k = cols[0]
            if _in_order(" ".join(cells[1:k]), probe.stub_labels, fold) and cells[k]:
                out.append((_exact_head(cells[0], probe, fold), cells[k]))
        i = j
    return out


def read(text: str, probe: Probe, fold: bool = True) -> str | None:
    """The value `text` states for the probe's labels (see the module docstring), else None."""
    lines = [norm(x) for x in text.split("\n")]
    lines = [x for x in lines if x]
    reads = _kv_reads(lines, probe, fold) + _pipe_reads(lines, probe, fold)
    if not reads:
        return None
    return next((v for exact, v in reads if exact), reads[0][1])


def holds(text: str, probe: Probe, fold: bool = True) -> bool:
    """The unit states the value beside its row label (what `find` asks of a unit)."""
    t = norm(text)
    return _find(t, norm(probe.value), 0, fold)[0] >= 0 and _find(t, probe.row_labels[-1], 0, fold)[0] >= 0
