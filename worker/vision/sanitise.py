"""A model's answer -> the markup of its first table, and nothing else.

Models wrap tables in markdown fences and prose, add styles, classes, links, and now and
then a script. Only table/caption/thead/tbody/tfoot/tr/th/td survive, with colspan/rowspan
as small integers; the content of script/style-like elements is dropped, other tags are
dropped with their text kept (inside a cell), and everything outside the first table goes.
What was removed or repaired is listed, so the stored read says what the model really sent.
Pure standard library: the result still goes through the core's parser and writer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape, unescape
from html.parser import HTMLParser

from worker.core.html_parse import parse_span

STRUCTURE = {"table", "thead", "tbody", "tfoot", "tr", "th", "td"}
DROP_CONTENT = {
    "script",
    "style",
    "template",
    "iframe",
    "object",
    "embed",
    "noscript",
    "svg",
    "math",
    "head",
    "title",
    "textarea",
    "select",
    "applet",
    "frameset",
    "noembed",
    "xmp",
}
_SPACE = {"br", "p", "div", "li", "ul", "ol", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote"}
_CELL = {"td", "th"}
MAX_SPAN = 100  # larger spans are model noise; the HTML standard allows 1000 columns / 65534 rows


@dataclass(slots=True)
class Sanitised:
    """`html` is None when the answer holds no table."""

    html: str | None
    caption: str = ""
    removed: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)


class _Reducer(HTMLParser):
    def __init__(self, max_span: int) -> None:
        super().__init__(convert_charrefs=True)
        self.max_span = max_span
        self.state = "before"  # before, in, after the first table
        self.depth = 0  # <table> nesting inside the first table
        self.skip: list[str] = []  # open drop-content elements
        self.in_cell = False
        self.in_caption = False
        self.out: list[str] = []
        self.caption: list[str] = []
        self.dropped_tags: dict[str, int] = {}
        self.dropped_attrs: set[str] = set()
        self.prose = 0
        self.other_tables = 0
        self.nested = 0
        self.comments = 0
        self.repairs: list[str] = []

    # --- tags ---------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.skip:
            if tag in DROP_CONTENT:
                self.skip.append(tag)
            return
        if tag in DROP_CONTENT:
            self._drop(tag, attrs)
            self.skip.append(tag)
            return
        if self.state == "after":
            self.other_tables += tag == "table"
            return
        if self.state == "before":
            if tag in ("tr", "td", "th", "thead", "tbody"):
                self.repairs.append("table rows without a <table> element; wrapped in one")
                self._open_table()
            elif tag == "table":
                self._open_table(attrs)
                return
            else:
                self._drop(tag, attrs)
                return
        # inside the first table
        if tag == "table":
            self.depth += 1
            self.nested += 1
            self._space()
            return
        if self.depth > 1 or tag not in STRUCTURE | {"caption"}:
            self._drop(tag, attrs)
            self._space(tag)
            return
        if tag == "caption":
            self.in_caption, self.in_cell = True, False
            self._attrs(attrs, ())
            return
        self.in_caption = False
        self.in_cell = tag in _CELL
        spans = self._attrs(attrs, ("colspan", "rowspan") if tag in _CELL else ())
        self.out.append(f"<{tag}{spans}>")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in STRUCTURE | {"caption"} | DROP_CONTENT:  # `<td/>` is an empty cell, `<script/>` nothing
            self.handle_starttag(tag, attrs)
            if tag not in DROP_CONTENT:
                self.handle_endtag(tag)
            elif self.skip and self.skip[-1] == tag:
                self.skip.pop()
            return
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if self.skip:
            if tag == self.skip[-1]:
                self.skip.pop()
            return
        if self.state != "in":
            return
        if tag == "table":
            self.depth -= 1
            if self.depth == 0:
                self.out.append("</table>")
                self.state = "after"
                self.in_cell = self.in_caption = False
            return
        if self.depth > 1 or tag not in STRUCTURE | {"caption"}:
            self._space(tag)
            return
        if tag == "caption":
            self.in_caption = False
            return
        if tag in _CELL or tag == "tr":
            self.in_cell = False
        self.out.append(f"</{tag}>")

    # --- text ---------------------------------------------------------------
    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.state == "in" and self.in_cell:
            self.out.append(escape(data, quote=False))
        elif self.state == "in" and self.in_caption:
            self.caption.append(data)
        else:
            text = "".join(line for line in data.splitlines() if not line.strip().startswith("```"))
            self.prose += len(text.strip())

    def handle_comment(self, data: str) -> None:
        self.comments += 1

    def handle_decl(self, decl: str) -> None:
        self.comments += 1

    def handle_pi(self, data: str) -> None:
        self.comments += 1

    def unknown_decl(self, data: str) -> None:
        self.comments += 1

    # --- helpers ------------------------------------------------------------
    def _open_table(self, attrs: Sequence[tuple[str, str | None]] = ()) -> None:
        self.state, self.depth = "in", 1
        self._attrs(attrs, ())
        self.out.append("<table>")

    def _attrs(self, attrs: Sequence[tuple[str, str | None]], keep: tuple[str, ...]) -> str:
        out = ""
        for name, value in attrs:
            if name not in keep:
                self.dropped_attrs.add(name)
                continue
            n = parse_span(value)
            if n is None:
                self.repairs.append(f"{name}={str(value)[:20]!r} is not a number; dropped")
                continue
            if n > self.max_span:
                self.repairs.append(f"{name}={n} clipped to {self.max_span}")
                n = self.max_span
            if n > 1:
                out += f' {name}="{n}"'
        return out

    def _drop(self, tag: str, attrs: Sequence[tuple[str, str | None]] = ()) -> None:
        self.dropped_tags[tag] = self.dropped_tags.get(tag, 0) + 1
        self.dropped_attrs.update(name for name, _ in attrs)

    def _space(self, tag: str = "table") -> None:
        if self.in_cell and tag in _SPACE | {"table"}:
            self.out.append(" ")


def sanitise_answer(answer: str, max_span: int = MAX_SPAN) -> Sanitised:
    """The first table of `answer` as table markup only, with what was removed and repaired."""
    reducer = _Reducer(max_span)
    reducer.feed(answer)
    reducer.close()
    removed: list[str] = []
    if "```" in answer:
        removed.append("markdown fence")
    if reducer.prose:
        removed.append(f"{reducer.prose} character(s) of text outside the table")
    if reducer.dropped_tags:
        removed.append(
            "tags: " + ", ".join(f"{t} x{n}" if n > 1 else t for t, n in sorted(reducer.dropped_tags.items()))
        )
    if reducer.dropped_attrs:
        removed.append("attributes: " + ", ".join(sorted(reducer.dropped_attrs)))
    if reducer.comments:
        removed.append(f"{reducer.comments} comment(s) or declaration(s)")
    if reducer.other_tables:
        removed.append(f"{reducer.other_tables} further table(s) after the first")
    repairs = list(reducer.repairs)
    if reducer.nested:
        repairs.append(f"{reducer.nested} nested table(s) flattened into their cell's text")
    if reducer.state == "before":
        html = markdown_table(answer)
        if html is not None:  # small models often answer in markdown: spans are lost, the cells are not
            return Sanitised(
                html,
                removed=[r for r in removed if not r.endswith("outside the table")],
                repairs=repairs + ["markdown table converted to HTML (it cannot express spans)"],
            )
        return Sanitised(None, removed=removed, repairs=repairs)
    html = "".join(reducer.out)
    if reducer.state == "in":
        repairs.append("table not closed (answer cut off?); closed")
        html += "</table>"
    caption = " ".join("".join(reducer.caption).split())
    return Sanitised(html, caption=caption, removed=removed, repairs=repairs)


_MD_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


def markdown_table(answer: str) -> str | None:
    """The first pipe table (header line, `|---|` line, rows) of a markdown answer, as HTML."""
    lines = [line.strip() for line in answer.splitlines()]
    for i in range(len(lines) - 1):
        if "|" not in lines[i] or not _MD_SEPARATOR.match(lines[i + 1]):
            continue
        rows = [lines[i]]
        for line in lines[i + 2 :]:
            if "|" not in line:
                break
            rows.append(line)
        cells = [[escape(_plain(c), quote=False) for c in _split_pipes(row)] for row in rows]
        head = "".join(f"<th>{c}</th>" for c in cells[0])
        body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in cells[1:])
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    return None


def _split_pipes(row: str) -> list[str]:
    row = row.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    return [c.replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row)]


def _plain(cell: str) -> str:
    """A markdown cell's text: inline tags (`<br>`, `<b>`) dropped, entities decoded, spaces collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]*>", " ", cell)).split())
