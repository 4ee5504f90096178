"""tablesight's public Python API: tables out of PDFs and images, intact.

    import tablesight
    doc = tablesight.extract("report.pdf")           # in process (engine "auto")
    for table in doc.tables:
        table.html, table.cells, table.to_pandas(), table.chunks(), table.crop

    with tablesight.Client("http://127.0.0.1:8080", token="...") as api:   # `tablesight serve`
        doc = api.extract("report.pdf")              # the same Document / Table shapes

Loaders: `tablesight.langchain.TablesightLoader` (extra `langchain`) and
`tablesight.llamaindex.TablesightReader` (extra `llamaindex`). The code lives in
`worker.retrieval`; this package only names it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from worker.retrieval.public import Cell, Document, Table, extract, open_document

if TYPE_CHECKING:
    from worker.retrieval.client import Client, TablesightError

__all__ = ["Cell", "Client", "Document", "Table", "TablesightError", "extract", "open_document"]


def __getattr__(name: str) -> Any:  # the client needs httpx: imported when first named
    if name in ("Client", "TablesightError"):
        from worker.retrieval import client

        return getattr(client, name)
    raise AttributeError(f"module 'tablesight' has no attribute {name!r}")
