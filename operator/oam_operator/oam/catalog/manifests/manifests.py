"""The ``manifests`` component (docs/transform.md#raw-objects-passthrough-crd-and-manifests): arbitrary objects from
inline YAML or a URL.

Namespaced objects without a namespace get the transform namespace; the scope of a kind comes
from a built-in table, else a CRD in the same source, else ``scopeOverrides``. An object whose
scope is unknown must carry its namespace: guessing would put it in the wrong place.

Decision recorded here: a ``scopeOverrides`` entry matches objects by API group and kind (any
version).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oam_operator.oam.catalog.manifests.manifest_source import (
    SourceError,
    object_label,
    parse_documents,
    parse_source,
    read_documents,
    source_schema,
)
from oam_operator.oam.document.document import Component
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema, UrlReader
from oam_operator.oam.engine.labels import api_group
from oam_operator.oam.engine.registry import component
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import GenerationError, OamError, ValidationError
from oam_operator.oam.formatting.choices import unknown_at
from oam_operator.oam.formatting.gofmt import go_quote

if TYPE_CHECKING:
    from oam_operator.oam.engine.transformer import TransformContext

TYPE = "manifests"
NAMESPACED = "Namespaced"
CLUSTER = "Cluster"

_SCOPES: dict[tuple[str, str], str] = {
    **{
        ("", k): NAMESPACED
        for k in ("ConfigMap", "Secret", "Service", "ServiceAccount", "PersistentVolumeClaim", "Pod")
    },
    **{("apps", k): NAMESPACED for k in ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet")},
    **{("batch", k): NAMESPACED for k in ("Job", "CronJob")},
    ("networking.k8s.io", "Ingress"): NAMESPACED,
    ("networking.k8s.io", "NetworkPolicy"): NAMESPACED,
    ("rbac.authorization.k8s.io", "Role"): NAMESPACED,
    ("rbac.authorization.k8s.io", "RoleBinding"): NAMESPACED,
    **{("", k): CLUSTER for k in ("Namespace", "Node", "PersistentVolume")},
    ("rbac.authorization.k8s.io", "ClusterRole"): CLUSTER,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): CLUSTER,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): CLUSTER,
    ("storage.k8s.io", "StorageClass"): CLUSTER,
    ("scheduling.k8s.io", "PriorityClass"): CLUSTER,
    ("networking.k8s.io", "IngressClass"): CLUSTER,
    ("apiregistration.k8s.io", "APIService"): CLUSTER,
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): CLUSTER,
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): CLUSTER,
}


def parse_scope_overrides(value: Any) -> dict[tuple[str, str], str]:
    """The overrides by (group, kind); the caller passes ``[]`` when absent (a written null is refused)."""
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise SourceError("scopeOverrides must be a list of {apiVersion, kind, scope} objects")
    overrides: dict[tuple[str, str], str] = {}
    for i, item in enumerate(value):
        api_version, kind, scope = item.get("apiVersion"), item.get("kind"), item.get("scope")
        if not isinstance(api_version, str) or not api_version or not isinstance(kind, str) or not kind:
            raise SourceError(f"scopeOverrides[{i}]: apiVersion and kind are required")
        if scope not in (CLUSTER, NAMESPACED):
            shown = scope if isinstance(scope, str) else ("" if scope is None else str(scope))
            raise SourceError(unknown_at(f"scopeOverrides[{i}].scope", shown, (CLUSTER, NAMESPACED)))
        overrides[(api_group(api_version), kind)] = str(scope)
    return overrides


def place(objects: list[Object], namespace: str, overrides: dict[tuple[str, str], str]) -> list[Object]:
    """Give namespaced objects without a namespace the transform namespace; nothing else is added
    (docs/transform.md#raw-objects-passthrough-crd-and-manifests: kurel's typed round trip gives a
    Namespace ``spec: {}``, which the objects here do not get)."""
    from_crds: dict[tuple[str, str], str] = {}
    for obj in objects:
        if api_group(obj.get("apiVersion")) == "apiextensions.k8s.io" and obj.get("kind") == "CustomResourceDefinition":
            spec = obj.get("spec")
            spec = spec if isinstance(spec, dict) else {}
            names = spec.get("names")
            names = names if isinstance(names, dict) else {}
            group, kind = spec.get("group"), names.get("kind")
            if isinstance(group, str) and isinstance(kind, str):
                from_crds[(group, kind)] = str(spec.get("scope") or NAMESPACED)
    for obj in objects:
        key = (api_group(obj.get("apiVersion")), str(obj.get("kind")))
        scope = _SCOPES.get(key) or from_crds.get(key) or overrides.get(key)
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = obj["metadata"] = {}
        if scope == CLUSTER:
            continue
        if scope == NAMESPACED:
            if not meta.get("namespace"):
                meta["namespace"] = namespace
            continue
        if not meta.get("namespace"):
            raise SourceError(
                f"object {object_label(obj)} has unknown scope and no metadata.namespace; set an explicit namespace "
                "or a scopeOverrides entry (no CRD defining it is present in this source)"
            )
    return objects


class ManifestsConfig:
    def __init__(
        self,
        prefix: str,
        objects: list[Object] | None,
        url: str | None,
        namespace: str,
        overrides: dict[tuple[str, str], str],
        reader: UrlReader | None,
    ) -> None:
        self.prefix = prefix
        self.objects = objects
        self.url = url
        self.namespace = namespace
        self.overrides = overrides
        self.reader = reader

    def generate(self, app: TreeApplication) -> list[Object]:
        if self.objects is not None:
            return self.objects
        assert self.url is not None
        try:
            return place(read_documents(self.url, self.reader), self.namespace, self.overrides)
        except SourceError as exc:
            raise GenerationError(f"{self.prefix}{exc}") from exc


@component(TYPE)
class ManifestsHandler(BuiltinType):
    def property_schema(self) -> Schema:
        return {
            **source_schema(),
            "scopeOverrides": PropertySchema(
                type="array",
                description="Scopes of kinds neither the built-in table nor a CRD in this source defines.",
                items=PropertySchema(
                    type="object",
                    description="The scope of one kind.",
                    properties={
                        "apiVersion": PropertySchema(
                            type="string", required=True, description="apiVersion of the kind (its group is matched)."
                        ),
                        "kind": PropertySchema(type="string", required=True, description="The kind."),
                        "scope": PropertySchema(
                            type="string",
                            required=True,
                            enum=[CLUSTER, NAMESPACED],
                            description="Whether objects of the kind are cluster-scoped or namespaced.",
                        ),
                    },
                ),
            ),
        }

    def build(self, component: Component, namespace: str, ctx: TransformContext) -> ManifestsConfig:
        prefix = f"manifests component {go_quote(component.name)}: "
        try:
            source = parse_source(component.properties, extra=("scopeOverrides",))
            overrides = parse_scope_overrides(component.properties.get("scopeOverrides", []))
            objects = place(parse_documents(source.inline), namespace, overrides) if source.inline is not None else None
        except (SourceError, OamError) as exc:
            raise ValidationError(f"{prefix}{exc}") from exc
        return ManifestsConfig(prefix, objects, source.url, namespace, overrides, ctx.url_reader)
