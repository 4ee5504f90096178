"""The `openai` backend against a chat-completions server on loopback: every answer ends as a
correct stored read or a clear stored failure; timeouts and 5xx are retried with bounded
backoff; reads are reused unless forced; a failed re-read keeps the earlier good one."""

from __future__ import annotations

import pytest
from helpers import isolated_settings
from vision_fixtures import DOC_ID, GOOD, TABLE_ID, ChatServer, store_table

from worker.core.html_parse import html_to_grid
from worker.settings import Settings
from worker.storage import LocalStorage
from worker.vision.prompt import PROMPT_VERSION
from worker.vision.read import TableNotFound, parse_table_ref, read_table


@pytest.fixture
def server():
    with ChatServer() as srv:
        yield srv


@pytest.fixture
def store(tmp_path):
    storage = LocalStorage(tmp_path / "out")
    store_table(storage)
    return storage


def chat_settings(server: ChatServer, **kw) -> Settings:
    base = dict(
        vision_backend="openai",
        vision_url=server.url,
        vision_model="served-vlm",
        vision_api_key="k3y",
        vision_timeout=2.0,
        vision_retries=2,
        vision_retry_backoff=0.05,
        vision_retry_backoff_max=0.2,
    )
    return isolated_settings(**{**base, **kw})


REF = f"{DOC_ID}/{TABLE_ID}"


def files(store: LocalStorage) -> tuple[dict, str | None]:
    record = store.get_json(f"{DOC_ID}/tables/{TABLE_ID}.vision.json")
    key = f"{DOC_ID}/tables/{TABLE_ID}.vision.html"
    return record, (store.get_bytes(key).decode() if store.exists(key) else None)


def test_good_table_with_spans(server, store):
    record = read_table(store, REF, chat_settings(server))
    stored, html = files(store)
    assert record["status"] == "ok" and stored == record
    assert html_to_grid(html).shape_signature() == html_to_grid(GOOD).shape_signature()
    assert 'colspan="2"' in html and 'rowspan="2"' in html
    assert record["backend"] == "openai" and record["model"] == "served-vlm"
    assert record["prompt_version"] == PROMPT_VERSION and record["latency_seconds"] >= 0
    assert record["tokens"] == {"prompt": 321, "completion": 45} and record["attempts"] == 1
    assert record["raw_answer"] == GOOD and record["repairs"] == [] and record["removed"] == []
    assert record["grid"] == {"n_rows": 4, "n_cols": 3, "header_rows": 2}
    agreement = record["agreement"]
    assert 0 < agreement["teds"] < 1 and agreement["teds_struct"] is not None  # the detector split "Region"
    assert any(d["row"] == 0 and d["col"] == 0 and d["what"] == "span differs" for d in agreement["differences"])
    assert record["detector_flags"]["needs_vision"] is True
    # the request: model, image part as a PNG data URL of the stored crop, the prompt, the key
    req = server.requests[0]
    assert req["model"] == "served-vlm" and req["temperature"] == 0.0 and req["max_tokens"] == 2048
    assert server.image_of(0).size == (320, 160)
    assert any(p["type"] == "text" and "colspan" in p["text"] for p in req["messages"][0]["content"])
    assert server.headers[0]["Authorization"] == "Bearer k3y"


def test_fenced_answer_with_prose(server, store):
    server.default = ("text", f"Here you go:\n```html\n{GOOD}\n```\nThe table shows sales.")
    record = read_table(store, REF, chat_settings(server))
    _, html = files(store)
    assert record["status"] == "ok" and "```" not in html and "Here you go" not in html
    assert "markdown fence" in record["removed"]
    assert record["raw_answer"].startswith("Here you go")  # the raw answer is kept as sent


def test_script_and_onclick_are_stripped(server, store):
    server.default = (
        "text",
        GOOD.replace("<th", '<th onclick="steal()"', 1).replace("</table>", "<script>fetch('//x')</script></table>"),
    )
    record = read_table(store, REF, chat_settings(server))
    _, html = files(store)
    assert record["status"] == "ok"
    assert "script" not in html and "onclick" not in html and "fetch" not in html
    assert any("script" in r for r in record["removed"]) and any("onclick" in r for r in record["removed"])


def test_no_table_is_a_stored_failure(server, store):
    server.default = ("text", "I'm sorry, I can't see a table in this image.")
    record = read_table(store, REF, chat_settings(server))
    stored, html = files(store)
    assert record["status"] == "failed" and stored["status"] == "failed"
    assert record["failure"] == "no-table" and "no table" in record["reason"]
    assert record["retryable"] is False and record["html_key"] is None and html is None
    assert record["raw_answer"].startswith("I'm sorry")
    # a model that answered is not asked again for the same table
    again = read_table(store, REF, chat_settings(server))
    assert again["cached"] is True and len(server.requests) == 1


def test_timeout_is_retried_then_fails_clearly(server, store):
    server.default = ("sleep", 1.0)
    record = read_table(store, REF, chat_settings(server, vision_timeout=0.3, vision_retries=1))
    stored, html = files(store)
    assert record["status"] == "failed" and record["failure"] == "backend" and record["retryable"] is True
    assert "no answer within 0.3s" in record["reason"] and "2 attempt(s)" in record["reason"]
    assert len(server.requests) == 2 and html is None and stored["status"] == "failed"


