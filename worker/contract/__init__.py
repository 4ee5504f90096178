"""The output contract as types: what tablesight writes to storage and what readers may rely on.

Writers build these models and dump them; readers (the queue finaliser, `chunks`, the vision
read, the API) parse them, so a misspelt key fails loudly instead of reading as missing.
`tablesight schema` writes their JSON Schemas to docs/schema/. The on-disk format is the one
earlier releases wrote; `schema_version` says which contract a file follows (files written
before the field existed parse as version 1, which they are).
"""

from worker.contract.base import SCHEMA_VERSION, Contract
from worker.contract.enums import DocStatus, JobPhase, PageState, TablesMode, TextSource
from worker.contract.job import JobStatus, PageProgress
from worker.contract.manifest import ErrorEntry, LogicalTableEntry, Manifest, ModelRef, PageRecord, TableEntry
from worker.contract.table import (
    CellRecord,
    ContextRecord,
    FlagRecord,
    GridRecord,
    ReplayPayload,
    Serialisations,
    TableRecord,
)
from worker.contract.vision import VisionRead

__all__ = [
    "SCHEMA_VERSION",
    "CellRecord",
    "ContextRecord",
    "Contract",
    "DocStatus",
    "ErrorEntry",
    "FlagRecord",
    "GridRecord",
    "JobPhase",
    "JobStatus",
    "LogicalTableEntry",
    "Manifest",
    "ModelRef",
    "PageProgress",
    "PageRecord",
    "PageState",
    "ReplayPayload",
    "Serialisations",
    "TableEntry",
    "TableRecord",
    "TablesMode",
    "TextSource",
    "VisionRead",
]
