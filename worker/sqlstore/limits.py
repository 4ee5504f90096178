"""One query with a row limit and a time limit, for callers that are not the person at the
keyboard (the HTTP API): the CLI's read-only guarantees (`guard`, the read-only catalog) plus
a cap on what comes back and on how long DuckDB may work (`interrupt` from a timer)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from worker.sqlstore.catalog import SqlStore, StoreError, _first_line
from worker.sqlstore.guard import check_query


class QueryTimeout(StoreError):
    """The query ran past its time limit and was interrupted."""


@dataclass
class LimitedResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool
    seconds: float


def run_limited(store: SqlStore, sql: str, *, max_rows: int, timeout: float) -> LimitedResult:
    """At most `max_rows` rows (`truncated` says more matched); QueryTimeout after `timeout` s;
    QueryRefused for anything but one query; StoreError for a query DuckDB rejects."""
    import duckdb

    con = store.con
    check_query(con, sql)
    fired = threading.Event()

    def stop() -> None:
        fired.set()
        con.interrupt()

    timer = threading.Timer(timeout, stop)
    started = time.perf_counter()
    timer.start()
    try:
        cur = con.execute(sql)
        names = [d[0] for d in cur.description or []]
        rows = cur.fetchmany(max_rows + 1)
    except (duckdb.Error, RuntimeError) as exc:
        if fired.is_set():
            raise QueryTimeout(
                f"the query ran past the time limit of {timeout:g} s (TABLESIGHT_API_SQL_TIMEOUT)"
            ) from exc
        raise StoreError(_first_line(exc)) from exc
    finally:
        timer.cancel()
    return LimitedResult(names, rows[:max_rows], len(rows) > max_rows, time.perf_counter() - started)
