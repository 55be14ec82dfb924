"""The ``cilium-networkpolicy`` trait (docs/transform.md#network-policies): a CiliumNetworkPolicy as written.

Cilium's rule language is large and versioned with Cilium itself; the trait passes rules
through unchecked (kurel checks them against Cilium's Go types) and does not default the
endpoint selector from the component, so the author states exactly which endpoints it covers.

Decisions where the spec is silent: an empty ``name`` counts as missing; ``ingress``/``egress``
that is not a list is ``'<key>' must be an array``, an ``endpointSelector`` that is not a
mapping ``'endpointSelector' must be a map``; an empty rule list counts as specified and is
omitted from the object.
"""

from __future__ import annotations

import copy
from typing import Any

from oam_operator.oam.catalog.shared.trait_kit import FixedObjects, metadata, refuse_rendering_keys
from oam_operator.oam.document.document import Trait
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Object, Schema, TraitOutput
from oam_operator.oam.engine.registry import trait
from oam_operator.oam.engine.tree import TreeApplication
from oam_operator.oam.errors import ValidationError

TYPE = "cilium-networkpolicy"


def _rules(direction: str) -> PropertySchema:
    return PropertySchema(
        type="array",
        description=f"Cilium {direction} rules, passed through as written.",
        items=PropertySchema(type="object", additional_properties=True, description=f"One {direction} rule."),
    )


@trait(TYPE)
class CiliumNetworkPolicyTrait(BuiltinType):
    def property_schema(self) -> Schema:
        return {
            "name": PropertySchema(type="string", required=True, description="Name of the CiliumNetworkPolicy."),
            "endpointSelector": PropertySchema(
                type="object",
                additional_properties=True,
                description="Endpoints the policy applies to, as written (not defaulted from the component).",
            ),
            "ingress": _rules("ingress"),
            "egress": _rules("egress"),
        }

    def validate_and_apply_defaults(self, rendering: dict[str, Any]) -> dict[str, Any]:
        refuse_rendering_keys(TYPE, rendering, ())
        return rendering

    def apply(self, trait: Trait, app: TreeApplication, out: TraitOutput) -> None:
        props = trait.properties
        name = props.get("name")
        if not isinstance(name, str) or not name:
            raise ValidationError("required property 'name' missing or not a string")
        if props.get("ingress") is None and props.get("egress") is None:
            raise ValidationError("at least one of 'egress' or 'ingress' must be specified")
        spec: Object = {}
        selector = props.get("endpointSelector")
        if selector is not None:
            if not isinstance(selector, dict):
                raise ValidationError("'endpointSelector' must be a map")
            spec["endpointSelector"] = copy.deepcopy(selector)
        for key in ("ingress", "egress"):
            rules = props.get(key)
            if rules is None:
                continue
            if not isinstance(rules, list):
                raise ValidationError(f"'{key}' must be an array")
            if rules:
                spec[key] = copy.deepcopy(rules)
        obj: Object = {
            "apiVersion": "cilium.io/v2",
            "kind": "CiliumNetworkPolicy",
            "metadata": metadata(name, out.namespace),
            "spec": spec,
        }
        out.add(TreeApplication(name, out.namespace, FixedObjects([obj]), app.owner))
