"""The ``topology`` policy: the clusters an Application is delivered to (docs/multicluster.md#topology).

``properties.clusterSelector`` (a label selector over ClusterProfiles: ``matchLabels``,
``matchExpressions`` with ``In``, ``NotIn``, ``Exists``, ``DoesNotExist``, as Kubernetes reads
them) or ``properties.clusters`` (ClusterProfile names) — exactly one of the two. ``onRemoval``
says what happens on a cluster that leaves the selection: ``delete`` (the default: its objects are
deleted there, in reverse wave order) or ``orphan`` (they stay, no longer tracked). ``namespace``
(optional, a DNS-1123 label) is where every cluster's namespaced objects go instead of the
Application's own namespace (controller/reconcile/fleetns.py). One topology
policy per Application; the value goes to ``extensions["oam-operator.dev/topology"]``.

The term is OAM's and KubeVela's; the operator delivers the Application to each selected cluster
through an Application of its own per cluster (``controller/reconcile/fleet.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oam_operator.common.dns1123 import dns1123_label_errors
from oam_operator.oam.document.document import ApplicationPolicy
from oam_operator.oam.document.schema import PropertySchema
from oam_operator.oam.engine.handlers import BuiltinType, Schema
from oam_operator.oam.errors import PolicyError
from oam_operator.oam.formatting.gofmt import go_quote
from oam_operator.oam.policies.result import PolicyResult

from ._common import EXTENSION_PREFIX, entry_map, record_once

TYPE = "topology"
EXTENSION_KEY = EXTENSION_PREFIX + TYPE
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
ON_REMOVAL = ("delete", "orphan")


@dataclass(frozen=True)
class Requirement:
    """One ``matchExpressions`` entry."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "Exists":
            return self.key in labels
        if self.operator == "DoesNotExist":
            return self.key not in labels
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        return self.key not in labels or labels[self.key] not in self.values  # NotIn


@dataclass(frozen=True)
class Topology:
    """Where one Application goes: the clusters a selector or a list names."""

    policy: str
    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = ()
    clusters: tuple[str, ...] = ()
    on_removal: str = "delete"
    namespace: str = ""  # "": the Application's own namespace

    @property
    def by_selector(self) -> bool:
        return not self.clusters

    def selects(self, name: str, labels: Mapping[str, str]) -> bool:
        """Whether the ClusterProfile ``name`` with ``labels`` is one of its clusters."""
        if self.clusters:
            return name in self.clusters
        return (all(labels.get(key) == value for key, value in self.match_labels)
                and all(requirement.matches(labels) for requirement in self.match_expressions))

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"policy": self.policy, "onRemoval": self.on_removal}
        if self.namespace:
            value["namespace"] = self.namespace
        if self.clusters:
            value["clusters"] = list(self.clusters)
        else:
            value["clusterSelector"] = {
                "matchLabels": dict(self.match_labels),
                "matchExpressions": [{"key": r.key, "operator": r.operator, "values": list(r.values)}
                                     for r in self.match_expressions]}
        return value

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Topology:
        selector = raw.get("clusterSelector") or {}
        return cls(policy=str(raw["policy"]),
                   match_labels=tuple(sorted((selector.get("matchLabels") or {}).items())),
                   match_expressions=tuple(Requirement(e["key"], e["operator"], tuple(e.get("values") or ()))
                                           for e in selector.get("matchExpressions") or ()),
                   clusters=tuple(raw.get("clusters") or ()), on_removal=str(raw.get("onRemoval") or "delete"),
                   namespace=str(raw.get("namespace") or ""))


def _schema() -> Schema:
    requirement = PropertySchema(
        type="object", description="A label requirement, as a Kubernetes label selector's matchExpressions entry.",
        properties={
            "key": PropertySchema(type="string", required=True, description="The label key."),
            "operator": PropertySchema(type="string", required=True,
                                       description="In, NotIn, Exists or DoesNotExist."),
            "values": PropertySchema(type="array", items=PropertySchema(type="string", description="A label value."),
                                     description="The values of In and NotIn; none for Exists and DoesNotExist."),
        },
    )
    return {
        "clusterSelector": PropertySchema(
            type="object", description="The ClusterProfiles whose labels match; set this or clusters.",
            properties={
                "matchLabels": PropertySchema(type="object", additional_properties=True,
                                              description="Labels a ClusterProfile must carry, with these values."),
                "matchExpressions": PropertySchema(type="array", items=requirement,
                                                   description="Requirements a ClusterProfile's labels must meet."),
            },
        ),
        "clusters": PropertySchema(type="array", items=PropertySchema(type="string",
                                                                       description="A ClusterProfile's name."),
                                   description="ClusterProfile names; set this or clusterSelector."),
        "onRemoval": PropertySchema(
            type="string", enum=list(ON_REMOVAL),
            description="What happens on a cluster that leaves the selection: delete (its objects are deleted "
            "there) or orphan (they stay, no longer tracked).",
        ),
        "namespace": PropertySchema(
            type="string",
            description="The namespace every selected cluster's namespaced objects go to; by default the "
            "Application's own. Tenancy holds as for any object outside it (docs/multicluster.md#topology).",
        ),
    }


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise PolicyError(f"{where} must be a list of non-empty strings")
    return tuple(value)


