"""Capability resolution at a trait (docs/transform.md#resolving-a-traits-properties).

A ClusterProfile binding supplies platform defaults for a trait's properties. Before a trait's
handler runs (or its lowering rule lowers it), the engine picks the binding, refuses authored
platform-reserved keys and merges: a deep copy of the rendering with every authored top-level
key replacing the rendering's value (docs/transform.md#resolving-a-traits-properties).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from oam_operator.oam.document.document import CapabilityBinding, Trait
from oam_operator.oam.document.schema import check_platform_reserved
from oam_operator.oam.engine.handlers import Schema
from oam_operator.oam.errors import CAPABILITY_NOT_FOUND, CapabilityError, OamError, TransformError
from oam_operator.oam.formatting.gofmt import go_quote


def capability_key(trait: Trait) -> str:
    """``<type>.<scope>`` for a non-empty string ``scope``, else ``<type>``."""
    scope = trait.properties.get("scope")
    return f"{trait.type}.{scope}" if isinstance(scope, str) and scope else trait.type


def resolve_trait(
    trait: Trait,
    component: str,
    schema: Schema,
    required: bool,
    capabilities: Mapping[str, CapabilityBinding],
    consumed: set[str],
) -> Trait:
    """The trait with its capability rendering merged under the authored properties."""
    context = f"component {go_quote(component)} trait {go_quote(trait.type)}"
    key = capability_key(trait)
    matched = key if key in capabilities else (trait.type if trait.type in capabilities else None)
    if matched is None and required:
        raise TransformError(
            context, CapabilityError(f"capability {go_quote(key)} not found in ClusterProfile: {CAPABILITY_NOT_FOUND}")
        )
    try:
        check_platform_reserved(schema, trait.properties)
    except OamError as exc:
        raise TransformError(context, exc) from exc
    if matched is None:
        return Trait(trait.type, dict(trait.properties), trait.sealed)
    merged = copy.deepcopy(capabilities[matched].rendering)
    merged.update(trait.properties)
    consumed.add(matched)
    return Trait(trait.type, merged, trait.sealed)
