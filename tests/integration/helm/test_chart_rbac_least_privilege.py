"""rbac.mode=leastPrivilege (docs/chart.md#the-helm-chart): the operator's own identity cannot create
objects (403); an Application whose spec.serviceAccountName has a Role reaches Ready through
impersonation; one without gets Error/NotPermitted (--require-service-account is forced). With
cache.enabled (the default) its identity may read, never write, the owned kinds but Secrets, so
the watch of owned objects runs and corrects a hand edit
(docs/chart.md#watches-of-owned-objects). With clusterProfiles.inventory.namespaces it reads, never
writes, the standard multicluster.x-k8s.io ClusterProfiles there, and nowhere else
(docs/chart.md#the-standard-cluster-inventory)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, dynamic
from kubernetes.client.exceptions import ApiException

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
from tools.devcluster.pytest_plugin import default_wait, wait_until

# The chart fixes the operator's health and metrics ports: these modules never run at once.
pytestmark = pytest.mark.exclusive("chart-ports")

STANDARD_CRD = (Path(__file__).resolve().parents[2] / "e2e" / "data" / "cluster-inventory"
                / "multicluster.x-k8s.io_clusterprofiles.yaml")
NOT_PERMITTED = "spec.serviceAccountName is required (the operator runs with --require-service-account)"


def release_args(release: Any) -> list[str]:
    deployment = next(o for o in release.objects if o["kind"] == "Deployment")
    args: list[str] = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    return args


def test_least_privilege_mode(chart_install: Any, chart_operator: Any, full_cluster: ClusterHandle,
                              full_namespace: str, full_kube_api: Any) -> None:
    # The standard ClusterProfile CRD (the tests' own), so that the inventory's watch runs.
    dynamic.DynamicClient(full_kube_api).resources.get(
        api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition").server_side_apply(
        body=yaml.safe_load(STANDARD_CRD.read_text()), field_manager="oam-test", force_conflicts=True)
    release = chart_install({"rbac": {"mode": "leastPrivilege"},
                             "operator": {"watchNamespaces": [full_namespace], "defaultInterval": "30s"},
                             "clusterProfiles": {"inventory": {"namespaces": [full_namespace]}}})
    operator = chart_operator(release)
    user = f"system:serviceaccount:{full_namespace}:{release.service_account}"

    identity = api_as(operator.kubeconfig)
    try:
        with pytest.raises(ApiException) as denied:
            client.CoreV1Api(identity).create_namespaced_config_map(
                full_namespace, {"metadata": {"name": "by-the-operator"}, "data": {"a": "b"}})
        assert denied.value.status == 403
        assert json.loads(denied.value.body)["message"] == (
            f'configmaps is forbidden: User "{user}" cannot create resource "configmaps" in API group "" '
            f'in the namespace "{full_namespace}"')
        assert not can_i(identity, "list", "secrets", namespace=full_namespace)
        assert not can_i(identity, "create", "deployments", "apps", namespace=full_namespace)
        assert not can_i(identity, "get", "namespaces", namespace=None)  # only kube-system by name
        assert can_i(identity, "impersonate", "serviceaccounts", namespace=full_namespace)
        assert can_i(identity, "patch", "applications/status", "oam-operator.dev", namespace=full_namespace)
        for verb in ("create", "delete"):  # a topology's cluster Applications (docs/multicluster.md#topology)
            assert can_i(identity, verb, "applications", "oam-operator.dev", namespace=full_namespace)
        for verb in ("list", "create", "patch", "delete"):  # the revision history (docs/chart.md#rbac)
            assert can_i(identity, verb, "controllerrevisions", "apps", namespace=full_namespace)
        # the watch of owned objects: read only, cluster-wide, Secrets never
        assert can_i(identity, "watch", "deployments", "apps", namespace=None)
        assert can_i(identity, "list", "configmaps", namespace=None)
        assert not can_i(identity, "patch", "deployments", "apps", namespace=full_namespace)
        # a Notification's Secret is read by name (docs/notifications.md#rbac): get, never list or watch
        assert can_i(identity, "get", "secrets", namespace=full_namespace)
        assert not can_i(identity, "watch", "secrets", namespace=full_namespace)
        # the watch of grants (docs/operator.md#not-permitted-and-the-role-it-needs): read only
        assert can_i(identity, "watch", "rolebindings", "rbac.authorization.k8s.io", namespace=None)
        assert can_i(identity, "list", "roles", "rbac.authorization.k8s.io", namespace=None)
        assert not can_i(identity, "create", "rolebindings", "rbac.authorization.k8s.io", namespace=full_namespace)
        # the standard cluster inventory: read only, in the inventory namespace only
        for verb in ("get", "list", "watch"):
            assert can_i(identity, verb, "clusterprofiles", "multicluster.x-k8s.io", namespace=full_namespace)
        assert not can_i(identity, "patch", "clusterprofiles", "multicluster.x-k8s.io", namespace=full_namespace)
        assert not can_i(identity, "update", "clusterprofiles", "multicluster.x-k8s.io", namespace=full_namespace)
        assert not can_i(identity, "list", "clusterprofiles", "multicluster.x-k8s.io", namespace="default")
    finally:
        identity.close()

    grant_tenant(full_kube_api, full_namespace, "deployer")
    apply_application(full_kube_api, full_namespace, "tenant",
                      {"serviceAccountName": "deployer", "components": config_and_deployment("tenant")})
    apply_application(full_kube_api, full_namespace, "anonymous", {"components": config_and_deployment("anon")})

    app = wait_state(full_kube_api, full_cluster, full_namespace, "tenant", "Ready", "Ready")
    assert app["status"]["objects"] == app["status"]["readyObjects"] == 2
    refused = wait_state(full_kube_api, full_cluster, full_namespace, "anonymous", "Error", "NotPermitted")
    condition = ready_condition(refused)
    assert condition["status"] == "False"
    assert condition["message"] == NOT_PERMITTED
    assert owned_objects(full_kube_api, full_namespace) == {("ConfigMap", "tenant-config"), ("Deployment", "tenant")}

    # kopf had every right it needs: no forbidden request, no fallback (which costs a minute).
    assert "Forbidden" not in operator.log() and "Not enough permissions" not in operator.log()
    assert "not permitted to watch" not in operator.log()  # the grant watch runs
    assert "cannot read clusterprofiles.multicluster.x-k8s.io" not in operator.log()  # the inventory's watch runs

    # The operator watches its Deployments: a hand edit is corrected (with the tenant's identity)
    # long before the reapply interval (60m), the only other correction of an unwatched kind.
    assert "--readiness-watch" in release_args(release)
    apps = client.AppsV1Api(full_kube_api)
    apps.patch_namespaced_deployment("tenant", full_namespace, {"spec": {"template": {"spec": {
        "containers": [{"name": "main", "image": "evil/web:6.6.6"}]}}}}, field_manager="kubectl-set")
    wait_until(lambda: apps.read_namespaced_deployment("tenant", full_namespace).spec.template.spec.containers[0]
               .image == "registry.invalid/web:1", default_wait(full_cluster), "the hand edit to be corrected")
    assert "not watching" not in operator.log()  # no owned kind was refused to the watch

    # A topology's cluster Application, written with the operator's own identity, delivers with the
    # tenant's: a ClusterProfile without a kubeconfig is the operator's own cluster.
    custom = client.CustomObjectsApi(full_kube_api)
    profile = f"{full_namespace}-here"
    custom.create_cluster_custom_object("oam-operator.dev", "v1alpha1", "clusterprofiles", {
        "apiVersion": "oam-operator.dev/v1alpha1", "kind": "ClusterProfile",
        "metadata": {"name": profile, "labels": {"fleet": full_namespace}}, "spec": {}})
    try:
        apply_application(full_kube_api, full_namespace, "fleet", {
            "serviceAccountName": "deployer", "components": config_and_deployment("fleet"),
            "policies": [{"name": "here", "type": "topology",
                          "properties": {"clusterSelector": {"matchLabels": {"fleet": full_namespace}}}}]})
        fleet = wait_state(full_kube_api, full_cluster, full_namespace, "fleet", "Ready", "Ready")
        assert fleet["status"]["clusterSummary"] == "1/1"
        assert ready_condition(fleet)["message"] == "Applied revision 1: 1 clusters ready"
        assert ("Deployment", "fleet") in owned_objects(full_kube_api, full_namespace)
        delete_application(full_kube_api, full_cluster, full_namespace, "fleet")
        assert custom.list_namespaced_custom_object("oam-operator.dev", "v1alpha1", full_namespace, "applications",
                                                    label_selector="oam-operator.dev/fleet")["items"] == []
    finally:
        custom.delete_cluster_custom_object("oam-operator.dev", "v1alpha1", "clusterprofiles", profile)
    assert "Forbidden" not in operator.log()

    delete_application(full_kube_api, full_cluster, full_namespace, "anonymous")
    delete_application(full_kube_api, full_cluster, full_namespace, "tenant")
    assert owned_objects(full_kube_api, full_namespace) == set()
