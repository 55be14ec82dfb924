"""The ``crd`` component (docs/transform.md#raw-objects-passthrough-crd-and-manifests): CustomResourceDefinitions from
inline YAML or a URL.

Only CRDs: mixing other kinds in would hide ordering mistakes (a CRD must exist before its
resources), which is what the ``manifests`` component and the tiers are for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oam_operator.oam.catalog.manifests.manifest_source import (
    SourceError,
    object_label,
    parse_documents,
    parse_source,
    read_documents,
    source_schema,
)
from oam_operator.oam.document.document import Component
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema, UrlReader
from oam_operator.oam.engine.labels import api_group
from oam_operator.oam.engine.registry import component
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import GenerationError, OamError, ValidationError
from oam_operator.oam.formatting.gofmt import go_quote

if TYPE_CHECKING:
    from oam_operator.oam.engine.transformer import TransformContext

TYPE = "crd"


def check_crds(objects: list[Object]) -> list[Object]:
    if not objects:
        raise SourceError("source resolved to no manifests")
    for obj in objects:
        if api_group(obj.get("apiVersion")) != "apiextensions.k8s.io" or obj.get("kind") != "CustomResourceDefinition":
            raise SourceError(
                f"object {object_label(obj)} is not a CustomResourceDefinition (the crd component emits only CRDs; "
                "use the manifests component for other kinds)"
            )
    return objects


class CrdConfig:
    def __init__(self, prefix: str, objects: list[Object] | None, url: str | None, reader: UrlReader | None) -> None:
        self.prefix = prefix
        self.objects = objects
        self.url = url
        self.reader = reader

    def generate(self, app: TreeApplication) -> list[Object]:
        if self.objects is not None:
            return self.objects
        assert self.url is not None
        try:
            return check_crds(read_documents(self.url, self.reader))
        except SourceError as exc:
            raise GenerationError(f"{self.prefix}{exc}") from exc


@component(TYPE)
class CrdHandler(BuiltinType):
    def property_schema(self) -> Schema:
        return source_schema()

    def build(self, component: Component, namespace: str, ctx: TransformContext) -> CrdConfig:
        prefix = f"crd component {go_quote(component.name)}: "
        try:
            source = parse_source(component.properties)
            objects = check_crds(parse_documents(source.inline)) if source.inline is not None else None
        except (SourceError, OamError) as exc:
            raise ValidationError(f"{prefix}{exc}") from exc
        return CrdConfig(prefix, objects, source.url, ctx.url_reader)
