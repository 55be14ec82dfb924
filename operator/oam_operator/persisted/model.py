"""The JSON model base and the timestamp type of every persisted object.

Every model reads and writes the Kubernetes JSON spelling (camelCase aliases) and accepts the
Python names too. Models ignore unknown fields: the API server prunes them from stored objects
anyway, and a reader must not break on a status written by a newer operator.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, PlainSerializer
from pydantic.alias_generators import to_camel

__all__ = ["CRD_DEFAULT_KEY", "ApiModel", "Timestamp", "crd_default", "format_timestamp"]

# Key under which a field's CRD default travels through the JSON schema (api/openapi.py turns it
# into ``default``). Pydantic's own ``default`` is not used: fields whose default is an operator
# setting must not get a CRD default, and status fields get none at all.
CRD_DEFAULT_KEY = "x-oam-crd-default"


def crd_default(value: Any) -> dict[str, Any]:
    """``json_schema_extra`` that makes ``value`` the field's default in the generated CRD."""
    return {CRD_DEFAULT_KEY: value}


def format_timestamp(value: datetime) -> str:
    """RFC 3339, UTC, second precision, ``Z``: the spelling of ``metav1.Time`` and of the inventory."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _as_utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# Read leniently (fractions, offsets), held in UTC, written canonically.
Timestamp = Annotated[
    datetime,
    AfterValidator(_as_utc),
    PlainSerializer(format_timestamp, return_type=str, when_used="json"),
]


class ApiModel(BaseModel):
    """Base of every persisted model: camelCase JSON names, Python names accepted, unknown fields ignored."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def to_json(self) -> dict[str, Any]:
        """The Kubernetes JSON form: camelCase names, unset optional fields omitted."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
