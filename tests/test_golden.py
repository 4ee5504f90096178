"""Golden output: the demo sample through the embedded engine with a fixed OCR gives the stored HTML.

A deliberate change of the output: `.venv/bin/python tests/golden/update.py`, review the diff, commit.
"""

from __future__ import annotations

import difflib

import pytest
from golden.run import EXPECTED, golden_tables

from models.embedded.weights import default_dir, fetch


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, str]:
    fetch(default_dir(None))  # no-op when .ci/setup left the pinned weights
    return golden_tables(tmp_path_factory.mktemp("golden"))


def test_the_same_tables_are_found(tables) -> None:
    expected = sorted(p.stem for p in EXPECTED.glob("*.html"))
    assert expected, "no golden files: run .venv/bin/python tests/golden/update.py"
    assert sorted(tables) == expected


def test_each_table_gives_the_stored_html(tables) -> None:
    for tid, html in sorted(tables.items()):
        want = (EXPECTED / f"{tid}.html").read_text()
        diff = "\n".join(difflib.unified_diff(want.splitlines(), html.splitlines(), "expected", "now", lineterm=""))
        assert html == want, f"{tid} changed (if deliberate: .venv/bin/python tests/golden/update.py):\n{diff[:3000]}"
