"""`tablesight.extract` and the loaders in process: the demo sample through the embedded engine
(real pretrained weights), its known cells read back through every shape a user touches."""

from __future__ import annotations

from pathlib import Path

import pytest
from public_fixtures import COLUMN, VALUE, assert_loader_metadata, bound_line, embedded_weights

import tablesight
from worker.devtools.samples import write_sample


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> dict:
    embedded_weights()
    tmp = tmp_path_factory.mktemp("public")
    write_sample(tmp / "sample.pdf")
    doc = tablesight.extract(tmp / "sample.pdf", engine="embedded", store=tmp / "store")
    return {"doc": doc, "pdf": tmp / "sample.pdf", "store": tmp / "store", "tmp": tmp}


def _financial(doc: tablesight.Document) -> tablesight.Table:
    [table] = [t for t in doc.tables if t.page == 1]
    return table


def test_extract_gives_tables_with_html_cells_pandas_chunks_and_crop(sample) -> None:
    doc = sample["doc"]
    assert doc.status == "complete" and doc.source == "sample.pdf"
    assert [t.page for t in doc.tables] == [1, 2, 2]
    table = _financial(doc)
    assert doc.table(table.table_id) is table
    # cells: the spanning year header and the value in its row and column
    cells = {(c.row, c.col): c for c in table.cells}
    assert any(c.text == "2024" and c.colspan == 2 and c.is_header for c in cells.values())
    assert 'colspan="2"' in table.html and VALUE in table.html
    frame = table.to_pandas()
    assert COLUMN in frame.columns
    row = frame[(frame.iloc[:, 0] == "North") & (frame.iloc[:, 1] == "Widgets")]
    assert row[COLUMN].tolist() == [VALUE]
    assert frame[frame.iloc[:, 0] == "South"][COLUMN].tolist() == ["1,010", "575"]
    chunks = table.chunks()
    assert chunks and all(c["table_id"] == table.table_id for c in chunks)
    assert any(bound_line(c["text"]) for c in chunks)
    assert len(doc.chunks()) >= len(doc.tables)
    crop = table.crop
    assert crop.size[0] > 100 and crop.size[1] > 50 and table.crop_bytes.startswith(b"\x89PNG")
    assert Path(table.crop_link).is_file()
    assert table.caption and table.flags["score"] >= 0


def test_open_document_reads_the_same_tables_back(sample) -> None:
    again = tablesight.open_document(sample["doc"].doc_id, store=sample["store"])
    assert [t.table_id for t in again.tables] == [t.table_id for t in sample["doc"].tables]
    assert _financial(again).html == _financial(sample["doc"]).html


def test_bad_input_is_a_failed_document_not_an_exception(tmp_path) -> None:
    bad = tmp_path / "notes.pdf"
    bad.write_bytes(b"%PDF-1.7\nthis is not a pdf")
    doc = tablesight.extract(bad, engine="embedded", store=tmp_path / "store")
    assert doc.status == "failed" and doc.tables == []
    assert doc.manifest["errors"]


def test_langchain_loader_extracts_in_process_one_document_per_chunk(sample) -> None:
    from langchain_core.documents import Document as LcDocument

    from tablesight.langchain import TablesightLoader

    docs = TablesightLoader(sample["pdf"], engine="embedded", store=sample["tmp"] / "lc-store").load()
    assert docs and all(isinstance(d, LcDocument) for d in docs)
    hits = [d for d in docs if bound_line(d.page_content)]
    assert len(hits) == 1
    assert_loader_metadata(hits[0].metadata, sample["doc"].doc_id)  # same bytes, same doc id
    assert hits[0].metadata["chunk"] == 0 and hits[0].metadata["n_chunks"] >= 1
    assert {d.metadata["page"] for d in docs} == {1, 2}


def test_llamaindex_reader_reads_a_stored_document_one_per_table(sample) -> None:
    from llama_index.core.schema import Document as LiDocument

    from tablesight.llamaindex import TablesightReader

    reader = TablesightReader(per="table", store=sample["store"])
    docs = reader.load_data(doc_id=sample["doc"].doc_id)
    assert len(docs) == 3 and all(isinstance(d, LiDocument) for d in docs)
    [hit] = [d for d in docs if bound_line(d.text)]
    assert_loader_metadata(hit.metadata, sample["doc"].doc_id)
    assert hit.id_ == f"{sample['doc'].doc_id}/{hit.metadata['table_id']}"
    assert "html" not in hit.get_content(metadata_mode="embed")  # the HTML is kept out of the embedding
    assert VALUE in hit.get_content(metadata_mode="embed")


def test_loaders_refuse_both_or_neither_source() -> None:
    from tablesight.langchain import TablesightLoader

    with pytest.raises(ValueError, match="either a file path or a doc_id"):
        TablesightLoader().load()
    with pytest.raises(ValueError, match="either a file path or a doc_id"):
        TablesightLoader("x.pdf", doc_id="abc").load()
