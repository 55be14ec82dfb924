"""The ``passthrough`` component (docs/transform.md#raw-objects-passthrough-crd-and-manifests): one object, as written.

For objects no built-in models; the engine only defaults ``metadata.name`` (the component
name) and ``metadata.namespace`` (the transform namespace, unless ``clusterScoped``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oam_operator.common.treecopy import copy_tree
from oam_operator.oam.catalog.shared.static import StaticConfig
from oam_operator.oam.document.document import Component
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Schema
from oam_operator.oam.engine.registry import component
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.gofmt import go_quote

if TYPE_CHECKING:
    from oam_operator.oam.engine.transformer import TransformContext

TYPE = "passthrough"
_ALLOWED = ("object", "clusterScoped")


@component(TYPE)
class PassthroughHandler(BuiltinType):
    def property_schema(self) -> Schema:
        return {
            "object": PropertySchema(
                type="object",
                required=True,
                additional_properties=True,
                description=(
                    "The Kubernetes object to emit, as written; metadata.name defaults to the component name and "
                    "metadata.namespace to the application namespace."
                ),
            ),
            "clusterScoped": PropertySchema(
                type="boolean",
                default=False,
                description="The object is cluster-scoped: no namespace is defaulted and none may be set.",
            ),
        }

    def build(self, component: Component, namespace: str, ctx: TransformContext) -> StaticConfig:
        props = component.properties
        if set(props) <= set(_ALLOWED) and isinstance(props.get("clusterScoped", False), bool | None):
            obj = props.get("object")
            if isinstance(obj, dict) and _valid_object(obj, bool(props.get("clusterScoped"))):
                return StaticConfig([_materialise(obj, component.name, namespace, bool(props.get("clusterScoped")))])
        prefix = f"passthrough component {go_quote(component.name)}: "
        for key in sorted(props):
            if key not in _ALLOWED:
                raise ValidationError(
                    f"{prefix}unsupported property {go_quote(key)} (only 'object' and 'clusterScoped' are allowed)"
                )
        cluster_scoped = props.get("clusterScoped")
        if cluster_scoped is None:
            cluster_scoped = False
        if not isinstance(cluster_scoped, bool):
            raise ValidationError(f"{prefix}'clusterScoped' must be a bool")
        obj = props.get("object")
        if "object" not in props:
            raise ValidationError(f"{prefix}required property 'object' missing")
        if not isinstance(obj, dict):
            raise ValidationError(f"{prefix}'object' must be a map")
        for field_name in ("apiVersion", "kind"):
            value = obj.get(field_name)
            if not isinstance(value, str) or not value:
                raise ValidationError(f"{prefix}object.{field_name} is required and must be a non-empty string")
        meta = obj.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise ValidationError(f"{prefix}object.metadata must be a map")
        if cluster_scoped and meta and meta.get("namespace"):
            raise ValidationError(f"{prefix}object.metadata.namespace must not be set when clusterScoped is true")
        return StaticConfig([_materialise(obj, component.name, namespace, cluster_scoped)])


def _valid_object(obj: dict[str, Any], cluster_scoped: bool) -> bool:
    """The fast path: every check of ``build`` passes (errors take the slow path for their message)."""
    meta = obj.get("metadata")
    return (
        isinstance(obj.get("apiVersion"), str)
        and bool(obj["apiVersion"])
        and isinstance(obj.get("kind"), str)
        and bool(obj["kind"])
        and (meta is None or (isinstance(meta, dict) and not (cluster_scoped and meta.get("namespace"))))
    )


def _materialise(obj: dict[str, Any], name: str, namespace: str, cluster_scoped: bool) -> dict[str, Any]:
    built = copy_tree(obj)
    metadata = built.get("metadata")
    if not isinstance(metadata, dict):
        metadata = built["metadata"] = {}
    if not metadata.get("name"):
        metadata["name"] = name
    if not cluster_scoped and not metadata.get("namespace"):
        metadata["namespace"] = namespace
    return built
