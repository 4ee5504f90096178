"""`TablesightReader`: a LlamaIndex reader (`pip install "tablesight[llamaindex]"`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from llama_index.core.readers.base import BaseReader
from llama_index.core.schema import Document as LiDocument

from worker.retrieval.loaders.common import HTML_KEY, Per, open_source, records
from worker.retrieval.public import Document

# metadata kept out of what is embedded and what the LLM sees (the HTML repeats the text)
_NOT_EMBEDDED = [HTML_KEY, "crop", "bbox", "row_range", "parts"]


class TablesightReader(BaseReader):
    """Tables as LlamaIndex documents, one per chunk or per table: `load_data(path)` extracts in
    process (or through the `tablesight serve` at `url`), `load_data(doc_id=...)` reads a stored
    document. Document ids are `<doc_id>/<table_id>[#<chunk>]`, stable across runs."""

    def __init__(
        self,
        *,
        url: str | None = None,
        token: str | None = None,
        per: Per = "chunk",
        max_tokens: int | None = None,
        **extract_options: Any,
    ) -> None:
        super().__init__()
        self.url, self.token, self.per, self.max_tokens = url, token, per, max_tokens
        self.extract_options = extract_options

    def lazy_load_data(self, file: str | Path | None = None, doc_id: str | None = None) -> Iterable[LiDocument]:
        with open_source(file, doc_id, self.url, self.token, self.extract_options) as doc:
            yield from self._documents(doc)

    def _documents(self, doc: Document) -> Iterable[LiDocument]:
        for rec in records(doc, self.per, self.max_tokens):
            suffix = f"#{rec.metadata['chunk']}" if "chunk" in rec.metadata else ""
            yield LiDocument(
                text=rec.text,
                id_=f"{rec.metadata['doc_id']}/{rec.metadata.get('table_id', '')}{suffix}",
                metadata=rec.metadata,
                excluded_embed_metadata_keys=list(_NOT_EMBEDDED),
                excluded_llm_metadata_keys=list(_NOT_EMBEDDED),
            )

    def load_data(self, file: str | Path | None = None, doc_id: str | None = None) -> list[LiDocument]:
        return list(self.lazy_load_data(file, doc_id))
