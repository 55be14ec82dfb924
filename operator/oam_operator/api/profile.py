"""The ClusterProfile kind (docs/operator.md#the-clusterprofile-resource): cluster-scoped platform defaults for trait
properties.

Only the shape is declared; the transform validates the contents of each capability's
``rendering`` (and the capability keys), so those stay free-form here.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from .meta import API_VERSION, API_VERSION_DESCRIPTION, KIND_DESCRIPTION, ApiModel, ObjectMeta, metadata_field

__all__ = ["Capability", "ClusterProfile", "ClusterProfileSpec", "GitopsEngine"]


class GitopsEngine(StrEnum):
    """GitOps engine whose sources the transform generates."""

    FLUXCD = "fluxcd"


class Capability(ApiModel):
    """Platform defaults for one trait type (or one scope of it)."""

    rendering: dict[str, Any] = Field(
        default_factory=dict,
        description="Default trait properties, validated by the transform against the trait type.",
        json_schema_extra={"x-kubernetes-preserve-unknown-fields": True},
    )


class ClusterProfileSpec(ApiModel):
    """Platform defaults the transform applies to the Applications that use this profile."""

    gitops_engine: GitopsEngine | None = Field(default=None, description="GitOps engine; fluxcd is the only one.")
    capabilities: dict[str, Capability] = Field(
        default_factory=dict,
        description="Defaults per capability, keyed by <traitType> or <traitType>.<scope>, "
        "for example ingress or certificate.public.",
    )


class ClusterProfile(ApiModel):
    """Cluster-wide platform defaults for the traits of Applications."""

    api_version: str = Field(default=API_VERSION, description=API_VERSION_DESCRIPTION)
    kind: str = Field(default="ClusterProfile", description=KIND_DESCRIPTION)
    metadata: ObjectMeta = metadata_field()
    spec: ClusterProfileSpec = Field(default_factory=ClusterProfileSpec, description="Defaults of the profile.")
