"""Shared pieces of the CRD models: names, the base model, timestamps, object metadata.

Every model reads and writes the Kubernetes JSON spelling (camelCase aliases) and accepts the
Python names too. Models ignore unknown fields: the API server prunes them from stored objects
anyway, and a reader must not break on a status written by a newer operator.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PlainSerializer
from pydantic.alias_generators import to_camel

__all__ = [
    "API_VERSION",
    "GROUP",
    "VERSION",
    "ApiModel",
    "ObjectMeta",
    "Timestamp",
    "crd_default",
    "format_timestamp",
]

GROUP = "oam-operator.dev"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"

API_VERSION_DESCRIPTION = (
    "APIVersion defines the versioned schema of this representation of an object. Servers should convert "
    "recognized schemas to the latest internal value, and may reject unrecognized values. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
)
KIND_DESCRIPTION = (
    "Kind is a string value representing the REST resource this object represents. Servers may infer this "
    "from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)

# Key under which a field's CRD default travels through the JSON schema (api/openapi.py turns it
# into ``default``). Pydantic's own ``default`` is not used: fields whose default is an operator
# setting must not get a CRD default (docs/operator.md#spec-fields), and status fields get none at all.
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
    """Base of every CRD model: camelCase JSON names, Python names accepted, unknown fields ignored."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def to_json(self) -> dict[str, Any]:
        """The Kubernetes JSON form: camelCase names, unset optional fields omitted."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class ObjectMeta(BaseModel):
    """The part of ``metadata`` the operator reads; every other key is kept as it is."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    generation: int | None = None
    resource_version: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    finalizers: list[str] | None = None
    creation_timestamp: Timestamp | None = None
    deletion_timestamp: Timestamp | None = None


def metadata_field() -> Any:
    """The ``metadata`` field of a top-level kind (its schema is the API server's, see api/openapi.py)."""
    return Field(
        default_factory=ObjectMeta,
        description="Standard object's metadata. More info: "
        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
    )
