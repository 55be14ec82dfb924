"""Shared pieces of the CRD models: names, the base model, timestamps, object metadata.

Every model reads and writes the Kubernetes JSON spelling (camelCase aliases) and accepts the
Python names too. Models ignore unknown fields: the API server prunes them from stored objects
anyway, and a reader must not break on a status written by a newer operator.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from oam_operator.persisted.model import CRD_DEFAULT_KEY, ApiModel, Timestamp, crd_default, format_timestamp

__all__ = [
    "API_VERSION",
    "CRD_DEFAULT_KEY",
    "GROUP",
    "PLURAL",
    "VERSION",
    "ApiModel",
    "ObjectMeta",
    "Timestamp",
    "application_path",
    "applications_path",
    "crd_default",
    "format_timestamp",
]

GROUP = "oam-operator.dev"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
PLURAL = "applications"


def applications_path(namespace: str | None = None) -> str:
    """The API path of the Applications of ``namespace`` (``None`` or ``""``: of every namespace)."""
    where = f"/namespaces/{namespace}" if namespace else ""
    return f"/apis/{GROUP}/{VERSION}{where}/{PLURAL}"


def application_path(namespace: str, name: str, subresource: str = "") -> str:
    """The API path of one Application, or of its ``subresource`` (``status``)."""
    path = f"{applications_path(namespace)}/{name}"
    return f"{path}/{subresource}" if subresource else path

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
