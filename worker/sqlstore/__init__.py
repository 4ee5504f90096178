"""The SQL store: read-only DuckDB views over the Parquet exports of stored documents."""

from worker.sqlstore.catalog import SqlStore, StoreError, open_sql_store
from worker.sqlstore.guard import QueryRefused, check_query

__all__ = ["QueryRefused", "SqlStore", "StoreError", "check_query", "open_sql_store"]
