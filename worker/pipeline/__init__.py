"""Document -> pages -> tables -> outputs. Stages (models, OCR) are passed in, never imported here.

`document` runs one input in process, `documents` several side by side; `pages` runs a list of
pages (the queue's page tasks call it too); `table` takes one table from crop to stored record;
`context` reads its caption and notes; `run` holds what a run shares; `stages` is the models' side.
"""

from worker.pipeline.document import extract_document
from worker.pipeline.documents import extract_documents
from worker.pipeline.pages import process_pages
from worker.pipeline.run import PageResult, Run
from worker.pipeline.stages import Predictor, Stages, load_stages

__all__ = [
    "PageResult",
    "Predictor",
    "Run",
    "Stages",
    "extract_document",
    "extract_documents",
    "load_stages",
    "process_pages",
]
