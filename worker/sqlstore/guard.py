"""Only queries reach the store: the statement type comes from DuckDB's own parser.

The database is read-only as well (`worker.sqlstore.catalog`); refusing other statements
up front gives one clear error instead of whichever permission error DuckDB hits first.
"""

from __future__ import annotations

from typing import Any

ALLOWED = ("SELECT", "EXPLAIN")  # SHOW, DESCRIBE, SUMMARIZE, VALUES and WITH parse as SELECT


class QueryRefused(ValueError):
    """A statement that is not a query, or not exactly one statement."""


def statement_types(con: Any, sql: str) -> list[str]:
    """The type of each statement in `sql` (DuckDB's parser; a syntax error raises duckdb.Error)."""
    return [str(s.type).rsplit(".", 1)[-1].upper() for s in con.extract_statements(sql)]


def check_query(con: Any, sql: str) -> None:
    """Raise QueryRefused unless `sql` is exactly one query."""
    types = statement_types(con, sql)
    if not types:
        raise QueryRefused("no statement given")
    if len(types) > 1:
        raise QueryRefused(f"one query at a time ({len(types)} statements given)")
    if types[0] not in ALLOWED:
        raise QueryRefused(
            f"the store is read-only: only queries (SELECT, WITH, SHOW, DESCRIBE, SUMMARIZE, EXPLAIN) are allowed, "
            f"not {types[0]}"
        )