def test_500_is_retried_with_bounded_backoff(server, store):
    server.default = ("status", 500)
    record = read_table(
        store, REF, chat_settings(server, vision_retries=3, vision_retry_backoff=0.05, vision_retry_backoff_max=0.1)
    )
    assert record["status"] == "failed" and record["retryable"] is True
    assert "HTTP 500: scripted 500" in record["reason"]
    assert len(server.requests) == 4
    gaps = [b - a for a, b in zip(server.times, server.times[1:])]
    assert all(0.04 <= g < 0.5 for g in gaps), gaps  # 0.05, 0.1, 0.1 (capped)
    # a retryable failure is read again next time, and a recovered server gives a good read
    server.default = ("text", GOOD)
    again = read_table(store, REF, chat_settings(server))
    assert again["status"] == "ok" and "cached" not in again


def test_503_then_success_counts_attempts(server, store):
    server.script.extend([("status", 503), ("status", 502)])
    record = read_table(store, REF, chat_settings(server))
    assert record["status"] == "ok" and record["attempts"] == 3


def test_4xx_is_not_retried(server, store):
    server.default = ("status", 400)
    record = read_table(store, REF, chat_settings(server))
    assert record["status"] == "failed" and record["retryable"] is False
    assert "refused the request: HTTP 400" in record["reason"] and len(server.requests) == 1


def test_garbage_body_is_a_failure(server, store):
    server.default = ("raw", b"<html>not json</html>")
    record = read_table(store, REF, chat_settings(server))
    assert record["status"] == "failed" and "no chat completion" in record["reason"]


def test_unreachable_server_fails_retryable(store):
    s = Settings(
        _env_file=None,
        vision_backend="openai",
        vision_url="http://127.0.0.1:9/v1",
        vision_model="m",
        vision_retries=1,
        vision_retry_backoff=0.01,
    )
    record = read_table(store, REF, s)
    assert record["status"] == "failed" and record["retryable"] and "cannot connect" in record["reason"]


def test_idempotent_unless_forced_or_model_changes(server, store):
    first = read_table(store, REF, chat_settings(server))
    again = read_table(store, REF, chat_settings(server))
    assert again["cached"] is True and again["created_at"] == first["created_at"] and len(server.requests) == 1
    read_table(store, REF, chat_settings(server), force=True)
    assert len(server.requests) == 2
    other = read_table(store, REF, chat_settings(server, vision_model="bigger-vlm"))
    assert other["model"] == "bigger-vlm" and "cached" not in other and len(server.requests) == 3
    # a re-extraction that crops the table differently is read again
    store_table(store, crop_size=(330, 160))
    assert "cached" not in read_table(store, REF, chat_settings(server, vision_model="bigger-vlm"))
    assert len(server.requests) == 4


def test_failed_reread_keeps_the_good_read(server, store):
    read_table(store, REF, chat_settings(server))
    _, good_html = files(store)
    server.default = ("text", "no idea")
    result = read_table(store, REF, chat_settings(server), force=True)
    stored, html = files(store)
    assert result["status"] == "failed" and result["kept_previous"] is True
    assert stored["status"] == "ok" and html == good_html
    assert stored["last_failure"]["failure"] == "no-table" and stored["last_failure"]["raw_answer"] == "no idea"


def test_large_crops_are_downscaled(server, tmp_path):
    store = LocalStorage(tmp_path / "s")
    store_table(store)
    read_table(store, REF, chat_settings(server, vision_max_image_side=100))
    assert max(server.image_of(0).size) == 100


def test_unknown_table_and_bad_ids(server, store):
    with pytest.raises(TableNotFound, match="no table"):
        read_table(store, f"{DOC_ID}/p0009-t01", chat_settings(server))
    for bad in ("nodoc", "../etc/passwd", "a/b/c", "a/../b", ""):
        with pytest.raises(ValueError):
            parse_table_ref(bad)
    assert str(parse_table_ref(f"{DOC_ID}/tables/{TABLE_ID}.png")) == REF
    assert server.requests == []


def test_missing_model_name_is_a_setup_error(server, store):
    from models.vision import VisionError

    with pytest.raises(VisionError, match="VISION_MODEL"):
        read_table(store, REF, chat_settings(server, vision_model=""))


def test_stored_record_follows_the_contract(server, store):
    from worker.contract import VisionRead

    record = read_table(store, REF, chat_settings(server))
    stored = store.get_json(f"{DOC_ID}/tables/{TABLE_ID}.vision.json")
    assert VisionRead.model_validate(stored).dump() == stored  # every key known, types as declared
    assert (
        stored == record and record["status"] == "ok" and record["grid"] == {"n_rows": 4, "n_cols": 3, "header_rows": 2}
    )


def test_deadline_bounds_the_whole_read(server, store):
    import time

    server.default = ("sleep", 1.0)
    t0 = time.monotonic()
    record = read_table(
        store, REF, chat_settings(server, vision_timeout=5, vision_retries=5), deadline=time.monotonic() + 0.4
    )
    assert time.monotonic() - t0 < 1.5 and record["status"] == "failed" and record["retryable"]
    assert len(server.requests) == 1


def test_prepare_image_bounds():
    from PIL import Image

    from models.vision.base import MAX_ASPECT, MIN_SIDE, prepare_image

    assert prepare_image(Image.new("L", (4000, 1000)), 1000).size == (1000, 250)
    assert prepare_image(Image.new("RGB", (300, 200)), 0).size == (300, 200)
    thin = prepare_image(Image.new("RGB", (3000, 20), "black"), 1536)
    assert thin.mode == "RGB" and min(thin.size) >= MIN_SIDE and max(thin.size) / min(thin.size) <= MAX_ASPECT
    assert thin.getpixel((0, 0)) == (255, 255, 255)  # padded with white, not stretched
    assert prepare_image(Image.new("RGB", (1, 1)), 100).size == (MIN_SIDE, MIN_SIDE)
