"""The chart's rights on the ClusterProfiles' kubeconfig Secrets (docs/chart.md#kubeconfig-secrets-of-clusterprofiles):
get, list and watch (each Secret's own watch) on exactly the named Secrets of the release namespace,
and nothing without any."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.unit.unitkit import of_kind

Render = Callable[..., list[dict[str, Any]]]
NAME = "oam-oam-operator-kubeconfigs"


def test_no_secret_rights_without_kubeconfig_secrets(render: Render) -> None:
    objects = render()
    assert [r for r in of_kind(objects, "Role") if r["metadata"]["name"] == NAME] == []


def test_get_and_watch_on_exactly_the_named_secrets(render: Render) -> None:
    objects = render({"clusterProfiles": {"kubeconfigSecrets": ["eu-west", "us-east"]}})
    role = next(r for r in of_kind(objects, "Role") if r["metadata"]["name"] == NAME)
    assert role["metadata"]["namespace"] == "oam-system"
    assert role["rules"] == [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["eu-west", "us-east"],
                              "verbs": ["get", "list", "watch"]}]
    binding = next(b for b in of_kind(objects, "RoleBinding") if b["metadata"]["name"] == NAME)
    assert binding["roleRef"]["name"] == NAME
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "oam-oam-operator", "namespace": "oam-system"}]