def _requirement(raw: Any, where: str) -> Requirement:
    entry = entry_map(raw, where)
    key = entry.get("key")
    if not isinstance(key, str) or not key:
        raise PolicyError(f"{where}.key is required and must be a string")
    operator = entry.get("operator")
    if operator not in OPERATORS:
        shown = go_quote(operator) if isinstance(operator, str) else repr(operator)
        raise PolicyError(f"{where}.operator {shown} is not one of {', '.join(OPERATORS)}")
    values = _strings(entry.get("values") or [], f"{where}.values")
    if operator in ("In", "NotIn") and not values:
        raise PolicyError(f"{where}.values must not be empty for operator {operator}")
    if operator in ("Exists", "DoesNotExist") and values:
        raise PolicyError(f"{where}.values must be empty for operator {operator}")
    return Requirement(key, operator, values)


def parse(policy_name: str, props: dict[str, Any]) -> Topology:
    selector, clusters = props.get("clusterSelector"), props.get("clusters")
    if (selector is None) == (clusters is None):
        raise PolicyError("set exactly one of clusterSelector and clusters")
    on_removal = props.get("onRemoval", "delete")
    if on_removal not in ON_REMOVAL:
        shown = go_quote(on_removal) if isinstance(on_removal, str) else repr(on_removal)
        raise PolicyError(f"onRemoval {shown} is not one of {', '.join(ON_REMOVAL)}")
    namespace = _namespace(props.get("namespace"))
    if clusters is not None:
        names = _strings(clusters, "clusters")
        if not names:
            raise PolicyError("property 'clusters' must not be empty")
        doubled = sorted({name for name in names if names.count(name) > 1})
        if doubled:
            raise PolicyError(f"clusters names {go_quote(doubled[0])} more than once")
        return Topology(policy_name, clusters=names, on_removal=on_removal, namespace=namespace)
    entry = entry_map(selector, "clusterSelector")
    labels = entry.get("matchLabels") or {}
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise PolicyError("clusterSelector.matchLabels must map label keys to strings")
    raw_expressions = entry.get("matchExpressions") or []
    if not isinstance(raw_expressions, list):
        raise PolicyError("clusterSelector.matchExpressions must be a list")
    expressions = tuple(_requirement(raw, f"clusterSelector.matchExpressions[{i}]")
                        for i, raw in enumerate(raw_expressions))
    return Topology(policy_name, match_labels=tuple(sorted(labels.items())), match_expressions=expressions,
                    on_removal=on_removal, namespace=namespace)


def _namespace(value: Any) -> str:
    """The target ``namespace`` ("" when absent): a DNS-1123 label, as a namespace's name is."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise PolicyError("namespace must be a string")
    errors = dns1123_label_errors(value)
    if errors:
        raise PolicyError(f"namespace {go_quote(value)} is not a valid namespace: {'; '.join(errors)}")
    return value


def recorded(result: PolicyResult) -> Topology | None:
    raw = result.extensions.get(EXTENSION_KEY)
    return None if raw is None else Topology.from_json(raw)


def declared(spec: Mapping[str, Any]) -> Topology | None:
    """The topology an Application's spec declares, read before its transform runs (the pass
    decides where it delivers before that); ``None`` without one or when it does not parse (the
    transform then refuses it with its message)."""
    for policy in spec.get("policies") or ():
        if isinstance(policy, Mapping) and policy.get("type") == TYPE:
            try:
                return parse(str(policy.get("name") or ""), dict(policy.get("properties") or {}))
            except PolicyError:
                return None
    return None


class TopologyPolicy(BuiltinType):
    """The clusters an Application goes to, chosen by label or by name."""

    TYPES = (TYPE,)

    def property_schema(self) -> Schema:
        return _schema()

    def apply(self, policy: ApplicationPolicy, components: list[str], result: PolicyResult) -> None:
        record_once(result, EXTENSION_KEY, TYPE, lambda: parse(policy.name, policy.properties).to_json())
