"""The Python API users call: `extract(path)` -> `Document` -> `Table`s, no storage keys needed.

A `Document` and its `Table`s read through a `Source`: the store a local extraction wrote
(`LocalSource`), or a running `tablesight serve` (`worker.retrieval.client.Client`). Both give
the same shapes: each table's `html`, `cells`, `to_pandas()`, `chunks()` and its `crop` (the
image, read only when asked for). Everything else a table knows (flags, caption, box, its
full JSON record) is there too, so loaders and users never build a key or a URL themselves.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas
    from PIL import Image

    from worker.settings import Settings
    from worker.storage.base import Storage


class Source(Protocol):
    """Where a document's stored outputs are read from (local store or HTTP API)."""

    def manifest(self, doc_id: str) -> dict[str, Any]: ...

    def table_file(self, doc_id: str, table_id: str, fmt: str) -> bytes: ...

    def chunks(self, doc_id: str, max_tokens: int | None) -> list[dict[str, Any]]: ...

    def crop_link(self, doc_id: str, table_id: str) -> str: ...


@dataclass(frozen=True, slots=True)
class Cell:
    """One grid cell: position, spans, text, header role and confidence (None when unknown)."""

    row: int
    col: int
    rowspan: int
    colspan: int
    text: str
    is_header: bool
    confidence: float | None = None


@dataclass
class Table:
    """One extracted table; its files are read from the source when first used."""

    doc_id: str
    table_id: str
    page: int
    bbox: tuple[float, float, float, float]
    entry: dict[str, Any] = field(repr=False)
    _source: Source = field(repr=False)

    @cached_property
    def record(self) -> dict[str, Any]:
        """The table's full JSON record (grid, flags, context, serialisations, schema)."""
        import json

        return dict(json.loads(self._source.table_file(self.doc_id, self.table_id, "json")))

    @cached_property
    def html(self) -> str:
        """The table as HTML with rowspan/colspan (text escaped)."""
        return self._source.table_file(self.doc_id, self.table_id, "html").decode("utf-8")

    @property
    def cells(self) -> list[Cell]:
        """Every cell; `is_header` for the cells of the header rows too (the grid marks those by count)."""
        grid = self.record["grid"]
        header_rows = int(self.record["serialisations"].get("header_rows", grid.get("header_rows", 0)))
        return [
            Cell(
                int(c["row"]),
                int(c["col"]),
                int(c.get("rowspan", 1)),
                int(c.get("colspan", 1)),
                str(c.get("text", "")),
                bool(c.get("is_header", False)) or int(c["row"]) < header_rows,
                c.get("confidence"),
            )
            for c in grid["cells"]
        ]

    @property
    def flags(self) -> dict[str, Any]:
        """Why the table may need a second look: spans, repairs, confidence, `needs_vision`."""
        return dict(self.record.get("flags") or {})

    @property
    def caption(self) -> str:
        return str((self.record.get("context") or {}).get("caption") or "")

    @property
    def column_labels(self) -> list[str]:
        """Each column's full header path, flattened (`2024 / Revenue`)."""
        return [str(x) for x in self.record["serialisations"]["column_labels"]]

    def to_pandas(self) -> pandas.DataFrame:
        """The body rows as a DataFrame under the flattened column labels (spans repeated into
        every slot they cover; section label rows left out). Needs pandas."""
        import pandas as pd

        from worker.core.headers import body_rows
        from worker.core.serialise import grid_from_dict

        grid = grid_from_dict(self.record["grid"])
        ser = self.record["serialisations"]
        labels = [lab or f"Column {c + 1}" for c, lab in enumerate(ser["column_labels"])]
        seen: dict[str, int] = {}
        unique = []
        for lab in labels:  # a DataFrame wants distinct column names
            seen[lab] = seen.get(lab, 0) + 1
            unique.append(lab if seen[lab] == 1 else f"{lab} ({seen[lab]})")
        rows = [r.cells for r in body_rows(grid, int(ser["header_rows"])) if r.kind == "data"]
        return pd.DataFrame(rows, columns=unique)

    def chunks(self, max_tokens: int | None = None) -> list[dict[str, Any]]:
        """This table's retrieval chunks (a table merged across pages gives its chunks to each part)."""
        return [
            c
            for c in self._source.chunks(self.doc_id, max_tokens)
            if c["table_id"] == self.table_id or self.table_id in c.get("parts", [])
        ]

    @cached_property
    def crop_bytes(self) -> bytes:
        """The table's crop as PNG bytes."""
        return self._source.table_file(self.doc_id, self.table_id, "png")

    @property
    def crop(self) -> Image.Image:
        """The table's crop as a PIL image (read on first use)."""
        from PIL import Image

        return Image.open(BytesIO(self.crop_bytes))

    @property
    def crop_link(self) -> str:
        """Where the crop lives: a file path (local) or the API URL (remote)."""
        return self._source.crop_link(self.doc_id, self.table_id)


