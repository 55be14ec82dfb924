"""The ``override`` policy: what differs on some of a topology's clusters (docs/multicluster.md#overrides).

``properties.clusterSelector`` or ``properties.clusters`` choose the clusters, as a topology
policy does (``topology.py``); ``properties.components`` lists the components it changes there:
``{name, properties?, traits?}``. ``properties`` is merged into the component's properties (a
JSON merge patch: a map merges key by key, ``null`` removes a key, anything else replaces);
each trait ``{type, properties}`` is merged into the component's trait of that type, or added
when it has none. Several override policies apply in the order the spec lists them. A named
component that does not exist is refused here; what the merged properties must be is checked
by the component's own schema, with the policy's name in the message (``controller/reconcile``'s
``overrides`` check) and, per cluster, with the cluster's name too.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oam_operator.common.mergepatch import merge_patch
from oam_operator.oam.document.document import ApplicationPolicy
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Schema
from oam_operator.oam.errors import PolicyError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.policies.result import PolicyResult

from ._common import EXTENSION_PREFIX, entry_map
from .topology import Topology
from .topology import parse as parse_topology

TYPE = "override"
EXTENSION_KEY = EXTENSION_PREFIX + TYPE  # the names of the override policies, in order


@dataclass(frozen=True)
class Override:
    """One override policy: the clusters it selects and the component patches it brings."""

    policy: str
    where: Topology
    components: tuple[Mapping[str, Any], ...]

    def selects(self, cluster: str, labels: Mapping[str, str]) -> bool:
        return self.where.selects(cluster, labels)


def _schema() -> Schema:
    trait = PropertySchema(type="object", description="A trait patch: merged into the trait of this type, or added.",
                           properties={
                               "type": PropertySchema(type="string", required=True, description="The trait's type."),
                               "properties": PropertySchema(type="object", additional_properties=True,
                                                            description="Merged into the trait's properties."),
                           })
    component = PropertySchema(type="object", description="A component patch.", properties={
        "name": PropertySchema(type="string", required=True, description="The component's name."),
        "properties": PropertySchema(type="object", additional_properties=True,
                                     description="Merged into the component's properties (JSON merge patch)."),
        "traits": PropertySchema(type="array", items=trait, description="Trait patches, by trait type."),
    })
    selector = PropertySchema(type="object", additional_properties=True,
                              description="The ClusterProfiles whose labels match, as a topology policy's.")
    return {
        "clusterSelector": selector,
        "clusters": PropertySchema(type="array", items=PropertySchema(type="string", description="A ClusterProfile."),
                                   description="ClusterProfile names; set this or clusterSelector."),
        "components": PropertySchema(type="array", required=True, items=component,
                                     description="The components it changes on those clusters."),
    }


def parse(policy_name: str, props: dict[str, Any], components: Sequence[str]) -> Override:
    where = parse_topology(policy_name, {key: props[key] for key in ("clusterSelector", "clusters") if key in props})
    raw = props.get("components")
    if not isinstance(raw, list) or not raw:
        raise PolicyError("property 'components' must be a non-empty list")
    patches = []
    for index, entry in enumerate(raw):
        patch = entry_map(entry, f"components[{index}]")
        name = patch.get("name")
        if name not in components:
            raise PolicyError(f"components[{index}]: {go_quote(str(name))} is not a component of the Application")
        patches.append(patch)
    return Override(policy_name, where, tuple(patches))


def declared(spec: Mapping[str, Any]) -> list[Override]:
    """The override policies of an Application's spec, in order; those that do not parse are left
    out (the transform refuses them with its message)."""
    names = [str(c.get("name")) for c in spec.get("components") or () if isinstance(c, Mapping)]
    found = []
    for policy in spec.get("policies") or ():
        if isinstance(policy, Mapping) and policy.get("type") == TYPE:
            try:
                found.append(parse(str(policy.get("name") or ""), dict(policy.get("properties") or {}), names))
            except PolicyError:
                continue
    return found


def applied(components: Sequence[Mapping[str, Any]], overrides: Sequence[Override]) -> list[dict[str, Any]]:
    """The components with ``overrides`` applied in order."""
    result = [copy.deepcopy(dict(component)) for component in components]
    by_name = {str(component.get("name")): component for component in result}
    for override in overrides:
        for patch in override.components:
            component = by_name.get(str(patch.get("name")))
            if component is None:
                continue
            if patch.get("properties") is not None:
                component["properties"] = merge_patch(component.get("properties") or {}, patch["properties"])
            for trait_patch in patch.get("traits") or ():
                traits = component.setdefault("traits", [])
                trait = next((t for t in traits if t.get("type") == trait_patch.get("type")), None)
                if trait is None:
                    traits.append(copy.deepcopy(dict(trait_patch)))
                else:
                    trait["properties"] = merge_patch(trait.get("properties") or {},
                                                      trait_patch.get("properties") or {})
    return result


class OverridePolicy(BuiltinType):
    """What differs on some of a topology's clusters: component and trait patches."""

    TYPES = (TYPE,)

    def property_schema(self) -> Schema:
        return _schema()

    def apply(self, policy: ApplicationPolicy, components: list[str], result: PolicyResult) -> None:
        parse(policy.name, policy.properties, components)
        result.extensions.setdefault(EXTENSION_KEY, []).append(policy.name)
