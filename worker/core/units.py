"""Units of measure: found in header labels, captions and notes, recorded per column.

A unit is usually stated once (`Revenue (£m)`, "all figures in thousands") and then lost
when rows are cut apart; recording it per column lets every serialised value carry it.
Detection is a small vocabulary, not a parser: text counts as a unit only when every
token is a known unit, currency or scale word, so `(CO2)` or `(median)` never do.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from worker.core.headers import clean

_CURRENCY_SYMBOLS = "£$€¥₹₽₩"
_CURRENCY_CODES = {
    "eur",
    "usd",
    "gbp",
    "chf",
    "jpy",
    "cny",
    "sek",
    "nok",
    "dkk",
    "cad",
    "aud",
    "inr",
    "pln",
    "czk",
    "huf",
    "ron",
    "bgn",
    "ecu",
    "euro",
    "euros",
    "dollars",
    "pounds",
}
_SCALES = {
    "thousand",
    "thousands",
    "million",
    "millions",
    "billion",
    "billions",
    "trillion",
    "mn",
    "m",
    "bn",
    "b",
    "k",
    "000",
    "'000",
    "000s",
    "'000s",
    "tsd",
    "mio",
    "mrd",
    "bln",
    "mln",
}
_MEASURES = {
    "%",
    "‰",
    "per",
    "cent",
    "percent",
    "percentage",
    "pp",
    "bp",
    "bps",
    "points",
    "kg",
    "g",
    "mg",
    "µg",
    "ug",
    "ng",
    "t",
    "kt",
    "mt",
    "tonnes",
    "tonne",
    "tons",
    "lb",
    "lbs",
    "oz",
    "km",
    "cm",
    "mm",
    "µm",
    "nm",
    "mi",
    "ft",
    "in.",
    "ha",
    "m2",
    "m3",
    "m²",
    "m³",
    "km2",
    "km²",
    "l",
    "ml",
    "dl",
    "hl",
    "litres",
    "liters",
    "gal",
    "h",
    "hr",
    "hrs",
    "hours",
    "min",
    "mins",
    "minutes",
    "s",
    "sec",
    "ms",
    "days",
    "day",
    "weeks",
    "months",
    "years",
    "yrs",
    "year",
    "yr",
    "annum",
    "capita",
    "head",
    "inhabitants",
    "w",
    "kw",
    "mw",
    "gw",
    "wh",
    "kwh",
    "mwh",
    "gwh",
    "twh",
    "j",
    "kj",
    "mj",
    "gj",
    "pj",
    "toe",
    "ktoe",
    "mtoe",
    "v",
    "kv",
    "a",
    "ma",
    "hz",
    "khz",
    "mhz",
    "ghz",
    "db",
    "pa",
    "kpa",
    "mpa",
    "bar",
    "mbar",
    "°c",
    "°f",
    "k",
    "°",
    "ppm",
    "ppb",
    "cfu",
    "mol",
    "mmol",
    "µmol",
    "iu",
    "kcal",
    "cal",
    "persons",
    "people",
    "units",
    "tco2",
    "tco2e",
    "co2e",
    "teq",
}
_TOKEN = re.compile(r"[A-Za-z°µ%‰'²³0-9.]+|[" + re.escape(_CURRENCY_SYMBOLS) + r"]")
_BRACKETED = re.compile(r"[(\[]([^()\[\]]{1,40})[)\]]")
_IN_PHRASE = re.compile(
    r"\b(?:(?:figures|amounts|values|data|numbers|prices|results)\s+(?:are\s+)?)?(?:in|expressed in|in units of)\s+"
    r"((?:[" + re.escape(_CURRENCY_SYMBOLS) + r"]\s?|[A-Z]{3}\s+)?"
    r"(?:%|per\s?cent|thousands?|millions?|billions?|'000s?|000s?|mn|bn|[a-zA-Z°µ²³/]{1,10})"
    r"(?:\s+(?:of\s+)?(?:[A-Z]{3}|euros?|dollars|pounds|tonnes|units|[" + re.escape(_CURRENCY_SYMBOLS) + r"]))?)(?!\w)",
    re.IGNORECASE,
)


def _known(token: str) -> bool:
    t = token.lower().strip(".")
    return (
        t in _MEASURES
        or t in _SCALES
        or t in _CURRENCY_CODES
        or token in _CURRENCY_SYMBOLS
        or token.lower() in _MEASURES
    )


def is_unit(text: str) -> bool:
    """True when every token of `text` is a unit, currency or scale word (`£m`, `kg/year`, `EUR million`)."""
    t = clean(text)
    if not t or len(t) > 40:
        return False
    t = re.sub(r"^in\s+", "", t, flags=re.IGNORECASE)
    t = re.sub(r"\s+of\s+.*$", "", t) if re.match(r"^(%|per ?cent)\s+of\s+", t, re.IGNORECASE) else t
    pieces = [p for p in re.split(r"[\s/·\-]+", t) if p]
    tokens: list[str] = []
    for p in pieces:
        if p[0] in _CURRENCY_SYMBOLS:  # `£m`, `€000`, `$bn`: a symbol glued to a scale
            tokens.append(p[0])
            p = p[1:]
        if p:
            tokens.append(p)
    if not tokens or any(not _known(tok) for tok in tokens):
        return False
    return any(not tok.isdigit() for tok in tokens)


def units_in_label(label: str) -> str | None:
    """The unit a header label states: a bracketed unit, else a trailing unit token with a `/`
    or a symbol (`kg/year`, `%`); single letters count only in brackets (`m` may be anything)."""
    t = clean(label)
    for m in reversed(list(_BRACKETED.finditer(t))):
        if is_unit(m.group(1)):
            return clean(re.sub(r"^in\s+", "", m.group(1), flags=re.IGNORECASE))
    phrase = _IN_PHRASE.search(t)
    if phrase and is_unit(phrase.group(1)):
        return clean(phrase.group(1))
    tokens = t.split()
    if len(tokens) >= 2:
        last = tokens[-1]
        if ("/" in last or last in ("%", "‰") or last[0] in _CURRENCY_SYMBOLS) and is_unit(last):
            return last
    return None


def units_in_text(text: str) -> list[str]:
    """Table-wide units a caption or note states ("all figures in EUR thousand", "(in %)")."""
    t = clean(text)
    found = [clean(m.group(1)) for m in _IN_PHRASE.finditer(t) if is_unit(m.group(1))]
    found += [
        clean(re.sub(r"^in\s+", "", m.group(1), flags=re.IGNORECASE))
        for m in _BRACKETED.finditer(t)
        if is_unit(m.group(1)) and len(m.group(1).split()) <= 3
    ]
    out: list[str] = []
    for u in found:
        if u not in out:
            out.append(u)
    return out


# Labels of columns whose values are relative (a share, a rate, a ratio, an index) or the
# margin of error of such a column: a count or money unit stated for the table never applies.
_RELATIVE = re.compile(
    r"(?:%|‰|\bper ?cent\w*|\bpercentage\w*|\bpct\b|\brates?\b|\bratios?\b|\bshares?\b|\bproportions?\b|"
    r"\bper (?:capita|head|inhabitant|1[, ]?000|100|thousand)|\bindex\b|\bgrowth\b|\bchange in %)",
    re.IGNORECASE,
)
_ERROR = re.compile(
    r"\bmargin of error\b|\bmoe\b|\bstandard error\b|\bs\.?e\.?\b|\bconfidence interval\b|\bc\.?i\.?\b|±",
    re.IGNORECASE,
)
_RELATIVE_UNITS = {"%", "‰", "pp", "bp", "bps", "points", "percent", "per cent", "percentage", "percentage points"}


def relative_columns(paths: Sequence[Sequence[str]], percent_values: Sequence[bool] = ()) -> list[bool]:
    """Per column: whether it holds shares, rates or ratios (by any level of its header path or
    by `%` on most of its values), or the margin of error of the column to its left that does."""
    out: list[bool] = []
    for c, path in enumerate(paths):
        rel = any(_RELATIVE.search(p) for p in path) or (c < len(percent_values) and percent_values[c])
        if not rel and c > 0 and out[c - 1] and any(_ERROR.search(p) for p in path[-1:]):
            rel = True
        out.append(rel)
    return out


def is_relative_unit(unit: str) -> bool:
    """A unit that a relative column may carry (`%`, `pp`); counts, scales and money may not."""
    return clean(unit).lower() in _RELATIVE_UNITS


def column_units(
    paths: Sequence[Sequence[str]],
    numeric: Sequence[bool],
    caption: str = "",
    notes: Sequence[str] = (),
    percent_values: Sequence[bool] = (),
) -> list[dict[str, str] | None]:
    """Per column: {'unit', 'source'} or None; `source` says where it was stated: 'header'
    (the column's own label), 'spanning header' (a group label over it), 'caption' or 'notes'.

    A column's own header path wins (its lowest level stating a unit, the most specific): a
    unit in a spanning header governs exactly the columns the span covers. Otherwise one
    table-wide unit from the caption or notes applies to the numeric columns. Several
    different table-wide units are ambiguous and are not applied to any column. A relative
    column (percent, rate, ratio, or the margin of error of one: `relative_columns`) never
    takes a count, scale or money unit from anywhere.
    """
    relative = relative_columns(paths, percent_values)
    out: list[dict[str, str] | None] = []
    for c, path in enumerate(paths):
        found = None
        for depth, label in enumerate(reversed(path)):
            unit = units_in_label(label)
            if unit and (not relative[c] or is_relative_unit(unit)):
                found = {"unit": unit, "source": "header" if depth == 0 else "spanning header"}
                break
        out.append(found)
    wide = [
        (u, source)
        for source, texts in (("caption", [caption]), ("notes", list(notes)))
        for t in texts
        if t
        for u in units_in_text(t)
    ]
    if len({u for u, _ in wide}) == 1:
        unit, source = wide[0]
        for c, is_num in enumerate(numeric):
            if out[c] is None and is_num and (not relative[c] or is_relative_unit(unit)):
                out[c] = {"unit": unit, "source": source}
    return out
