"""The one prompt sent with every crop. Bump PROMPT_VERSION when its text changes: stored
reads record it, and a read with another prompt version is not reused."""

from __future__ import annotations

PROMPT_VERSION = "table-html-v1"

PROMPT = """Transcribe the table in this image into HTML.
Rules:
- Answer with exactly one <table> element and nothing else: no explanation, no markdown.
- Header rows go in <thead> with <th> cells; body rows go in <tbody> with <td> cells.
- Merged cells: use colspan and rowspan. Do not repeat a merged cell's text in the cells it covers.
- Each row must cover every column once spans are counted. Keep empty cells as <td></td>.
- Copy the text exactly as printed: numbers, signs, units, footnote marks. Do not translate, summarise or compute.
- No other tags or attributes: no styles, classes, links or images."""
