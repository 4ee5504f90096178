"""Numbers as statistical tables print them: `1,234`, `(12)`, `–3.5`, `12.5%`, `1 234*`, `(X)`.

A table cell is text meant for people; a query needs its number. The parser reads the
conventions of printed statistics and nothing looser: digit grouping by comma, point, space,
thin space or apostrophe; a decimal point or comma; negatives in brackets or with a hyphen,
en dash or minus sign; percent and per-mille signs; a leading currency symbol; footnote
markers (`*`, `†`, superscripts, `[1]`) split off into notes. Placeholders for missing values
(`–`, `-`, `(X)`, `n/a`, `..`) are nulls. Anything else (`<0.5`, `10-20`, `12m`, words) does
not parse: the caller keeps the text, so no value is lost.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# Cells that say "no value here" in statistical tables (compared lower-cased, spaces removed).
NULL_MARKERS = frozenset(
    {
        "",
        "-",
        "--",
        "–",
        "—",
        "−",
        "n/a",
        "na",
        "n.a.",
        "n.a",
        "n/av",
        "(x)",
        "x",
        "(na)",
        "(d)",
        "(s)",
        "(z)",
        "..",
        "...",
        "…",
        ":",
        "(:)",
        "-/-",
        "–/–",
    }
)
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"
_MARKS = "*†‡§¶#"
_NOTE_TAIL = re.compile(r"(?:\s*(?:[" + re.escape(_MARKS) + r"]+|[" + _SUPERSCRIPTS + r"]+|\[[0-9a-zA-Z]{1,3}\]))+$")
_NOTE_HEAD = re.compile(r"^(?:[" + re.escape(_MARKS) + r"]+|[" + _SUPERSCRIPTS + r"]+)\s*(?=[\d(+\-–—−$£€¥₹.])")
_CURRENCY = "$£€¥₹₽₩"
_NEG = "-–—−"  # hyphen-minus, en dash, em dash, minus sign
_SPACES = re.compile(r"[\s\u00a0\u2009\u202f\u2007]+")
_PLAIN = re.compile(r"^\d+(?:\.\d+)?(?:[eE][+-]?\d{1,3})?$|^\.\d+$")
_COMMA_GROUPS = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_DOT_GROUPS = re.compile(r"^\d{1,3}(?:\.\d{3})+(?:,\d+)?$")
_SPACE_GROUPS = re.compile(r"^\d{1,3}(?:[ '’]\d{3})+(?:[.,]\d+)?$")
_DECIMAL_COMMA = re.compile(r"^\d+,(?:\d{1,2}|\d{4,})$")
_INT_LIMIT = 2**63 - 1
MAX_DIGITS = 60  # longer runs of digits are codes or noise, not quantities


@dataclass(frozen=True, slots=True)
class Parsed:
    """What one cell says: a number, a null placeholder, or text that is not a number.

    kind: 'number', 'null' or 'text'. `value` is an int when the printed number has no
    fractional part, else a float; percentages keep the printed scale (`12.5%` is 12.5, with
    `percent` set). `note` holds the footnote markers split off (`*`, `†`, `¹`, `[2]`).
    """

    kind: str
    value: int | float | None = None
    percent: bool = False
    note: str = ""
    currency: str = ""


TEXT = Parsed("text")


def split_note(text: str) -> tuple[str, str]:
    """(text without footnote markers, the markers) for markers leading or trailing a value."""
    t = text.strip()
    note = ""
    m = _NOTE_TAIL.search(t)
    if m and m.start() > 0:
        note = m.group(0).strip()
        t = t[: m.start()].rstrip()
    m = _NOTE_HEAD.match(t)
    if m:
        note = (m.group(0).strip() + (" " + note if note else "")).strip()
        t = t[m.end() :]
    return t, note


def _unsigned(t: str) -> int | float | None:
    """The value of digits with grouping and one decimal mark, or None when it is not one."""
    t = t.replace("’", "'")
    if _PLAIN.match(t):
        return _number(t, "." in t or "e" in t.lower())
    if _COMMA_GROUPS.match(t):
        return _number(t.replace(",", ""), "." in t)
    if _DOT_GROUPS.match(t) and (t.count(".") > 1 or "," in t):  # `1.234.567`, `1.234,5`; `1.234` is decimal
        return _number(t.replace(".", "").replace(",", "."), "," in t)
    if _SPACE_GROUPS.match(t):
        body = re.sub(r"[ ']", "", t)
        return _number(body.replace(",", "."), "," in body or "." in body)
    if _DECIMAL_COMMA.match(t):  # `12,5` (a comma followed by three digits groups thousands instead)
        return _number(t.replace(",", "."), True)
    return None


def _number(t: str, fractional: bool) -> int | float:
    if not fractional:
        n = int(t)
        if abs(n) <= _INT_LIMIT:
            return n
    return float(t)


def parse_number(text: str) -> Parsed:
    """Read one cell the way a statistical table prints it (see the module docstring)."""
    raw = " ".join(str(text).split())
    if raw.isascii() and raw.isdigit() and len(raw) < 19:  # the common case, without the regexes
        return Parsed("number", int(raw))
    if raw.replace(" ", "").lower() in NULL_MARKERS:
        return Parsed("null")
    body, note = split_note(raw)
    if not body:
        return Parsed("text")
    if body.replace(" ", "").lower() in NULL_MARKERS:
        return Parsed("null", note=note)
    negative = False
    if body[0] == "(" and body[-1] == ")":  # accounting negative `(12)`, `(12.5%)`
        body = body[1:-1].strip()
        negative = True
    if body and body[0] in _NEG + "+":
        negative = negative != (body[0] in _NEG)
        body = body[1:].lstrip()
    currency = ""
    if body and body[0] in _CURRENCY:
        currency = body[0]
        body = body[1:].lstrip()
        if body and body[0] in _NEG and not negative:  # `$-12`
            negative, body = True, body[1:].lstrip()
    percent = False
    if body and body[-1] in "%‰":
        percent = True
        body = body[:-1].rstrip()
    if body and body[0] == "(" and body[-1] == ")" and not negative:  # `$(12)`, `(12)%`
        body = body[1:-1].strip()
        negative = True
    if not body:
        return TEXT
    body = _SPACES.sub(" ", body)
    if len(body) > MAX_DIGITS:
        return TEXT
    value = _unsigned(body)
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return TEXT
    if negative:
        value = -value
    return Parsed("number", value, percent, note, currency)