@dataclass
class Document:
    """One processed document: its manifest and tables, in page order."""

    doc_id: str
    manifest: dict[str, Any] = field(repr=False)
    tables: list[Table]
    _source: Source = field(repr=False)

    @property
    def status(self) -> str:
        return str(self.manifest.get("status", ""))

    @property
    def source(self) -> str:
        """The input file's name."""
        return str(self.manifest.get("source", ""))

    def chunks(self, max_tokens: int | None = None) -> list[dict[str, Any]]:
        """Every retrieval chunk of the document (merged tables once), as `tablesight chunks` gives."""
        return self._source.chunks(self.doc_id, max_tokens)

    def table(self, table_id: str) -> Table:
        for t in self.tables:
            if t.table_id == table_id:
                return t
        raise KeyError(f"{self.doc_id}: no table {table_id}")


def document_from(source: Source, doc_id: str) -> Document:
    """A Document read through `source` (KeyError when the document is not there)."""
    manifest = source.manifest(doc_id)
    tables = [
        Table(
            doc_id,
            str(e["table_id"]),
            int(e["page"]),
            tuple(float(v) for v in e["bbox"]),  # type: ignore[arg-type]
            e,
            source,
        )
        for e in manifest.get("tables") or []
    ]
    return Document(doc_id, manifest, tables, source)


class LocalSource:
    """A store written by an in-process extraction (any `Storage`)."""

    def __init__(self, storage: Storage, settings: Settings) -> None:
        self.storage = storage
        self.settings = settings

    def manifest(self, doc_id: str) -> dict[str, Any]:
        from worker.outputs import manifest_key

        return dict(self.storage.get_json(manifest_key(doc_id)))

    def table_file(self, doc_id: str, table_id: str, fmt: str) -> bytes:
        from worker.outputs import table_key

        return bytes(self.storage.get_bytes(table_key(doc_id, table_id, f".{fmt}")))

    def chunks(self, doc_id: str, max_tokens: int | None) -> list[dict[str, Any]]:
        from worker.retrieval.chunks import chunks_for

        return chunks_for(self.storage, doc_id, self.settings, max_tokens=max_tokens)

    def crop_link(self, doc_id: str, table_id: str) -> str:
        from worker.outputs import table_key

        return self.storage.location(table_key(doc_id, table_id, ".png"))


_STORES: list[tempfile.TemporaryDirectory[str]] = []  # temporary stores live as long as the process


def extract(
    path: str | Path,
    *,
    engine: str = "auto",
    pages: str | None = None,
    dpi: int | None = None,
    text_layer: bool = True,
    store: str | Path | None = None,
    settings: Settings | None = None,
) -> Document:
    """Extract the tables of a PDF or image, in this process, and return the document.

    engine: `auto` (the default), `embedded` (offline ONNX models) or `tatr`; pages: `1-3,5`;
    text_layer: False reads every page by OCR as if scanned; store: a folder to keep the
    outputs in (default: a temporary folder removed when the process ends). Bad input gives a
    document whose `status` is `failed` and whose manifest says why; nothing raises for it.
    """
    from worker.engines import resolve_engine
    from worker.pipeline import extract_document, load_stages
    from worker.settings import get_settings
    from worker.storage import LocalStorage

    base = settings or get_settings()
    chosen, _why = resolve_engine(engine, base)  # `auto`: the engine this machine can run
    run = base.replace(engine=chosen.name, text_layer=text_layer)
    if store is None:
        tmp = tempfile.TemporaryDirectory(prefix="tablesight-")
        _STORES.append(tmp)
        store = tmp.name
    storage = LocalStorage(Path(store))
    manifest = extract_document(
        Path(path), stages=lambda: load_stages(run), storage=storage, settings=run, pages=pages, dpi=dpi
    )
    return document_from(LocalSource(storage, run), str(manifest["doc_id"]))


def open_document(doc_id: str, *, store: str | Path | None = None, settings: Settings | None = None) -> Document:
    """A document already in a store (default: TABLESIGHT_STORAGE_URL)."""
    from worker.settings import get_settings
    from worker.storage import storage_for

    s = settings or get_settings()
    return document_from(LocalSource(storage_for(s, Path(store) if store else None), s), doc_id)
