"""rbac.mode=full (the default) is enough: the operator, run with the chart's arguments as the
chart's ServiceAccount (a TokenRequest token), reconciles a ConfigMap + Deployment Application
to Ready and deletes it again (docs/chart.md#the-helm-chart). With the chart's defaults an Application
without spec.serviceAccountName acts as its namespace's ``default`` ServiceAccount (least
privilege, issue 18): refused until that account is granted the rights."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.integrationkit import (
    api_as,
    apply_application,
    can_i,
    config_and_deployment,
    delete_application,
    grant_tenant,
    owned_objects,
    ready_condition,
    wait_state,
)
from tools.devcluster import ClusterHandle

# The chart fixes the operator's health and metrics ports: these modules never run at once.
pytestmark = pytest.mark.exclusive("chart-ports")


def test_full_mode_reconciles_an_application(chart_install: Any, chart_operator: Any, full_cluster: ClusterHandle,
                                             full_namespace: str, full_kube_api: Any) -> None:
    # One watched namespace: a cluster-wide operator would also reconcile other tests' Applications.
    release = chart_install({"operator": {"watchNamespaces": [full_namespace], "defaultInterval": "30s"}})
    operator = chart_operator(release)
    identity = api_as(operator.kubeconfig)
    try:
        # The ClusterRole is bound cluster-wide: the same rights everywhere, as a cluster-wide install has.
        assert can_i(identity, "list", "applications", "oam-operator.dev")
        assert can_i(identity, "create", "deployments", "apps", namespace="kube-public")
        assert can_i(identity, "impersonate", "serviceaccounts", namespace="default")
    finally:
        identity.close()

    apply_application(full_kube_api, full_namespace, "web", {"components": config_and_deployment("web")})
    app = wait_state(full_kube_api, full_cluster, full_namespace, "web", "Error", "NotPermitted")
    verbs, ns = "get, list, create, update, patch, delete", full_namespace
    assert ready_condition(app)["message"] == (  # docs/operator.md#not-permitted-and-the-role-it-needs
        f"ServiceAccount {ns}/default may not {verbs} configmaps in namespace {ns}; {verbs} deployments.apps in "
        f"namespace {ns}; the Application's objects need it. `oam-operator rbac web -n {ns}` prints a Role and "
        "RoleBinding that grant it")
    assert owned_objects(full_kube_api, full_namespace) == set()
    grant_tenant(full_kube_api, full_namespace, "default", create=False)
    app = wait_state(full_kube_api, full_cluster, full_namespace, "web", "Ready", "Ready")
    assert app["status"]["objects"] == app["status"]["readyObjects"] == 2
    assert owned_objects(full_kube_api, full_namespace) == {("ConfigMap", "web-config"), ("Deployment", "web")}

    delete_application(full_kube_api, full_cluster, full_namespace, "web")
    assert owned_objects(full_kube_api, full_namespace) == set()
