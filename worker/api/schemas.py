"""The HTTP API's response bodies as models, derived from the output contract, so `/docs`
(openapi.json) shows every response's schema. Routes return plain dicts; FastAPI checks them
against these (`response_model_exclude_unset` keeps a body's keys exactly as built). The bodies
of the job-control, data and review routes (and `Chunks`, `JobView`) live in `worker.api.models`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from worker.api.models import JobView
from worker.contract import Manifest
from worker.contract.vision import ReadSummary

# Routes that answer with a stored record or a view of one: only keys the body has are sent.
AS_BUILT: dict[str, Any] = {"response_model_exclude_unset": True}


class Health(BaseModel):
    status: str = Field(description="`ok` while the process answers")


class Readiness(BaseModel):
    status: str = Field(description="`ready` or `not ready` (then 503)")
    checks: dict[str, str] = Field(description="broker, job_state, store, workers: `ok` or what is wrong")
    queues: dict[str, Any] = Field(description="each queue and the workers that consume it")


class JobCreated(BaseModel):
    job_id: str
    doc_id: str
    source: str
    status: str
    progress: JobView
    links: dict[str, str]


class JobsCreated(BaseModel):
    jobs: list[JobCreated]


class ReadView(ReadSummary):
    """A stored vision read as a client sees it: no raw answer, the checked HTML inline."""

    html: str | None = None


class ReadQueued(BaseModel):
    read_id: str
    status: str
    links: dict[str, str]


class ReadStarted(BaseModel):
    """200: the stored read (`stored: true`, `read`); 202: a read id to poll (`read_id`, `links`)."""

    stored: bool | None = None
    read: ReadView | None = None
    read_id: str | None = None
    status: str | None = None
    links: dict[str, str] | None = None


class ReadPoll(ReadView):
    read_id: str


# the manifest a document or a finished job answers with
DocumentManifest = Manifest

TABLE_FILE_CONTENT: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "the file's bytes",
        "content": {
            "text/html": {"schema": {"type": "string"}},
            "image/png": {"schema": {"type": "string", "format": "binary"}},
            "application/json": {"schema": {"type": "object", "description": "the table record (TableRecord)"}},
            "text/markdown": {"schema": {"type": "string"}},
        },
    }
}
