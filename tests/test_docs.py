"""The README keeps its promises: every setting documented, the documented commands exist."""

from __future__ import annotations

import re
from pathlib import Path

from worker.cli.main import build_parser
from worker.cli.settings_cmd import markdown_table

README = Path(__file__).resolve().parent.parent / "README.md"


def test_settings_table_in_readme_is_current():
    text = README.read_text()
    block = re.search(r"<!-- settings-table:start -->\n(.*?)\n<!-- settings-table:end -->", text, re.S)
    assert block, "README lost its settings table markers"
    assert block.group(1).strip() == markdown_table().strip(), (
        "README settings table is stale: regenerate it with `tablesight settings --markdown`"
    )


def test_every_command_in_the_readme_exists():
    parser = build_parser()
    known = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    documented = set(re.findall(r"`tablesight ([a-z-]+)", README.read_text()))
    assert documented <= known, documented - known
