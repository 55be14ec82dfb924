"""Where pods run: ``affinity``, topology spread and ``tolerations`` (docs/transform.md#shared-workload-properties,
docs/transform.md#workload-components).

Spreading replicas over nodes (and, from three replicas, over zones) is the default so one
node or zone failure does not take every replica down; it stays a preference across zones so
single-zone clusters still schedule.
"""

from __future__ import annotations

from typing import Any

from oam_operator.oam.catalog.workloads.values import opt_bool, opt_map, opt_str
from oam_operator.oam.errors import ValidationError
from oam_operator.oam.formatting.choices import unknown_value
from oam_operator.oam.formatting.gofmt import go_quote, go_type_name, go_value

Object = dict[str, Any]

HOSTNAME_KEY = "kubernetes.io/hostname"
ZONE_KEY = "topology.kubernetes.io/zone"
ANTI_AFFINITY_TYPES = ("preferred", "required")
TOLERATION_OPERATORS = ("Exists", "Equal")
TOLERATION_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute", "")
_TOLERATION_FIELDS = ("key", "operator", "value", "effect")


def _selector(component: str) -> Object:
    return {"matchLabels": {"app": component}}


def build_affinity(value: Any, component: str) -> Object | None:
    """The pod ``affinity``, or ``None`` when nothing is asked for."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValidationError(f"affinity: must be an object, got {go_type_name(value)}")
    affinity: Object = {}
    node_selector = opt_map(value, "nodeSelector", "affinity.nodeSelector")
    expressions = [
        {"key": key, "operator": "In", "values": [node_selector[key]]}
        for key in sorted(node_selector)
        if isinstance(node_selector[key], str)
    ]
    if expressions:
        affinity["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}
        }
    kind = value.get("podAntiAffinityType")
    kind = "preferred" if kind is None or kind == "" else kind
    if kind not in ANTI_AFFINITY_TYPES:
        shown = kind if isinstance(kind, str) else go_value(kind)
        raise ValidationError(unknown_value("podAntiAffinityType", shown, ANTI_AFFINITY_TYPES))
    topology_key = opt_str(value, "topologyKey", "affinity.topologyKey") or HOSTNAME_KEY
    if opt_bool(value, "enablePodAntiAffinity", False, "affinity.enablePodAntiAffinity"):
        term = {"labelSelector": _selector(component), "topologyKey": topology_key}
        if kind == "required":
            affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        else:
            affinity["podAntiAffinity"] = {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": term}]
            }
    return affinity or None


def topology_spread(component: str, replicas: int, enabled: bool) -> list[Object]:
    """Spread constraints: hostname from 2 replicas, zone (preferred) from 3."""
    if not enabled or replicas <= 1:
        return []
    constraints = [
        {
            "maxSkew": 1,
            "topologyKey": HOSTNAME_KEY,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": _selector(component),
        }
    ]
    if replicas >= 3:
        constraints.append(
            {
                "maxSkew": 1,
                "topologyKey": ZONE_KEY,
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": _selector(component),
            }
        )
    return constraints


def build_tolerations(value: Any) -> list[Object]:
    """Tolerations in authored order; ``operator`` defaults to ``Exists`` without a key, else ``Equal``."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError(f"tolerations: must be an array, got {go_type_name(value)}")
    out: list[Object] = []
    for i, raw in enumerate(value):
        if not isinstance(raw, dict):
            raise ValidationError(f"toleration[{i}]: must be a mapping")
        fields: dict[str, str] = {}
        for key in _TOLERATION_FIELDS:
            item = raw.get(key)
            if item is None:
                continue
            if not isinstance(item, str):
                raise ValidationError(f"toleration[{i}].{key}: must be a string, got {go_type_name(item)}")
            fields[key] = item
        operator = fields.get("operator") or ("Equal" if fields.get("key") else "Exists")
        if operator not in TOLERATION_OPERATORS:
            raise ValidationError(
                f"toleration[{i}].operator: invalid value {go_quote(operator)}, must be 'Exists' or 'Equal'"
            )
        effect = fields.get("effect", "")
        if effect not in TOLERATION_EFFECTS:
            raise ValidationError(f"toleration[{i}].effect: invalid value {go_quote(effect)}")
        toleration: Object = {"operator": operator}
        for key in ("key", "value", "effect"):
            if fields.get(key):
                toleration[key] = fields[key]
        out.append(toleration)
    return out
