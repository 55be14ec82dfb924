"""A definition as a component or trait handler of the transform (docs/definitions.md#using-a-definition).

The transform calls these exactly as it calls the built-in catalog's handlers, so what a
definition renders goes through the same labels, ordering, checks and tenancy rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oam_operator.common.mergepatch import merge_patch
from oam_operator.oam.catalog.shared.trait_kit import FixedObjects, decorate
from oam_operator.oam.definitions.model import Definition, DefinitionError
from oam_operator.oam.document.document import Component, Trait
from oam_operator.oam.engine.handlers import ContractMetadata, Object, Schema, TraitOutput
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import GenerationError, OamError
from oam_operator.oam.formatting.gofmt import go_quote

if TYPE_CHECKING:
    from oam_operator.oam.engine.transformer import TransformContext

FAMILY = "definition"


def definition_contract(definition: Definition) -> ContractMetadata:
    """Its family is ``definition``, its version the definition's (``schema`` prints it)."""
    return ContractMetadata(family=FAMILY, version=definition.version)


class DefinitionComponentHandler:
    """A ComponentDefinition as a component handler for ``type`` (or ``type@version``)."""

    def __init__(self, type_ref: str, definition: Definition) -> None:
        self.type_ref = type_ref
        self.definition = definition

    def can_handle(self, component_type: str) -> bool:
        return component_type == self.type_ref

    def property_schema(self) -> Schema:
        return dict(self.definition.parameters)

    def contract(self) -> ContractMetadata:
        return definition_contract(self.definition)

    def build(self, component: Component, namespace: str, ctx: TransformContext) -> RenderedComponent:
        context = {"componentName": component.name, "namespace": namespace}
        try:
            objects = self.definition.render(component.properties, context, "properties")
        except OamError as exc:
            raise DefinitionError(f"definition {go_quote(self.definition.reference)}: {exc.message}") from None
        return RenderedComponent([_with_namespace(o, namespace) for o in objects])


class RenderedComponent:
    """A definition's component objects, rendered when the component is built."""

    def __init__(self, objects: list[Object]) -> None:
        self.objects = objects

    def generate(self, app: TreeApplication) -> list[Object]:
        return [dict(o) for o in self.objects]


class DefinitionTraitHandler:
    """A TraitDefinition as a trait handler: its objects follow the component's, its patches
    merge into the component's objects of their apiVersion and kind."""

    def __init__(self, type_ref: str, definition: Definition) -> None:
        self.type_ref = type_ref
        self.definition = definition

    def can_handle(self, trait_type: str) -> bool:
        return trait_type == self.type_ref

    def property_schema(self) -> Schema:
        return dict(self.definition.parameters)

    def contract(self) -> ContractMetadata:
        return definition_contract(self.definition)

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None:
        properties = {k: v for k, v in trait.properties.items() if k != "scope"}
        context = {"componentName": out.component, "namespace": out.namespace}
        reference = go_quote(self.definition.reference)
        try:
            objects = self.definition.render(properties, context, "properties")
            patches = self.definition.render_patches(properties, context, "properties")
        except OamError as exc:
            raise DefinitionError(f"definition {reference}: {exc.message}") from None
        if objects:
            rendered = [_with_namespace(o, out.namespace) for o in objects]
            out.add(TreeApplication(f"{out.component}-{self.definition.type}", out.namespace, FixedObjects(rendered),
                                    app.owner))
        if patches:
            decorate(app, _patcher(patches, f"component {go_quote(out.component)}: definition {reference}"))


def _patcher(patches: list[tuple[str, str, Any]], context: str) -> Any:
    def decoration(objects: list[Object]) -> None:
        for api_version, kind, patch in patches:
            matched = [i for i, o in enumerate(objects) if o.get("apiVersion") == api_version and o.get("kind") == kind]
            if not matched:
                raise GenerationError(f"{context}: the component has no {api_version} {kind} to patch")
            for i in matched:
                objects[i] = merge_patch(objects[i], patch)

    return decoration


def _with_namespace(obj: Object, namespace: str) -> Object:
    """A rendered object without ``metadata.namespace`` is placed in the Application's namespace;
    one that names another namespace keeps it, for the tenancy checks to judge."""
    metadata = obj.setdefault("metadata", {})
    if isinstance(metadata, dict) and "namespace" not in metadata:
        metadata["namespace"] = namespace
    return obj
