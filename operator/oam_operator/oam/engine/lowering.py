"""The lowering engine (docs/transform.md#what-a-lowering-rule-is).

Lowering rules rewrite higher-level authored elements into terminal ones before handlers run:
components claimed by a component rule are replaced in place by what the rule emits, then
traits claimed by a trait rule likewise, round after round until nothing changes. The input
document is never modified.

Decision recorded here: two components of the lowered document with one name are refused
(``component "<c>": lowering rule emitted duplicate component name "<n>"``); the spec does not
name that case and the ordering needs unique names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from oam_operator.oam.document.document import Application, CapabilityBinding, Component, Trait
from oam_operator.oam.document.schema import check_object
from oam_operator.oam.engine.capabilities import resolve_trait
from oam_operator.oam.engine.handlers import (
    ComponentLoweringRule,
    LoweringContext,
    Schema,
    TraitLoweringRule,
    capability_required,
    schema_of,
)
from oam_operator.oam.errors import LOWERING_MAX_DEPTH, OamError, PropertyError, TransformError
from oam_operator.oam.formatting.gofmt import go_quote

MAX_ROUNDS = 9


@dataclass
class LoweringRules:
    components: Mapping[str, ComponentLoweringRule]
    traits: Mapping[str, TraitLoweringRule]
    #: the schema of the handler that will receive an emitted trait (None: no handler)
    trait_schema: Callable[[str], Schema | None]
    capabilities: Mapping[str, CapabilityBinding] = field(default_factory=dict)


def _copy(component: Component) -> Component:
    return Component(
        name=component.name,
        type=component.type,
        properties=component.properties,
        traits=list(component.traits),
        annotations=dict(component.annotations),
        owner=component.owner,
        rule_order=list(component.rule_order),
    )


def lower_document(app: Application, rules: LoweringRules, consumed: set[str]) -> list[Component]:
    """The components of the lowered document, in document order."""
    components = [_copy(c) for c in app.components]
    if not rules.components and not rules.traits:
        return components
    doc = app.metadata.name
    for round_number in range(1, MAX_ROUNDS + 2):
        changed = False
        lowered: list[Component] = []
        names = {c.name for c in components}
        for comp in components:
            rule = rules.components.get(comp.type)
            if rule is None:
                lowered.append(comp)
                continue
            _check_depth(round_number, comp, doc)
            emitted = _lower_component(rule, comp, app, rules.capabilities)
            names.discard(comp.name)
            for new in emitted:
                if new.name in names:
                    raise TransformError(
                        f"component {go_quote(comp.name)}: lowering rule emitted duplicate component name "
                        f"{go_quote(new.name)}"
                    )
                names.add(new.name)
            lowered.extend(emitted)
            changed = True
        for comp in lowered:
            traits: list[Trait] = []
            for trait in comp.traits:
                trait_rule = rules.traits.get(trait.type)
                if trait_rule is None:
                    traits.append(trait)
                    continue
                _check_depth(round_number, comp, doc)
                traits.extend(_lower_trait(trait_rule, trait, comp, app, rules, consumed))
                changed = True
            comp.traits = traits
        components = lowered
        if not changed:
            break
    return components


def _check_depth(round_number: int, comp: Component, doc: str) -> None:
    if round_number > MAX_ROUNDS:
        raise TransformError(
            f"lowering component {go_quote(comp.name)} in document {go_quote(doc)}: {LOWERING_MAX_DEPTH}"
        )


def _lower_component(
    rule: ComponentLoweringRule, comp: Component, app: Application, caps: Mapping[str, CapabilityBinding]
) -> list[Component]:
    context = f"component {go_quote(comp.name)}"
    try:
        emitted = list(rule.lower_component(comp, LoweringContext(app, comp, dict(caps))))
    except OamError as exc:
        raise TransformError(context, exc) from exc
    if not emitted:
        raise TransformError(f"{context}: lowering rule emitted nothing")
    for new in emitted:
        if new.owner is None:
            new.owner = comp.owner_name
        new.order_after(*comp.rule_order)
    return emitted


def _lower_trait(
    rule: TraitLoweringRule,
    trait: Trait,
    comp: Component,
    app: Application,
    rules: LoweringRules,
    consumed: set[str],
) -> list[Trait]:
    context = f"component {go_quote(comp.name)} trait {go_quote(trait.type)}"
    if not trait.sealed:
        trait = resolve_trait(
            trait, comp.name, schema_of(rule), capability_required(rule), rules.capabilities, consumed
        )
    try:
        emitted = list(rule.lower_trait(trait, LoweringContext(app, comp, dict(rules.capabilities))))
    except OamError as exc:
        raise TransformError(context, exc) from exc
    if not emitted:
        raise TransformError(f"{context}: lowering rule emitted nothing")
    for new in emitted:
        new.sealed = True
        schema = rules.trait_schema(new.type)
        if schema is None:
            continue
        try:
            check_object(schema, False, new.properties, f"emitted trait {go_quote(new.type)}: properties", True)
        except PropertyError as exc:
            raise TransformError(context, exc) from exc
    return emitted
