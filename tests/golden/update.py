"""Rewrite the golden HTML after a deliberate change: `.venv/bin/python tests/golden/update.py`.

Runs the golden run (tests/golden/run.py) and writes one `expected/<table_id>.html` per table,
removing files of tables that are gone; then review `git diff tests/golden` and commit it.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, when run as a script
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, as pytest sees it

from golden.run import EXPECTED, golden_tables  # noqa: E402


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        tables = golden_tables(Path(tmp))
    EXPECTED.mkdir(exist_ok=True)
    for old in EXPECTED.glob("*.html"):
        if old.stem not in tables:
            old.unlink()
            print(f"removed {old}")
    for tid, html in tables.items():
        path = EXPECTED / f"{tid}.html"
        changed = not path.exists() or path.read_text() != html
        path.write_text(html)
        print(f"{'wrote' if changed else 'same '} {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
