"""Ids from URLs are checked against their exact shapes before they touch Redis or storage, so
nothing a client sends can name a key outside the document it asks for."""

from __future__ import annotations

import re

from worker.api.errors import ApiError
from worker.queue.state import valid_job_id

DOC_ID = re.compile(r"^[0-9a-f]{16}$")  # worker.outputs.doc_id_for: 16 hex digits of the sha256
TABLE_ID = re.compile(r"^p[0-9]{4}-t[0-9]{2}$")  # worker.outputs.table_id: pNNNN-tKK
READ_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")  # a Celery task id


def _shown(value: str) -> str:
    return repr(value[:40])


def doc_id(value: str) -> str:
    if not DOC_ID.match(value):
        raise ApiError(404, f"{_shown(value)} is not a document id (16 lowercase hex digits)")
    return value


def table_id(value: str) -> str:
    if not TABLE_ID.match(value):
        raise ApiError(404, f"{_shown(value)} is not a table id (pNNNN-tKK, e.g. p0001-t01)")
    return value


def job_id(value: str) -> str:
    if not valid_job_id(value):
        raise ApiError(404, f"{_shown(value)} is not a job id (32 lowercase hex digits)")
    return value


def read_id(value: str) -> str:
    if not READ_ID.match(value):
        raise ApiError(404, f"{_shown(value)} is not a read id")
    return value
