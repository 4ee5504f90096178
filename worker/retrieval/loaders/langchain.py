"""`TablesightLoader`: a LangChain document loader (`pip install "tablesight[langchain]"`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document as LcDocument

from worker.retrieval.loaders.common import Per, open_source, records


class TablesightLoader(BaseLoader):
    """Tables of one file (extracted in process, or by the `tablesight serve` at `url`) or of one
    stored document (`doc_id`), as one LangChain document per chunk or per table.

    `extract_options` go to `tablesight.extract` (engine, pages, dpi, text_layer, store) or, with
    `url`, to `Client.extract` (pages, dpi)."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        doc_id: str | None = None,
        url: str | None = None,
        token: str | None = None,
        per: Per = "chunk",
        max_tokens: int | None = None,
        **extract_options: Any,
    ) -> None:
        self.path, self.doc_id, self.url, self.token = path, doc_id, url, token
        self.per, self.max_tokens, self.extract_options = per, max_tokens, extract_options

    def lazy_load(self) -> Iterator[LcDocument]:
        with open_source(self.path, self.doc_id, self.url, self.token, self.extract_options) as doc:
            for rec in records(doc, self.per, self.max_tokens):
                yield LcDocument(page_content=rec.text, metadata=rec.metadata)
