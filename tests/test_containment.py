"""A failure inside one table's or one page's reading stays there (worker.pipeline.containment):
the document's other tables and pages are stored, the failed page says why, and running the
document again without the fault completes it. The fault is injected into the real pipeline on
real (tiny, random) Table Transformers; nothing else is stood in for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_extract_e2e import tiny_model_settings

import worker.pipeline.pages as pages_module
from worker.devtools.samples import write_sample
from worker.pipeline import extract_document, load_stages
from worker.storage import LocalStorage
from worker.storage.base import StorageError


@pytest.fixture(scope="module")
def two_pages(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("inputs") / "report.pdf"
    write_sample(path)  # two scanned pages, one table each for the `same_table` detector
    return path


def failing_on_page(real, page: int, exc: BaseException):
    """`real`, raising `exc` where its first argument's table, or its pages, include `page`."""

    def wrapper(run, first, *args, **kwargs):
        pages = first if isinstance(first, (list, dict)) else [first.page]
        if page in pages:
            raise exc
        return real(run, first, *args, **kwargs)

    return wrapper


def stored_page(store: Path, manifest: dict, page: int) -> dict:
    return json.loads((store / manifest["doc_id"] / "pages" / f"{page:04d}.json").read_text())


def test_a_table_that_fails_leaves_its_reason_and_the_other_pages_tables(tiny_models, two_pages, tmp_path, monkeypatch):
    settings = tiny_model_settings(tiny_models)
    store = LocalStorage(tmp_path / "out")
    broken = failing_on_page(pages_module.build_table, 1, ZeroDivisionError("float division by zero"))
    monkeypatch.setattr(pages_module, "build_table", broken)
    manifest = extract_document(two_pages, stages=load_stages(settings), storage=store, settings=settings)
    assert manifest["status"] == "partial"
    assert [t["page"] for t in manifest["tables"]] == [2]
    assert manifest["errors"] == [
        {"page": 1, "reason": "table 1: internal error: ZeroDivisionError: float division by zero"}
    ]
    assert stored_page(tmp_path / "out", manifest, 1)["errors"] == manifest["errors"]
    monkeypatch.undo()  # the fault gone, the same document completes with both tables
    again = extract_document(two_pages, stages=load_stages(settings), storage=store, settings=settings)
    assert again["status"] == "complete" and [t["page"] for t in again["tables"]] == [1, 2]


def test_a_group_that_fails_runs_again_page_by_page(tiny_models, two_pages, tmp_path, monkeypatch):
    # both pages in one group (no CPU batch cap, one lane): detection fails for the group as a
    # whole, then each page alone, where only page 1 fails
    settings = tiny_model_settings(tiny_models).replace(
        models={"cpu_batch_size": 0, "detection_batch_size": 2}, lanes={"pipeline_lanes": 1}
    )
    calls: list[list[int]] = []
    real = pages_module.detect_tables

    def detect(run, loaded, views):
        calls.append(sorted(loaded))
        if 1 in loaded:
            raise IndexError("list index out of range")
        return real(run, loaded, views)

    monkeypatch.setattr(pages_module, "detect_tables", detect)
    store = LocalStorage(tmp_path / "out")
    manifest = extract_document(two_pages, stages=load_stages(settings), storage=store, settings=settings)
    assert calls == [[1, 2], [1], [2]]
    assert manifest["status"] == "partial" and [t["page"] for t in manifest["tables"]] == [2]
    assert manifest["errors"] == [{"page": 1, "reason": "internal error: IndexError: list index out of range"}]
    assert stored_page(tmp_path / "out", manifest, 1)["errors"] == manifest["errors"]


def test_a_broken_store_is_not_contained(tiny_models, two_pages, tmp_path, monkeypatch):
    # the store failing is the caller's to see (the queue retries a transient one): it is raised,
    # not written down as a table's error in the store that just failed
    settings = tiny_model_settings(tiny_models)
    broken = failing_on_page(pages_module.build_table, 1, StorageError("bucket gone", transient=True))
    monkeypatch.setattr(pages_module, "build_table", broken)
    with pytest.raises(StorageError):
        extract_document(
            two_pages, stages=load_stages(settings), storage=LocalStorage(tmp_path / "out"), settings=settings
        )


def test_extract_names_the_failed_page_and_table(tiny_models, two_pages, tmp_path, monkeypatch, capsys):
    from worker.cli.main import main
    from worker.settings import get_settings

    for name, value in {
        "TABLESIGHT_DETECTION_MODEL": str(tiny_models["same_table"]),
        "TABLESIGHT_STRUCTURE_MODEL": str(tiny_models["structure_legacy"]),
        "TABLESIGHT_DPI": "100",
        "TABLESIGHT_DEVICE": "cpu",
        "TABLESIGHT_NORMALISE__RULED_TABLES": "false",  # as in tiny_model_settings
        "TABLESIGHT_NORMALISE__ALIGNED_TABLES": "false",
    }.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    broken = failing_on_page(pages_module.build_table, 2, ValueError("no cells"))
    monkeypatch.setattr(pages_module, "build_table", broken)
    try:
        code = main(["extract", str(two_pages), "--out", str(tmp_path / "out"), "--engine", "tatr"])
    finally:
        get_settings.cache_clear()
    err = capsys.readouterr().err
    assert code == 1
    assert "report.pdf: partial: page 2: table 1: internal error: ValueError: no cells" in err
    assert "Traceback" not in err.split("done:")[-1]
