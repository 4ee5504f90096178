"""Hard-table flags on hand-made grids: each rule fires when it should, weights and threshold
from settings decide `needs_vision`, and the reasons say why."""

from __future__ import annotations

import pytest
from gridgen import grid_from_spec

from worker.core.flags import DEFAULT_WEIGHTS, FlagRules, complexity_flags, ocr_confidence
from worker.core.types import TableGrid, Word
from worker.settings import Settings


def rules_fired(flags: dict) -> list[str]:
    return [r["rule"] for r in flags["rules"]]


def test_plain_table_is_not_hard():
    flags = complexity_flags(grid_from_spec(4, 3, [], header_rows=1))
    assert flags["rules"] == [] and flags["reasons"] == []
    assert flags["score"] == 0 and flags["needs_vision"] is False and flags["is_complex"] is False
    assert flags["spanning_cells"] == 0 and flags["header_rows"] == 1 and flags["empty_fraction"] == 0


def test_spanning_cell_alone_needs_vision():
    flags = complexity_flags(grid_from_spec(4, 3, [(1, 0, 2, 1)], header_rows=1))
    assert rules_fired(flags) == ["spanning_cells"]
    assert flags["reasons"] == ["1 spanning cell(s)"]
    assert flags["score"] == 1.0 and flags["needs_vision"] is True


def test_multi_row_header_fires_from_two_rows():
    two = complexity_flags(grid_from_spec(5, 3, [], header_rows=2))
    assert rules_fired(two) == ["multi_row_header"] and two["reasons"] == ["2-row header"]
    assert complexity_flags(grid_from_spec(5, 3, [], header_rows=1))["rules"] == []


def test_mild_signs_need_company():
    grid = grid_from_spec(3, 3, [])
    rotated = complexity_flags(grid, rotated=True)
    assert rules_fired(rotated) == ["rotated"] and rotated["score"] == 0.5 and not rotated["needs_vision"]
    grid.cells[0].is_projected_row_header = True
    both = complexity_flags(grid, rotated=True)
    assert rules_fired(both) == ["projected_row_headers", "rotated"]
    assert both["score"] == 1.0 and both["needs_vision"]


def test_low_structure_and_ocr_confidence():
    grid = grid_from_spec(2, 2, [])
    grid.confidence = 0.3
    words = [Word("a", (0, 0, 1, 1), 0.2), Word("b", (0, 0, 1, 1), 0.4), Word("c", (0, 0, 1, 1), None)]
    flags = complexity_flags(grid, words=words)
    assert rules_fired(flags) == ["low_confidence", "low_ocr_confidence"]
    assert flags["ocr_confidence"] == pytest.approx(0.3)
    assert "low structure confidence 0.30" in flags["reasons"][0]
    assert flags["score"] == 2.0
    # text-layer words carry no confidence: nothing to doubt
    assert complexity_flags(grid_from_spec(2, 2, []), words=[Word("x", (0, 0, 1, 1))])["ocr_confidence"] is None


def test_many_empty_cells_and_repairs():
    grid = grid_from_spec(2, 3, [], texts={(0, 0): "only"})
    for cell in grid.cells:
        if (cell.row, cell.col) != (0, 0):
            cell.text = ""
    grid.repairs = ["2 word(s) outside the table left unassigned"]
    flags = complexity_flags(grid)
    assert rules_fired(flags) == ["many_empty_cells", "repairs"]
    assert flags["empty_fraction"] == pytest.approx(5 / 6, abs=1e-3)
    assert flags["reasons"][1] == "1 reconstruction repair(s)"
    assert flags["score"] == 1.5 and flags["needs_vision"]


def test_empty_grid_is_hard():
    flags = complexity_flags(TableGrid(0, 0, [], confidence=0.0, repairs=["nothing to reconstruct"]))
    assert rules_fired(flags) == ["no_structure", "repairs"]
    assert flags["needs_vision"] and flags["empty_fraction"] == 1.0


def test_weights_threshold_and_switching_rules_off():
    grid = grid_from_spec(4, 3, [(0, 0, 1, 2)], header_rows=2)
    off = FlagRules(weights={**DEFAULT_WEIGHTS, "spanning_cells": 0, "multi_row_header": 0})
    flags = complexity_flags(grid, rules=off)
    assert flags["rules"] == [] and not flags["needs_vision"]
    strict = FlagRules(threshold=3.0)
    flags = complexity_flags(grid, rules=strict)
    assert flags["score"] == 2.0 and flags["threshold"] == 3.0 and not flags["needs_vision"]
    everything = FlagRules(threshold=0)
    assert complexity_flags(grid_from_spec(2, 2, []), rules=everything)["needs_vision"]


def test_rules_from_settings_merge_over_defaults():
    s = Settings(flag_weights={"rotated": 1.0}, flag_threshold=1.0, flag_low_confidence=0.9)
    rules = s.flags.rules()
    assert rules.weight("rotated") == 1.0 and rules.weight("spanning_cells") == 1.0
    assert rules.low_confidence == 0.9
    flags = complexity_flags(grid_from_spec(2, 2, []), rotated=True, rules=rules)
    assert flags["needs_vision"]
    with pytest.raises(ValueError, match="unknown flag rule"):
        Settings(flag_weights={"spans": 1.0})


def test_env_json_weights(monkeypatch):
    monkeypatch.setenv("TABLESIGHT_FLAG_WEIGHTS", '{"repairs": 0}')
    monkeypatch.setenv("TABLESIGHT_FLAG_THRESHOLD", "2")
    rules = Settings(_env_file=None).flags.rules()
    assert rules.weight("repairs") == 0 and rules.threshold == 2


def test_ocr_confidence_helper():
    assert ocr_confidence([]) is None
    assert ocr_confidence([Word("a", (0, 0, 1, 1), 1.0), Word("b", (0, 0, 1, 1), 0.5)]) == 0.75


def test_clipping_boxes_to_the_crop_is_not_a_sign_of_doubt() -> None:
    from worker.core.flags import complexity_flags
    from worker.core.types import Cell, TableGrid

    grid = TableGrid(1, 1, [Cell(0, 0, text="x")], repairs=["2 row box(es) reaching outside the image clipped to it"])
    assert "repairs" not in [f["rule"] for f in complexity_flags(grid)["rules"]]
    grid.repairs.append("1 row(s) recovered by splitting bands holding two lines of words")
    fired = {f["rule"]: f["reason"] for f in complexity_flags(grid)["rules"]}
    assert fired["repairs"] == "1 reconstruction repair(s)"
