"""Nested settings: every old flat TABLESIGHT_* name still lands in its group, the nested names work,
the hooks stay out of the production settings, and the docs table shows real defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from worker.cli.settings_cmd import markdown_table
from worker.settings import FLAT_NAMES, DevHooks, Settings, known_env_name

OLD_NAMES = {
    "TABLESIGHT_DPI": ("150", ("inputs", "dpi"), 150),
    "TABLESIGHT_DETECTION_MODEL": ("/models/det", ("models", "detection_model"), "/models/det"),
    "TABLESIGHT_DEVICE": ("cpu", ("models", "device"), "cpu"),
    "TABLESIGHT_QUEUE_DOCS": ("cpu-docs", ("queue", "docs"), "cpu-docs"),
    "TABLESIGHT_TASK_TIME_LIMIT": ("70", ("queue", "task_time_limit"), 70),
    "TABLESIGHT_VISIBILITY_TIMEOUT": ("120", ("queue", "visibility_timeout"), 120),
    "TABLESIGHT_VISION_MODEL": ("qwen", ("vision", "model"), "qwen"),
    "TABLESIGHT_FLAG_WEIGHTS": ('{"repairs": 0}', ("flags", "weights"), {"repairs": 0.0}),
    "TABLESIGHT_REFINE_GAPS": ("false", ("refine", "gaps"), False),
    "TABLESIGHT_THRESHOLD_ROW": ("0.3", ("structure", "threshold_row"), 0.3),
    "TABLESIGHT_EMBEDDED_DETECTION_THRESHOLD": ("0.4", ("embedded", "detection_threshold"), 0.4),
    "TABLESIGHT_OCR_LANG": ("eng+deu", ("ocr", "lang"), "eng+deu"),
    "TABLESIGHT_API_PORT": ("9090", ("api", "port"), 9090),
    "TABLESIGHT_CHUNK_MAX_TOKENS": ("256", ("chunks", "max_tokens"), 256),
    "TABLESIGHT_STORAGE_URL": ("s3://b/p", ("store", "storage_url"), "s3://b/p"),
    "TABLESIGHT_CONTEXT_CAPTURE": ("0", ("context", "capture"), False),
    "TABLESIGHT_CPU_WORKERS": ("3", ("lanes", "subprocess_threads"), 3),  # the oldest name of SUBPROCESS_THREADS
    "TABLESIGHT_ENGINE": ("embedded", ("models", "engine"), "embedded"),
}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    import os

    for key in list(os.environ):
        if key.startswith("TABLESIGHT_"):
            monkeypatch.delenv(key)
    return monkeypatch


def _get(settings: Settings, where: tuple[str, str]) -> object:
    return getattr(getattr(settings, where[0]), where[1])


def test_old_flat_env_names_land_in_their_groups(clean_env: pytest.MonkeyPatch) -> None:
    for name, (value, _, _) in OLD_NAMES.items():
        clean_env.setenv(name, value)
    settings = Settings(_env_file=None)
    for name, (_, where, expected) in OLD_NAMES.items():
        assert _get(settings, where) == expected, name


def test_nested_env_names_split_once(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("TABLESIGHT_QUEUE__TASK_TIME_LIMIT", "65")
    clean_env.setenv("TABLESIGHT_QUEUE__VISIBILITY_TIMEOUT", "100")
    clean_env.setenv("TABLESIGHT_MODELS__DETECTION_MODEL", "/m/det")  # the field's own `_` is not a delimiter
    clean_env.setenv("TABLESIGHT_VISION__API_KEY", "k")
    clean_env.setenv("TABLESIGHT_FLAGS__WEIGHTS", '{"rotated": 2}')
    s = Settings(_env_file=None)
    assert s.queue.task_time_limit == 65 and s.queue.visibility_timeout == 100
    assert s.models.detection_model == "/m/det" and s.vision.api_key == "k"
    assert s.flags.weights == {"rotated": 2.0} and s.flags.rules().weight("rotated") == 2.0


def test_nested_name_wins_over_flat_and_keywords_win_over_both(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("TABLESIGHT_DPI", "150")
    clean_env.setenv("TABLESIGHT_INPUTS__DPI", "300")
    assert Settings(_env_file=None).inputs.dpi == 300
    assert Settings(_env_file=None, dpi=72).inputs.dpi == 72  # a flat keyword, as tests and tools pass them
    assert Settings(_env_file=None, inputs={"dpi": 96}).inputs.dpi == 96


def test_dotenv_file_reads_flat_and_nested_names(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text(
        "TABLESIGHT_BROKER_URL=redis://r:6379/1\nTABLESIGHT_API__HOST=0.0.0.0\nTABLESIGHT_S3_ENDPOINT_URL=\n"
        "TABLESIGHT_PIPELINE_LANES=3\n",
        encoding="utf-8",
    )
    s = Settings(_env_file=env)
    assert s.queue.broker_url == "redis://r:6379/1" and s.api.host == "0.0.0.0"
    assert s.store.s3_endpoint_url is None  # empty means unset, as before
    assert s.lanes.pipeline_lanes == 3
    clean_env.setenv("TABLESIGHT_PIPELINE_LANES", "4")  # the environment beats the file
    assert Settings(_env_file=env).lanes.pipeline_lanes == 4


def test_every_flat_name_maps_onto_a_real_field(clean_env: pytest.MonkeyPatch) -> None:
    defaults = Settings(_env_file=None)
    # the 107 flat fields of the flat era less 2 hooks and LOG_LEVEL, plus the flat names later groups
    # chose to keep their families alike (TABLESIGHT_API_CALLBACK_*, TABLESIGHT_NORMALISE_*)
    assert len({k for k in FLAT_NAMES if k != "cpu_workers"}) >= 104
    for old, (group, field) in FLAT_NAMES.items():
        assert field in type(getattr(defaults, group)).model_fields, old
        assert known_env_name(f"TABLESIGHT_{old.upper()}") and known_env_name(
            f"TABLESIGHT_{group.upper()}__{field.upper()}"
        )
    assert not known_env_name("TABLESIGHT_QUEUE__NOPE") and not known_env_name("TABLESIGHT_NOPE")


def test_validation_still_guards_the_queue_timing_and_names(clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="VISIBILITY_TIMEOUT must exceed TASK_TIME_LIMIT"):
        Settings(_env_file=None, task_time_limit=100)
    with pytest.raises(ValidationError, match="VISION_TASK_TIME_LIMIT"):
        Settings(_env_file=None, vision_task_time_limit=80)
    with pytest.raises(ValidationError, match="unknown engine 'tart'.*tatr, embedded, auto"):
        Settings(_env_file=None, engine="tart")
    clean_env.setenv("TABLESIGHT_QUEUE__TASK_TIMELIMIT", "5")  # a misspelt nested name fails loudly
    with pytest.raises(ValidationError, match="task_timelimit"):
        Settings(_env_file=None)


def test_replace_takes_flat_or_group_changes_and_validates() -> None:
    base = Settings(_env_file=None)
    changed = base.replace(engine="embedded", dpi=100, queue={"pages": "gpu"})
    assert (changed.models.engine, changed.inputs.dpi, changed.queue.pages) == ("embedded", 100, "gpu")
    assert base.models.engine == "auto" and base.inputs.dpi == 200  # the original is untouched
    with pytest.raises(ValidationError):
        base.replace(dpi=10)


def test_hooks_are_not_production_settings(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("TABLESIGHT_TEST_PAGE_DELAY", "1.5")
    clean_env.setenv("TABLESIGHT_BENCH_STAND_IN_PAGES", "1")
    s = Settings(_env_file=None)
    assert "test_page_delay" not in s.model_dump() and not hasattr(s, "bench_stand_in_pages")
    hooks = DevHooks()
    assert hooks.test_page_delay == 1.5 and hooks.bench_stand_in_pages is True


def test_settings_table_shows_real_defaults() -> None:
    table = markdown_table()
    assert "PydanticUndefined" not in table
    row = next(line for line in table.splitlines() if "`TABLESIGHT_FLAGS__WEIGHTS`" in line)
    assert "`TABLESIGHT_FLAG_WEIGHTS`" in row and "| `{}` |" in row
    row = next(line for line in table.splitlines() if "`TABLESIGHT_INPUTS__DPI`" in line)
    assert "`TABLESIGHT_DPI`" in row and "| `200` |" in row
    assert "TEST_PAGE_DELAY" not in table and "BENCH_STAND_IN" not in table


def test_each_group_has_its_own_derived_rules() -> None:
    s = Settings(_env_file=None, threshold_row=0.4, refine_split=False)
    assert s.structure.thresholds()["table row"] == 0.4
    assert s.refine.rules().split is False and s.refine.rules().gaps is True
