"""Reviewers' corrections of stored tables: versions of a table record, and the original kept."""

from worker.review.original import OriginalView
from worker.review.versions import Edit, EditRefused, VersionConflict, apply_edit, original_key, versions

__all__ = ["Edit", "EditRefused", "OriginalView", "VersionConflict", "apply_edit", "original_key", "versions"]
