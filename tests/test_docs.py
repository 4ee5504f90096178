"""The docs keep their promises: the README names each command and layout entry once, only
commands the CLI has and every one it has; the settings and output-contract tables are current."""

from __future__ import annotations

import argparse
import glob
import re
from pathlib import Path

from worker.cli.main import build_parser
from worker.cli.settings_cmd import markdown_table
from worker.contract.files import MARK_END, MARK_START, contract_table

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
SETTINGS_DOC = REPO / "docs" / "settings.md"
ARCHITECTURE = REPO / "docs" / "architecture.md"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _section(text: str, heading: str) -> str:
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"README has no '## {heading}' section"
    return match.group(1)


def _command_rows() -> list[tuple[str, str]]:
    """(command, row) for each row of the README's command table, command = its first word."""
    rows = []
    for line in _section(README.read_text(), "Commands").splitlines():
        match = re.match(r"\| `tablesight ([a-z-]+)", line)
        if match:
            rows.append((match.group(1), line))
    return rows


def test_settings_table_is_current():
    block = re.search(
        r"<!-- settings-table:start -->\n(.*?)\n<!-- settings-table:end -->", SETTINGS_DOC.read_text(), re.S
    )
    assert block, "docs/settings.md lost its settings table markers"
    assert block.group(1).strip() == markdown_table().strip(), (
        "docs/settings.md settings table is stale: regenerate it with `tablesight settings --markdown`"
    )


def test_output_contract_table_is_current_in_readme_and_architecture():
    for doc, schema_dir in ((README, "docs/schema"), (ARCHITECTURE, "../docs/schema")):
        text = doc.read_text()
        assert text.count(MARK_START) == 1 and text.count(MARK_END) == 1, f"{doc.name}: contract-table markers"
        block = text[text.index(MARK_START) + len(MARK_START) : text.index(MARK_END)]
        assert block.strip() == contract_table(schema_dir), (
            f"{doc.name}: output-contract table is stale: run `tablesight schema --write-docs`"
        )


def test_each_command_once_and_only_commands_the_cli_has():
    commands = _subcommands(build_parser())
    rows = _command_rows()
    names = [name for name, _ in rows]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    assert not duplicated, f"commands listed twice in the README's command table: {duplicated}"
    assert set(names) <= set(commands), f"README names commands the CLI does not have: {set(names) - set(commands)}"
    assert set(commands) <= set(names), f"CLI commands missing from the README: {set(commands) - set(names)}"
    for name, row in rows:  # a command with subcommands names each of them in its row
        missing = [sub for sub in _subcommands(commands[name]) if not re.search(rf"\b{re.escape(sub)}\b", row)]
        assert not missing, f"README row of `tablesight {name}` does not name {missing}"


def test_every_command_the_readme_mentions_exists():
    known = set(_subcommands(build_parser()))
    documented = set(re.findall(r"`tablesight ([a-z-]+)", README.read_text()))
    assert documented <= known, documented - known


def test_layout_names_each_entry_once_and_it_exists():
    block = re.search(r"```\n(.*?)```", _section(README.read_text(), "Layout"), re.S)
    assert block, "README's Layout section has no code block"
    entries = [line.split()[0] for line in block.group(1).splitlines() if line.strip()]
    duplicated = sorted({e for e in entries if entries.count(e) > 1})
    assert not duplicated, f"layout entries listed twice: {duplicated}"
    missing = [e for e in entries if not glob.glob(str(REPO / e))]
    assert not missing, f"layout entries that do not exist: {missing}"


def test_readme_is_short_for_a_newcomer():
    assert len(README.read_text().splitlines()) < 250


def test_architecture_covers_every_package():
    text = ARCHITECTURE.read_text()
    packages = sorted(p.parent.relative_to(REPO).as_posix() for p in REPO.glob("worker/*/__init__.py"))
    missing = [p for p in packages if f"{p}/" not in text]
    assert not missing, f"docs/architecture.md does not mention {missing}"
