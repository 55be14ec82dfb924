"""The chart's rights on the standard cluster inventory (docs/chart.md#the-standard-cluster-inventory):
get, list and watch of multicluster.x-k8s.io ClusterProfiles in exactly the namespaces listed, the
flags that turn the reading on, and nothing at all by default."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.unit.unitkit import of_kind

Render = Callable[..., list[dict[str, Any]]]
NAME = "oam-oam-operator-inventory"


def _args(objects: list[dict[str, Any]]) -> list[str]:
    deployment = next(iter(of_kind(objects, "Deployment")))
    args: list[str] = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    return args


def test_nothing_of_the_standard_kind_by_default(render: Render) -> None:
    objects = render()
    assert [r for r in of_kind(objects, "Role") if r["metadata"]["name"] == NAME] == []
    assert not [a for a in _args(objects) if a.startswith("--inventory-")]
    everything = [rule for kind in ("Role", "ClusterRole") for role in of_kind(objects, kind)
                  for rule in role.get("rules") or []]
    assert not [rule for rule in everything if "multicluster.x-k8s.io" in rule.get("apiGroups", [])]


def test_read_only_rights_in_exactly_the_inventory_namespaces(render: Render) -> None:
    objects = render({"clusterProfiles": {"inventory": {"namespaces": ["fleet", "fleet-b"],
                                                        "accessProvider": "token-reader"}}})
    roles = [r for r in of_kind(objects, "Role") if r["metadata"]["name"] == NAME]
    assert [r["metadata"]["namespace"] for r in roles] == ["fleet", "fleet-b"]
    for role in roles:
        assert role["rules"] == [{"apiGroups": ["multicluster.x-k8s.io"], "resources": ["clusterprofiles"],
                                  "verbs": ["get", "list", "watch"]}]
    bindings = [b for b in of_kind(objects, "RoleBinding") if b["metadata"]["name"] == NAME]
    assert [(b["metadata"]["namespace"], b["roleRef"]["name"]) for b in bindings] == [("fleet", NAME),
                                                                                       ("fleet-b", NAME)]
    assert all(b["subjects"] == [{"kind": "ServiceAccount", "name": "oam-oam-operator", "namespace": "oam-system"}]
               for b in bindings)
    assert "--inventory-namespaces=fleet,fleet-b" in _args(objects)
    assert "--inventory-access-provider=token-reader" in _args(objects)
