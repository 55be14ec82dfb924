"""What an Application's identity needs (controller/permissions.py): the permissions derived
from objects, the NotPermitted message word for word, the Role and RoleBinding."""

from __future__ import annotations

from oam_operator.controller.permissions import (
    VERBS,
    Permission,
    ResourceType,
    guess_resource,
    not_permitted_message,
    rbac_documents,
    required_permissions,
    subject_of,
)

DEPLOYMENTS = ResourceType("apps", "deployments")
SERVICE_ACCOUNTS = ResourceType("", "serviceaccounts")


def obj(api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, object]:
    meta: dict[str, str] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def test_the_plural_rule_and_the_scope_of_built_in_kinds() -> None:
    assert guess_resource("apps/v1", "Deployment") == DEPLOYMENTS
    assert guess_resource("networking.k8s.io/v1", "Ingress") == ResourceType("networking.k8s.io", "ingresses")
    assert guess_resource("networking.k8s.io/v1", "NetworkPolicy").plural == "networkpolicies"
    assert guess_resource("gateway.networking.k8s.io/v1", "Gateway").plural == "gateways"
    assert guess_resource("v1", "Namespace") == ResourceType("", "namespaces", namespaced=False)
    assert guess_resource("rbac.authorization.k8s.io/v1", "ClusterRole").namespaced is False


def test_every_type_gets_the_reconcilers_verbs_once_per_namespace() -> None:
    objects = [obj("apps/v1", "Deployment", "web"), obj("apps/v1", "Deployment", "api", "shop"),
               obj("v1", "ServiceAccount", "web", "other"), obj("v1", "Namespace", "extra")]
    needed = required_permissions(objects, "shop")
    assert needed == sorted(
        [Permission("", ResourceType("", "namespaces", False), verb) for verb in VERBS]
        + [Permission("other", SERVICE_ACCOUNTS, verb) for verb in VERBS]
        + [Permission("shop", DEPLOYMENTS, verb) for verb in VERBS])
    assert VERBS == ("get", "list", "create", "update", "patch", "delete")


def test_the_identity_as_a_message_names_it() -> None:
    assert subject_of("system:serviceaccount:team-a:default") == "ServiceAccount team-a/default"
    assert subject_of(None) == "the operator's own identity"
    assert subject_of("alice") == "user alice"


def test_the_message_lists_every_missing_permission_and_the_command() -> None:
    missing = [Permission("team-a", DEPLOYMENTS, "get"), Permission("team-a", DEPLOYMENTS, "patch"),
               Permission("team-a", DEPLOYMENTS, "create"), Permission("team-a", SERVICE_ACCOUNTS, "create"),
               Permission("", ResourceType("", "namespaces", False), "get")]
    message = not_permitted_message("system:serviceaccount:team-a:default", missing, "team-a", "shop")
    assert message == (
        "ServiceAccount team-a/default may not get namespaces (cluster-scoped); "
        "create serviceaccounts in namespace team-a; "
        "get, create, patch deployments.apps in namespace team-a; the Application's objects need it. "
        "`oam-operator rbac shop -n team-a` prints a Role and RoleBinding that grant it")


def test_a_role_and_binding_per_namespace_and_a_cluster_role_for_cluster_scoped_objects() -> None:
    permissions = required_permissions(
        [obj("apps/v1", "Deployment", "web"), obj("v1", "ConfigMap", "c"), obj("v1", "Namespace", "n")], "shop")
    role, binding, cluster_role, cluster_binding = rbac_documents(permissions, "shop", "web", "deployer")
    assert role == {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "oam-web", "namespace": "shop"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": list(VERBS)},
                  {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": list(VERBS)}]}
    assert binding == {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "oam-web", "namespace": "shop"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "oam-web"},
        "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": "shop"}]}
    assert cluster_role["kind"] == "ClusterRole" and cluster_role["metadata"] == {"name": "oam-shop-web"}
    assert cluster_role["rules"] == [{"apiGroups": [""], "resources": ["namespaces"], "verbs": list(VERBS)}]
    assert cluster_binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                          "name": "oam-shop-web"}
    assert cluster_binding["subjects"] == binding["subjects"]
