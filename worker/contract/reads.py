"""Reading stored records back through their contract models.

Every reader of a stored record goes through here, so a file that does not follow the
contract fails where it is read (`ContractError`, naming the key) instead of surfacing later
as a missing key. A missing file is still `KeyError`, as `Storage.get_json` raises it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from pydantic import ValidationError

from worker.contract.base import Contract
from worker.contract.manifest import Manifest, PageRecord
from worker.contract.table import TableRecord
from worker.contract.vision import VisionRead
from worker.errors import TablesightError

if TYPE_CHECKING:
    from worker.storage.base import Storage

C = TypeVar("C", bound=Contract)


class ContractError(TablesightError, ValueError):
    """A stored record that does not follow the output contract (corrupt, foreign or newer)."""


def read_record(storage: Storage, key: str, model: type[C]) -> C:
    """The record at `key` parsed as `model` (KeyError if absent, ContractError if it does not parse)."""
    raw = storage.get_json(key)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ContractError(
            f"{key} does not follow the output contract ({model.__name__}): {where}: {first['msg']}"
        ) from None


def read_manifest(storage: Storage, key: str) -> Manifest:
    return read_record(storage, key, Manifest)


def read_page(storage: Storage, key: str) -> PageRecord:
    return read_record(storage, key, PageRecord)


def read_table(storage: Storage, key: str) -> TableRecord:
    return read_record(storage, key, TableRecord)


def read_vision(storage: Storage, key: str) -> VisionRead:
    return read_record(storage, key, VisionRead)
