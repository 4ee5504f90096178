"""TEDS lives in `worker.metrics.teds` (production uses it too); this name stays for the evaluation's callers."""

from worker.metrics.teds import EMPTY, NormCell, is_rectangular, normalize_html, parse_rows, teds, teds_normalized

__all__ = ["EMPTY", "NormCell", "is_rectangular", "normalize_html", "parse_rows", "teds", "teds_normalized"]
