"""The ``prune-protection`` trait (docs/transform.md#access-and-security): keep the component's objects when they leave.

It marks every object of the component's own application — and a generated source only this
component uses — with ``kustomize.toolkit.fluxcd.io/prune: disabled``, which the reconciler
(like Flux) treats as "never prune". Objects of the component's traits are not marked: they
are the trait's, not the component's. A shared generated source is not marked either, since
other components own it too.

Decision where the spec is silent: an existing value of the annotation is replaced.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.shared.trait_kit import decorate
from oam_operator.oam.document.document import Trait
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema, TraitOutput
from oam_operator.oam.engine.registry import trait
from oam_operator.oam.engine.tree import TreeApplication

TYPE = "prune-protection"
ANNOTATION = "kustomize.toolkit.fluxcd.io/prune"
VALUE = "disabled"


def protect(objects: list[Object]) -> None:
    for obj in objects:
        meta = obj.get("metadata")
        if meta is None:
            meta = obj["metadata"] = {}
        if not isinstance(meta, dict):
            continue
        annotations: Any = meta.get("annotations")
        if not isinstance(annotations, dict):
            annotations = meta["annotations"] = {}
        annotations[ANNOTATION] = VALUE


@trait(TYPE)
class PruneProtectionTrait(BuiltinType):
    def property_schema(self) -> Schema:
        return {}

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None:
        decorate(app, protect)
        for source in out.sources:
            decorate(source, protect)
