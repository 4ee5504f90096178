"""The base of every contract model: unknown keys are an error, output is plain JSON."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

SCHEMA_VERSION = 1

# A coordinate or measure as written: ints stay ints and floats stay floats, so dumping a
# parsed file gives back the same bytes.
Number = int | float


class Contract(BaseModel):
    """Strict about keys (a typo is caught where it is made), plain about output.

    Keys named in `OMIT_WHEN_NONE` are left out rather than written as null: they are added
    to a file only when they apply (a table's `continuation`, a manifest's `job_id`).
    """

    model_config = ConfigDict(extra="forbid", use_enum_values=True, validate_by_name=True, validate_by_alias=True)
    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        for key in self.OMIT_WHEN_NONE:
            if out.get(key, 0) is None:
                del out[key]
        return out

    def dump(self) -> dict[str, Any]:
        """The JSON object stored on disk, keys in declaration order."""
        return self.model_dump(mode="json", by_alias=True)
