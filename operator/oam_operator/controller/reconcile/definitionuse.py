"""Which definitions an Application uses (docs/definitions.md#changing-a-definition): the types
its spec names, so a changed definition wakes the Applications naming its type, and the
digests of the definitions they resolve to, part of the component digest."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oam_operator.oam.definitions.catalog import DefinitionCatalog, split_reference
from oam_operator.oam.definitions.model import COMPONENT_KIND, TRAIT_KIND


def spec_types(spec: Mapping[str, Any]) -> frozenset[tuple[str, str]]:
    """(kind, type reference) of every component and trait of ``spec``."""
    found: set[tuple[str, str]] = set()
    for component in spec.get("components") or []:
        if not isinstance(component, Mapping):
            continue
        found.add((COMPONENT_KIND, str(component.get("type") or "")))
        for trait in component.get("traits") or []:
            if isinstance(trait, Mapping):
                found.add((TRAIT_KIND, str(trait.get("type") or "")))
    return frozenset(found)


def names_type(types: frozenset[tuple[str, str]], kind: str, type_name: str) -> bool:
    """Whether ``types`` names ``type_name`` of ``kind``, pinned to a version or not."""
    return any(k == kind and split_reference(ref)[0] == type_name for k, ref in types)


def used_definitions(catalog: object, spec: Mapping[str, Any]) -> dict[str, str]:
    """The digests of the definitions ``spec`` uses in ``catalog`` (the transformer's, if any)."""
    return catalog.used(sorted(spec_types(spec))) if isinstance(catalog, DefinitionCatalog) else {}
