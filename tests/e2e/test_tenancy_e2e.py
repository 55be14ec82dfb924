"""Tenancy (docs/operator.md#tenancy-and-impersonation): confinement, impersonation and the mandatory ServiceAccount."""

from __future__ import annotations

import secrets
from typing import Any

from e2ekit import Kube, condition, configmap_component
from kubernetes import client

from tools.devcluster.pytest_plugin import default_wait, wait_until


def _other_namespace(kube: Kube) -> str:
    name = f"t-other-{secrets.token_hex(3)}"
    kube.core.create_namespace({"metadata": {"name": name, "labels": {"oam-operator.dev/test-run": "e2e"}}})
    return name


def _cross(name: str, namespace: str) -> dict[str, Any]:
    component = configmap_component(name)
    component["properties"]["object"]["metadata"]["namespace"] = namespace
    return component


def _cluster_role(name: str) -> dict[str, Any]:
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name},
            "rules": []}
    return {"name": "role", "type": "passthrough", "properties": {"object": role, "clusterScoped": True}}


def test_objects_are_confined_to_the_applications_namespace(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    other = _other_namespace(kube)
    kube.apply_app("cross", {"components": [_cross("elsewhere", other)]})
    app = kube.wait_state("cross", "Error", "InvalidObjects")
    assert condition(app, "Ready")["message"] == (
        f"Object /v1, Kind=ConfigMap {other}/elsewhere is in namespace {other}; only objects in namespace(s) "
        f"{kube.namespace} are allowed")
    role = f"e2e-{kube.namespace}"
    kube.apply_app("wide", {"components": [_cluster_role(role)]})
    app = kube.wait_state("wide", "Error", "InvalidObjects")
    assert condition(app, "Ready")["message"] == (
        f"Object rbac.authorization.k8s.io/v1, Kind=ClusterRole {role} is cluster-scoped; "
        "cluster-scoped objects are not allowed")
    assert "elsewhere" not in {cm.metadata.name for cm in kube.core.list_namespaced_config_map(other).items}
    rbac = client.RbacAuthorizationV1Api(kube.api)
    assert role not in {r.metadata.name for r in rbac.list_cluster_role().items}


def test_the_allow_flags_lift_confinement(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace, "--allow-cross-namespace-objects", "--allow-cluster-scoped-objects")
    other = _other_namespace(kube)
    role = f"e2e-{kube.namespace}"
    kube.apply_app("both", {"components": [_cross("elsewhere", other), _cluster_role(role)]})
    kube.wait_ready("both")
    assert kube.core.read_namespaced_config_map("elsewhere", other).data == {"key": "elsewhere"}
    client.RbacAuthorizationV1Api(kube.api).read_cluster_role(role)
    kube.custom.delete_namespaced_custom_object("oam-operator.dev", "v1alpha1", kube.namespace, "applications",
                                                "both")
    wait_until(lambda: kube.app_or_none("both") is None, default_wait(kube.cluster), "the Application to go")


def test_a_service_account_without_rights_is_not_permitted_until_granted(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    kube.core.create_namespaced_service_account(kube.namespace, {"metadata": {"name": "deployer"}})
    kube.apply_app("tenant", {"serviceAccountName": "deployer", "components": [configmap_component("cfg")]})
    app = kube.wait_state("tenant", "Error", "NotPermitted")
    ns = kube.namespace
    assert condition(app, "Ready")["message"] == (
        f"ServiceAccount {ns}/deployer may not get, list, create, update, patch, delete configmaps in namespace "
        f"{ns}; the Application's objects need it. `oam-operator rbac tenant -n {ns}` prints a Role and "
        "RoleBinding that grant it")
    rbac = client.RbacAuthorizationV1Api(kube.api)
    rbac.create_namespaced_role(kube.namespace, {
        "metadata": {"name": "deployer"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"],
                   "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}]})
    rbac.create_namespaced_role_binding(kube.namespace, {
        "metadata": {"name": "deployer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "deployer"},
        "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": kube.namespace}]})
    kube.wait_ready("tenant", timeout=default_wait(kube.cluster) + 60)
    cm = kube.core.read_namespaced_config_map("cfg", kube.namespace)
    assert cm.metadata.managed_fields[0].manager == "oam-operator.dev"


def _grant_configmaps(kube: Kube, account: str) -> None:
    rbac = client.RbacAuthorizationV1Api(kube.api)
    rbac.create_namespaced_role(kube.namespace, {
        "metadata": {"name": account},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"],
                   "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}]})
    rbac.create_namespaced_role_binding(kube.namespace, {
        "metadata": {"name": account},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": account},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": kube.namespace}]})


def test_a_403_lifted_within_seconds_is_retried_quietly(start_operator: Any, kube: Kube) -> None:
    """docs/operator.md#a-403-in-the-first-seconds: the account's RoleBinding appears only after the
    operator met the 403 (as right after an API server restart, before its authorizer synced):
    the Application becomes Ready without ever being Error and without a Warning Event."""
    operator = start_operator(kube.namespace)
    kube.core.create_namespaced_service_account(kube.namespace, {"metadata": {"name": "late"}})
    kube.apply_app("late", {"serviceAccountName": "late", "components": [configmap_component("cfg")]})

    def quiet_retries() -> list[dict[str, Any]]:
        return [e for e in operator.logs() if str(e.get("msg", "")).startswith("retrying a 403 quietly")
                and e.get("name") == "late"]

    first = wait_until(quiet_retries, default_wait(kube.cluster), "the operator to meet the 403")
    assert f'User "system:serviceaccount:{kube.namespace}:late" cannot' in first[0]["msg"]
    _grant_configmaps(kube, "late")
    kube.wait_ready("late")
    assert [(e.type, e.reason) for e in kube.events("late")] == [("Normal", "Ready")]
    assert not [e for e in operator.logs() if e.get("msg") == "pass failed" and e.get("name") == "late"]


def test_require_service_account_refuses_and_still_deletes(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace, "--require-service-account")
    kube.apply_app("anon", {"components": [configmap_component("cfg")]})
    app = kube.wait_state("anon", "Error", "NotPermitted")
    assert condition(app, "Ready")["message"] == (
        "spec.serviceAccountName is required (the operator runs with --require-service-account)")
    kube.custom.delete_namespaced_custom_object("oam-operator.dev", "v1alpha1", kube.namespace, "applications",
                                                "anon")
    wait_until(lambda: kube.app_or_none("anon") is None, default_wait(kube.cluster), "the Application to go")
