"""`tablesight rebuild` on good and hostile input: HTML out, or one clear line and exit 1."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from gridgen import oracle_objects

from worker.cli.main import main
from worker.core.replay import payload


def good_payload() -> dict:
    objs, words, size = oracle_objects(3, 2, [(0, 0, 1, 2)], header_rows=1)
    return payload(size, objs, words)


def test_rebuild_prints_html(tmp_path, capsys):
    f = tmp_path / "t.json"
    f.write_text(json.dumps(good_payload()))
    assert main(["rebuild", str(f)]) == 0
    out = capsys.readouterr().out
    assert out.startswith('<table><thead><tr><th scope="colgroup" colspan="2">r0c0</th></tr></thead>')


# Not a structure payload at all: one error line. (A bad box or label inside a well-formed
# payload is repaired or dropped instead, see LENIENT.)
HOSTILE = {
    "missing objects": {"image_size": [10, 10]},
    "objects not a list": {"objects": {"label": "table row"}},
    "bbox not numbers": {"objects": [{"label": "table row", "score": 0.9, "bbox": ["a", 0, 10, 10]}]},
    "label not a string": {"objects": [{"label": 7, "score": 0.9, "bbox": [0, 0, 1, 1]}]},
    "missing key": {"objects": [{"label": "table row", "bbox": [0, 0, 1, 1]}]},
    "100k objects": {"objects": [{"label": "table row", "score": 0.9, "bbox": [0, 0, 1, 1]}] * 100_000},
    "not json": "this is not json",
    "a list": [1, 2, 3],
    "deep nesting": "[" * 100_000 + "]" * 100_000,
}


def _lenient(bad: dict) -> dict:
    good = good_payload()
    good["objects"].append(bad)
    return good


# One bad object in an otherwise good payload: the table is rebuilt, the object repaired or dropped.
LENIENT = {
    "negative box": _lenient({"label": "table row", "score": 0.9, "bbox": [-6.4, -2, 165, 30]}),
    "nan box": _lenient({"label": "table row", "score": 0.9, "bbox": [0, float("nan"), 10, 10]}),
    "inverted box": _lenient({"label": "table row", "score": 0.9, "bbox": [10, 0, 5, 10]}),
    "unknown label": _lenient({"label": "<b>", "score": 0.9, "bbox": [0, 0, 1, 1]}),
}


@pytest.mark.parametrize("name", list(LENIENT))
def test_rebuild_one_bad_object_loses_nothing(tmp_path, capsys, name):
    f = tmp_path / "t.json"
    f.write_text(json.dumps(LENIENT[name]))  # NaN is written as the JSON extension NaN
    assert main(["rebuild", str(f)]) == 0
    good = tmp_path / "good.json"
    good.write_text(json.dumps(good_payload()))
    out = capsys.readouterr().out
    assert main(["rebuild", str(good)]) == 0
    assert out == capsys.readouterr().out


@pytest.mark.parametrize("name", list(HOSTILE))
def test_rebuild_hostile_input_fails_cleanly(tmp_path, name):
    value = HOSTILE[name]
    f = tmp_path / "bad.json"
    f.write_text(value if isinstance(value, str) else json.dumps(value))
    proc = subprocess.run(
        [sys.executable, "-m", "worker.cli.main", "rebuild", str(f)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and str(f) in lines[0]


def test_rebuild_jsonl_keeps_order_and_reports_bad_lines(tmp_path, capsys):
    f = tmp_path / "in.jsonl"
    good = json.dumps(good_payload())
    lines = [good, "garbage", json.dumps(HOSTILE["missing key"]), json.dumps(LENIENT["negative box"]), good]
    f.write_text("\n".join(lines) + "\n")
    assert main(["rebuild", "--jsonl", str(f)]) == 1
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [("html" in o, "error" in o) for o in out] == [
        (True, False),
        (False, True),
        (False, True),
        (True, False),
        (True, False),
    ]
    assert out[1]["error"].startswith("line 2: not JSON")
    assert out[0]["html"] == out[3]["html"] == out[4]["html"]


def test_rebuild_usage_errors(tmp_path):
    assert main(["rebuild"]) == 2
    assert main(["rebuild", str(tmp_path / "missing.json")]) == 1


def test_replay_ocr_comes_from_the_registry_with_the_same_line_erasing():
    """`rebuild` OCRs a crop through the OCR registry; at REPLAY_DPI it erases the ruling lines
    replay always erased (longer than models.rules.RULE_MIN_PX)."""
    from models.rules import RULE_MIN_PX
    from worker.cli.rebuild import REPLAY_DPI
    from worker.engines.ocr import load_ocr_engine
    from worker.settings import Settings

    engine = load_ocr_engine(Settings(_env_file=None).ocr, REPLAY_DPI)
    assert engine.name == "tesseract" and engine.rule_min_px == RULE_MIN_PX  # type: ignore[attr-defined]
