"""Shared test set-up: make tests/ importable for small helpers such as gridgen."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
