"""Shared checks of the public API and the loaders: the demo sample's known cells, read back."""

from __future__ import annotations

from pathlib import Path

from models.embedded.weights import default_dir, fetch

# the financial table of the demo sample (worker.devtools.samples.financial_table), page 1
ROW = ("North", "Widgets")
COLUMN = "2024 / Revenue"
VALUE = "1,350"


def embedded_weights() -> Path:
    folder = default_dir(None)
    fetch(folder)  # no-op when present with the right hashes (what .ci/setup leaves)
    return folder


def bound_line(text: str) -> bool:
    """The chunk or table text states VALUE under COLUMN in the North / Widgets row, read by the
    strict reader of `eval retrieval` (a labelled line or a pipe row under its header)."""
    from worker.evaluation.probes import Probe
    from worker.evaluation.retrieval.reader import read

    return read(text, Probe("sample", 0, 0, VALUE, ("North",), tuple(COLUMN.split(" / ")), ("Widgets",))) == VALUE


def assert_loader_metadata(meta: dict, doc_id: str, html_needed: str = VALUE) -> None:
    assert meta["doc_id"] == doc_id
    assert meta["page"] == 1 and meta["pages"] == [1]
    assert meta["table_id"].startswith("p0001-t")
    assert len(meta["bbox"]) == 4 and meta["bbox"][2] > meta["bbox"][0] and meta["bbox"][3] > meta["bbox"][1]
    assert isinstance(meta["flags"], list) and isinstance(meta["needs_vision"], bool)
    assert html_needed in meta["html"] and "<table" in meta["html"]
    assert meta["crop"].endswith(f"{meta['table_id']}.png")
