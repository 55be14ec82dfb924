"""Namespace-scoped mode (rbac.namespaced with operator.watchNamespaces, docs/chart.md#the-helm-chart): the
operator's rights are a Role in each watched namespace plus a small ClusterRole, and they are
enough to reconcile, in full and in leastPrivilege mode, with kopf peering on (a KopfPeering
object in the namespace)."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from tests.integration.integrationkit import (
    api_as,
    apply_application,
    can_i,
    config_and_deployment,
    delete_application,
    grant_tenant,
    wait_state,
)
from tools.devcluster import ClusterHandle
from tools.devcluster.pytest_plugin import default_wait, wait_until

# The chart fixes the operator's health and metrics ports: these modules never run at once.
pytestmark = pytest.mark.exclusive("chart-ports")


@pytest.mark.parametrize("mode", ["full", "leastPrivilege"])
def test_namespace_scoped_mode(mode: str, chart_install: Any, chart_operator: Any, full_cluster: ClusterHandle,
                               full_namespace: str, full_kube_api: Any) -> None:
    release = chart_install({"rbac": {"mode": mode, "namespaced": True}, "peering": {"enabled": True}, "replicas": 1,
                             "operator": {"watchNamespaces": [full_namespace], "defaultInterval": "30s",
                                          # full mode: the operator's own identity, the explicit opt-in
                                          "useOperatorIdentity": mode == "full"}})
    operator = chart_operator(release)
    identity = api_as(operator.kubeconfig)
    try:
        assert can_i(identity, "list", "applications", "oam-operator.dev", namespace=full_namespace)
        assert not can_i(identity, "list", "applications", "oam-operator.dev", namespace="default")
        assert not can_i(identity, "create", "configmaps", namespace="default")
        assert can_i(identity, "create", "configmaps", namespace=full_namespace) == (mode == "full")
        assert can_i(identity, "list", "clusterprofiles", "oam-operator.dev")
    finally:
        identity.close()

    spec: dict[str, Any] = {"components": config_and_deployment("web")}
    if mode == "leastPrivilege":
        grant_tenant(full_kube_api, full_namespace, "deployer")
        spec["serviceAccountName"] = "deployer"
    apply_application(full_kube_api, full_namespace, "web", spec)
    app = wait_state(full_kube_api, full_cluster, full_namespace, "web", "Ready", "Ready")
    assert app["status"]["readyObjects"] == 2

    # kopf joined the peering object the chart created (it writes its identity into the status).
    custom = client.CustomObjectsApi(full_kube_api)

    def joined() -> bool:
        peering = custom.get_namespaced_custom_object("kopf.dev", "v1", full_namespace, "kopfpeerings", release.name +
                                                      "-oam-operator")
        return bool(peering.get("status"))

    wait_until(joined, default_wait(full_cluster), "the operator to join the KopfPeering")
    assert "Forbidden" not in operator.log() and "Not enough permissions" not in operator.log()
    delete_application(full_kube_api, full_cluster, full_namespace, "web")
