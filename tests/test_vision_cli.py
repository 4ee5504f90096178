"""`tablesight read` in process (no broker configured) and `tablesight extract --read-hard`:
exit codes, one line per table, stored reads reused, every hard table read after extraction."""

from __future__ import annotations

import json

import pytest
from vision_fixtures import DOC_ID, GOOD, TABLE_ID, ChatServer, store_table

from worker.cli.main import main
from worker.settings import get_settings
from worker.storage import LocalStorage

REF = f"{DOC_ID}/{TABLE_ID}"


@pytest.fixture
def env(monkeypatch):
    """A clean TABLESIGHT_ environment pointing the vision reader at a loopback server."""
    import os

    for key in list(os.environ):
        if key.startswith("TABLESIGHT_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(os.environ.get("TMPDIR", "/tmp"))  # no stray .env file
    with ChatServer() as server:
        for key, value in {
            "VISION_BACKEND": "openai",
            "VISION_URL": server.url,
            "VISION_MODEL": "served-vlm",
            "VISION_RETRIES": "0",
            "VISION_TIMEOUT": "5",
        }.items():
            monkeypatch.setenv(f"TABLESIGHT_{key}", value)
        get_settings.cache_clear()
        yield server
    get_settings.cache_clear()


def test_read_stores_and_reuses(env, tmp_path, capsys):
    store = LocalStorage(tmp_path / "out")
    store_table(store)
    assert main(["read", REF, "--out", str(tmp_path / "out")]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{REF}: ok 4x3, TEDS ") and line.endswith(f"{TABLE_ID}.vision.html")
    assert (tmp_path / "out" / DOC_ID / "tables" / f"{TABLE_ID}.vision.html").is_file()
    assert main(["read", REF, "--out", str(tmp_path / "out")]) == 0
    assert "(stored read)" in capsys.readouterr().out and len(env.requests) == 1
    assert main(["read", REF, "--out", str(tmp_path / "out"), "--force", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["status"] == "ok" and "raw_answer" not in record and len(env.requests) == 2


def test_read_failures_and_usage_errors(env, tmp_path, capsys):
    store = LocalStorage(tmp_path / "out")
    store_table(store)
    env.default = ("text", "There is no table here.")
    out = ["--out", str(tmp_path / "out")]
    assert main(["read", REF, f"{DOC_ID}/p0002-t01", *out]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{REF}: failed: the answer contains no table"
    assert lines[1].startswith(f"{DOC_ID}/p0002-t01: failed: no table")
    assert main(["read", "not-a-table-id", *out]) == 2
    assert "expected DOC_ID/TABLE_ID" in capsys.readouterr().err


def test_storage_url_is_used_without_out(env, tmp_path, monkeypatch, capsys):
    store = LocalStorage(tmp_path / "store")
    store_table(store)
    monkeypatch.setenv("TABLESIGHT_STORAGE_URL", str(tmp_path / "store"))
    get_settings.cache_clear()
    assert main(["read", f"{DOC_ID}/tables/{TABLE_ID}.png"]) == 0  # a copied key works as an id
    assert store.exists(f"{DOC_ID}/tables/{TABLE_ID}.vision.json")


def test_extract_read_hard(env, tiny_models, tmp_path, monkeypatch, capsys):
    from worker.devtools.samples import write_sample

    pdf = tmp_path / "sample.pdf"
    write_sample(pdf)
    for key, value in {
        "DETECTION_MODEL": str(tiny_models["same_table"]),
        "STRUCTURE_MODEL": str(tiny_models["structure"]),
        "DEVICE": "cpu",
        "DPI": "100",
        "TORCH_THREADS": "1",
    }.items():
        monkeypatch.setenv(f"TABLESIGHT_{key}", value)
    get_settings.cache_clear()
    env.default = ("text", GOOD.replace("<td>", '<td style="x" onclick="y()">'))
    out = tmp_path / "out"
    assert main(["extract", str(pdf), "--out", str(out), "--no-progress", "--read-hard", "--pages", "1"]) == 0
    stdout = capsys.readouterr().out
    manifest = json.loads(next(out.glob("*/manifest.json")).read_text())
    hard = [t for t in manifest["tables"] if t["needs_vision"]]
    assert hard, "the tiny random models give low-confidence tables: flagged needs_vision"
    assert all(t["reasons"] and t["score"] >= 1 for t in hard)
    assert len(env.requests) == len(hard) and stdout.count("  vision read ") == len(hard)
    for t in hard:
        tables = out / manifest["doc_id"] / "tables"
        html = (tables / f"{t['table_id']}.vision.html").read_text()
        record = json.loads((tables / f"{t['table_id']}.vision.json").read_text())
        assert record["status"] == "ok" and "onclick" not in html and "style" not in html
        assert record["agreement"]["teds"] is not None and record["agreement"]["detector_shape"]
        assert (tables / f"{t['table_id']}.png").is_file()  # beside the crop


def test_extract_read_hard_without_a_model_stops_clearly(env, tiny_models, tmp_path, monkeypatch, capsys):
    from worker.devtools.samples import write_sample

    write_sample(tmp_path / "sample.pdf")
    for key, value in {
        "DETECTION_MODEL": str(tiny_models["same_table"]),
        "STRUCTURE_MODEL": str(tiny_models["structure"]),
        "DEVICE": "cpu",
        "DPI": "100",
        "VISION_MODEL": "",
        "VISION_AUTO_READ": "true",
    }.items():
        monkeypatch.setenv(f"TABLESIGHT_{key}", value)
    get_settings.cache_clear()
    assert main(["extract", str(tmp_path / "sample.pdf"), "--out", str(tmp_path / "out"), "--no-progress"]) == 2
    assert not (tmp_path / "out").exists()  # nothing extracted: the reader could never have worked
    assert "error: vision read: set TABLESIGHT_VISION_MODEL" in capsys.readouterr().err
