"""The ComponentDefinition and TraitDefinition kinds (docs/definitions.md#the-format): a
platform team's own component and trait types.

Only the shape is declared here: what the parameters, objects, patches and tests hold is
read and checked by ``oam/definitions`` (at admission, and when the operator loads one),
so those stay free-form in the schema.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from pydantic.config import JsonDict

from .conditions import Condition
from .healthexpr import HealthExpression
from .meta import API_VERSION, API_VERSION_DESCRIPTION, KIND_DESCRIPTION, ApiModel, ObjectMeta, metadata_field

__all__ = ["ComponentDefinition", "DefinitionSpec", "DefinitionStatus", "DefinitionTest", "TraitDefinition",
           "TraitPatch"]

_FREE: JsonDict = {"x-kubernetes-preserve-unknown-fields": True}


class TraitPatch(ApiModel):
    """A JSON merge patch of the component's objects of one apiVersion and kind."""

    api_version: str = Field(description="apiVersion of the objects patched.")
    kind: str = Field(description="kind of the objects patched.")
    patch: dict[str, Any] = Field(description="The merge patch (RFC 7386); values may hold ${…} CEL.",
                                  json_schema_extra=_FREE)


class DefinitionTest(ApiModel):
    """A test case, run when the definition is admitted: parameters in, objects or an exact error out."""

    name: str = Field(min_length=1, description="Named in the refusal when the case fails.")
    parameters: dict[str, Any] | None = Field(default=None, description="The parameters of the case.",
                                              json_schema_extra=_FREE)
    expect: list[dict[str, Any]] | None = Field(
        default=None, description="The objects expected (then, for a trait, its patches as apiVersion, kind, patch).",
        json_schema_extra={"items": {"type": "object", **_FREE}})
    error: str | None = Field(default=None, description="The exact error expected instead of objects.")


class DefinitionSpec(ApiModel):
    """A type: its name and version, typed parameters, object templates, patches and tests."""

    type: str = Field(min_length=1, max_length=63, pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
                      description="The type name Applications use (`type: <type>` or `type: <type>@<version>`).")
    version: str = Field(pattern="^v[1-9][0-9]*$", description="v1, v2, …; metadata.name is <type>.<version>.")
    description: str | None = Field(default=None, description="What the type is for (shown by `schema`).")
    parameters: dict[str, Any] | None = Field(
        default=None, description="Parameter name to schema: type, description, default, enum, required, items, "
                                  "properties.", json_schema_extra=_FREE)
    objects: list[dict[str, Any]] | None = Field(
        default=None, description="Object templates; string values may hold ${…} CEL.",
        json_schema_extra={"items": {"type": "object", **_FREE}})
    patches: list[TraitPatch] | None = Field(default=None, description="A TraitDefinition's merge patches.")
    tests: list[DefinitionTest] | None = Field(default=None, description="Test cases run at admission.")
    health: list[HealthExpression] | None = Field(
        default=None, max_length=100,
        description="Health by expression for the kinds this type renders (docs/health.md); an Application's own "
                    "health-checks policy overrides it.")


class DefinitionStatus(ApiModel):
    conditions: list[Condition] | None = Field(
        default=None, description="Condition Ready: True when the operator loaded the definition, else False with "
                                  "the exact reason it was refused.")


class ComponentDefinition(ApiModel):
    """A component type defined by a platform team."""

    api_version: str = Field(default=API_VERSION, description=API_VERSION_DESCRIPTION)
    kind: str = Field(default="ComponentDefinition", description=KIND_DESCRIPTION)
    metadata: ObjectMeta = metadata_field()
    spec: DefinitionSpec = Field(description="The type.")
    status: DefinitionStatus | None = Field(default=None, description="Written by the operator.")


class TraitDefinition(ApiModel):
    """A trait type defined by a platform team."""

    api_version: str = Field(default=API_VERSION, description=API_VERSION_DESCRIPTION)
    kind: str = Field(default="TraitDefinition", description=KIND_DESCRIPTION)
    metadata: ObjectMeta = metadata_field()
    spec: DefinitionSpec = Field(description="The type.")
    status: DefinitionStatus | None = Field(default=None, description="Written by the operator.")
