"""`tablesight.Client` and the loaders against a real `tablesight serve`: a redis-server, a real
worker running the embedded engine (pretrained weights), uvicorn over HTTP; the demo sample's
known cells read back through the same shapes as in process."""

from __future__ import annotations

import pytest
from api_fixtures import ApiServer
from public_fixtures import COLUMN, VALUE, assert_loader_metadata, bound_line, embedded_weights
from queue_fixtures import RedisServer, Worker, worker_env

import tablesight
from worker.devtools.samples import write_sample

pytestmark = pytest.mark.slow
TOKEN = "tok-public-0123456789"


@pytest.fixture(scope="module")
def served(tmp_path_factory, tiny_models):
    weights = embedded_weights()
    root = tmp_path_factory.mktemp("public-serve")
    pdf = root / "sample.pdf"
    write_sample(pdf)
    redis = RedisServer(root / "redis").start()
    env = worker_env(
        broker_url=redis.url(0),
        storage_url=str(root / "store"),
        models=tiny_models,  # Table Transformer paths the settings want; the embedded engine runs
        work_dir=root / "work",
        engine="embedded",
        models_dir=weights.parent,
    )
    worker = Worker("public1", env, root).start()
    http = ApiServer({**env, "TABLESIGHT_API_TOKENS": TOKEN}, root, token=TOKEN).start()
    yield {"url": http.url, "pdf": pdf}
    http.stop()
    worker.kill()
    redis.stop()


@pytest.fixture(scope="module")
def uploaded(served):
    with tablesight.Client(served["url"], token=TOKEN) as api:
        yield api.extract(served["pdf"], timeout=600)


def test_client_extract_gives_the_in_process_shapes(served, uploaded) -> None:
    doc = uploaded
    assert isinstance(doc, tablesight.Document) and doc.status == "complete"
    assert [t.page for t in doc.tables] == [1, 2, 2]
    [table] = [t for t in doc.tables if t.page == 1]
    frame = table.to_pandas()
    row = frame[(frame.iloc[:, 0] == "North") & (frame.iloc[:, 1] == "Widgets")]
    assert row[COLUMN].tolist() == [VALUE]
    assert VALUE in table.html and any(c.text == VALUE for c in table.cells)
    assert any(bound_line(c["text"]) for c in table.chunks())
    assert (
        table.crop.size[0] > 100
        and table.crop_link == f"{served['url']}/v1/documents/{doc.doc_id}/tables/{table.table_id}.png"
    )
    with tablesight.Client(served["url"], token=TOKEN) as api:
        again = api.document(doc.doc_id)
        assert [t.table_id for t in again.tables] == [t.table_id for t in doc.tables]
        with pytest.raises(KeyError):
            api.document("0123456789abcdef")


def test_client_without_token_is_refused(served) -> None:
    with tablesight.Client(served["url"]) as api, pytest.raises(tablesight.TablesightError, match="401"):
        api.extract(served["pdf"])


def test_langchain_loader_against_serve(served, uploaded) -> None:
    from tablesight.langchain import TablesightLoader

    docs = TablesightLoader(doc_id=uploaded.doc_id, url=served["url"], token=TOKEN).load()
    [hit] = [d for d in docs if bound_line(d.page_content)]
    assert_loader_metadata(hit.metadata, uploaded.doc_id)
    assert hit.metadata["crop"].startswith(served["url"])


def test_llamaindex_reader_uploads_through_serve(served, uploaded) -> None:
    from tablesight.llamaindex import TablesightReader

    docs = TablesightReader(url=served["url"], token=TOKEN, per="table").load_data(served["pdf"])
    assert len(docs) == 3
    [hit] = [d for d in docs if bound_line(d.text)]
    assert_loader_metadata(hit.metadata, uploaded.doc_id)  # the same file is the same document
