"""values.schema.json types every value of values.yaml and rejects unknown keys
(docs/chart.md#the-helm-chart)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tools.devcluster.helm import CHART, HelmError, template

SCHEMA = json.loads((CHART / "values.schema.json").read_text())
VALUES = yaml.safe_load((CHART / "values.yaml").read_text())
JSON_TYPES: dict[str, type | tuple[type, ...]] = {"string": str, "boolean": bool, "integer": int, "number": (int, float), "object": dict, "array": list, "null": type(None)}


def leaves(values: dict[str, Any], schema: dict[str, Any], path: str = "") -> list[tuple[str, Any, dict[str, Any]]]:
    found = []
    for key, value in values.items():
        where = f"{path}.{key}" if path else key
        assert key in schema.get("properties", {}), f"{where} has no schema"
        sub = schema["properties"][key]
        assert "type" in sub, f"{where} has no type in the schema"
        if isinstance(value, dict) and sub.get("additionalProperties") is False:
            found += leaves(value, sub, where)
        else:
            found.append((where, value, sub))
    return found


def test_every_value_has_a_typed_schema_matching_its_default() -> None:
    found = leaves(VALUES, SCHEMA)
    assert len(found) > 40
    for where, value, sub in found:
        types = sub["type"] if isinstance(sub["type"], list) else [sub["type"]]
        assert any(isinstance(value, JSON_TYPES[t]) and not (t in ("integer", "number") and isinstance(value, bool))
                   for t in types), f"{where}: default {value!r} is not {types}"
        assert sub.get("description"), f"{where} has no description"


def test_unknown_keys_are_rejected_at_the_top_and_in_the_chart_own_objects() -> None:
    assert SCHEMA["additionalProperties"] is False
    for key in ("image", "operator", "crds", "rbac", "cache", "serviceAccount", "metrics", "health", "peering"):
        assert SCHEMA["properties"][key]["additionalProperties"] is False, key
    assert set(SCHEMA["properties"]) == set(VALUES) | {"global"}


@pytest.mark.parametrize(("values", "message"), [
    ({"replicaCount": 2}, "additional properties 'replicaCount' not allowed"),
    ({"operator": {"maxConcurrentReconciles": 0}}, "/operator/maxConcurrentReconciles"),
    ({"operator": {"maxConcurrentReconciles": "10"}}, "/operator/maxConcurrentReconciles"),
    ({"operator": {"watchNamespaces": ["Team_A"]}}, "/operator/watchNamespaces/0"),
    ({"operator": {"defaultInterval": "ten minutes"}}, "/operator/defaultInterval"),
    ({"operator": {"defaultUpdatePolicy": "Merge"}}, "/operator/defaultUpdatePolicy"),
    ({"operator": {"clusterId": "a/b"}}, "/operator/clusterId"),
    ({"operator": {"clusterScopedAdoptionPolicy": "Sometimes"}}, "/operator/clusterScopedAdoptionPolicy"),
    ({"rbac": {"mode": "minimal"}}, "/rbac/mode"),
    ({"rbac": {"extraRules": [{"resources": ["pods"]}]}}, "/rbac/extraRules/0"),
    ({"metrics": {"port": 70000}}, "/metrics/port"),
    ({"image": {"pullPolicy": "Sometimes"}}, "/image/pullPolicy"),
    ({"crds": {"install": "yes"}}, "/crds/install"),
    ({"cache": {"enabled": "yes"}}, "/cache/enabled"),
    ({"cache": {"size": 10}}, "additional properties 'size' not allowed"),
])
def test_helm_rejects_invalid_values(helm: Path, helm_home: Path, values: dict[str, Any], message: str) -> None:
    with pytest.raises(HelmError) as error:
        template(helm, helm_home, values=values)
    assert message in str(error.value)
    assert "values don't meet the specifications of the schema" in str(error.value)
