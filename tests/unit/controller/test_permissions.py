"""What an Application's identity needs (controller/reconcile/permissions.py): the permissions derived
from objects, the NotPermitted message word for word, the Role and RoleBinding."""

from __future__ import annotations

from oam_operator.controller.reconcile.permissions import (
    DELETE_VERBS,
    VERBS,
    Permission,
    ResourceType,
    created_namespaces,
    deletion_permissions,
    guess_resource,
    not_permitted_message,
    rbac_documents,
    rbac_notes,
    required_permissions,
    subject_of,
)

DEPLOYMENTS = ResourceType("apps", "deployments")
NAMESPACES = ResourceType("", "namespaces", False)
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
    # An object in another namespace means cross-namespace objects are allowed: the reconciler
    # then reads every target namespace the objects do not declare, and creates a missing one.
    assert needed == sorted(
        [Permission("", NAMESPACES, verb) for verb in VERBS]
        + [Permission("", NAMESPACES, "get", "other"), Permission("", NAMESPACES, "get", "shop")]
        + [Permission("other", SERVICE_ACCOUNTS, verb) for verb in VERBS]
        + [Permission("shop", DEPLOYMENTS, verb) for verb in VERBS])
    assert VERBS == ("get", "list", "create", "update", "patch", "delete")
    confined = required_permissions([obj("apps/v1", "Deployment", "web")], "shop")
    assert confined == [Permission("shop", DEPLOYMENTS, verb) for verb in sorted(VERBS)]
    allowed = required_permissions([obj("apps/v1", "Deployment", "web")], "shop", cross_namespace=True)
    assert set(allowed) - set(confined) == {Permission("", NAMESPACES, "get", "shop"),
                                            Permission("", NAMESPACES, "create")}


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


CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "sealedsecrets.bitnami.com"},
       "spec": {"group": "bitnami.com", "scope": "Namespaced", "names": {"plural": "sealedsecrets", "kind": "SealedSecret"}}}
CLUSTER_ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "reader"}}
CLUSTER_BINDING = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": "reader"},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "reader"}}
ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "keys", "namespace": "kube-system"}}
ROLE_BINDING = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "keys", "namespace": "kube-system"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "keys"}}
CLUSTER_ROLES = ResourceType("rbac.authorization.k8s.io", "clusterroles", False)
ROLES = ResourceType("rbac.authorization.k8s.io", "roles")


def test_roles_need_escalate_and_bindings_bind_on_the_role_they_name() -> None:
    needed = set(required_permissions([CLUSTER_ROLE, CLUSTER_BINDING, ROLE, ROLE_BINDING], "team-a"))
    assert {p for p in needed if p.verb in ("escalate", "bind")} == {
        Permission("", CLUSTER_ROLES, "escalate", "reader"), Permission("", CLUSTER_ROLES, "bind", "reader"),
        Permission("kube-system", ROLES, "escalate", "keys"), Permission("kube-system", ROLES, "bind", "keys")}
    view = {**ROLE_BINDING, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}}
    assert Permission("kube-system", CLUSTER_ROLES, "bind", "view") in required_permissions([view], "team-a")


def test_the_deletion_guard_lists_each_crds_instances_in_all_namespaces() -> None:
    needed = required_permissions([CRD], "team-a")
    sealed = ResourceType("bitnami.com", "sealedsecrets")
    assert Permission("", sealed, "list") in needed
    assert [p for p in needed if p.resource == sealed] == [Permission("", sealed, "list")]
    cluster = {**CRD, "spec": {**CRD["spec"], "scope": "Cluster"}}  # type: ignore[dict-item]
    assert Permission("", ResourceType("bitnami.com", "sealedsecrets", False), "list") in required_permissions(
        [cluster], "team-a")
    assert deletion_permissions([("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "sealedsecrets.bitnami.com"),
                                 ("apps/v1", "Deployment", "kube-system", "web")]) == sorted(
        [Permission("", sealed, "list")]
        + [Permission("", ResourceType("apiextensions.k8s.io", "customresourcedefinitions", False), verb)
           for verb in DELETE_VERBS]
        + [Permission("kube-system", DEPLOYMENTS, verb) for verb in DELETE_VERBS])


def test_messages_name_objects_and_all_namespaces() -> None:
    missing = [Permission("", ResourceType("bitnami.com", "sealedsecrets"), "list"),
               Permission("", CLUSTER_ROLES, "escalate", "reader"), Permission("", CLUSTER_ROLES, "bind", "reader"),
               Permission("", NAMESPACES, "get", "kube-system")]
    message = not_permitted_message("system:serviceaccount:team-a:deployer", missing, "team-a", "sealed",
                                    "the Application's deletion needs it")
    assert message == (
        "ServiceAccount team-a/deployer may not get namespaces kube-system (cluster-scoped); "
        "list sealedsecrets.bitnami.com in all namespaces; "
        "escalate, bind clusterroles.rbac.authorization.k8s.io reader (cluster-scoped); "
        "the Application's deletion needs it. `oam-operator rbac sealed -n team-a` prints a Role and RoleBinding "
        "that grant it")


def test_named_rules_and_a_created_namespace_in_the_cluster_role() -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "made"}}
    objects = [namespace, CRD, CLUSTER_ROLE, CLUSTER_BINDING, obj("apps/v1", "Deployment", "web", "made"),
               obj("v1", "ConfigMap", "c", "team-a")]
    permissions = required_permissions(objects, "team-a")
    documents = rbac_documents(permissions, "team-a", "app", "deployer", created_namespaces(objects))
    assert [d["kind"] for d in documents] == ["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"]
    role, cluster_role = documents[0], documents[2]
    assert role["metadata"] == {"name": "oam-app", "namespace": "team-a"}
    assert role["rules"] == [{"apiGroups": [""], "resources": ["configmaps"], "verbs": list(VERBS)}]
    assert cluster_role["rules"] == [
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": list(VERBS)},
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": list(VERBS)},
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": list(VERBS)},
        {"apiGroups": ["bitnami.com"], "resources": ["sealedsecrets"], "verbs": ["list"]},
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterrolebindings", "clusterroles"],
         "verbs": list(VERBS)},
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"], "resourceNames": ["team-a"]},
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["bind"],
         "resourceNames": ["reader"]},
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["escalate"],
         "resourceNames": ["reader"]}]
    notes = rbac_notes(permissions, created_namespaces(objects))
    assert len(notes) == 4
    assert notes[0].startswith("The Application creates RBAC roles or bindings. The API server lets an identity "
                               "write a role only if it holds every right the role grants, or has `escalate`")
    assert notes[3] == ("The rights in namespace made, which the Application creates itself, are in the ClusterRole: "
                        "a Role cannot be put into a namespace before it exists.")
    assert rbac_notes(required_permissions([obj("v1", "ConfigMap", "c")], "team-a")) == []


def test_a_role_created_by_a_post_needs_escalate_without_a_name() -> None:
    """RBAC's resourceNames match only a request naming its object: a server-side apply's URL does,
    the POST of the Replace and Recreate update policies does not."""
    escalate = [p for p in required_permissions([CLUSTER_ROLE], "a") if p.verb == "escalate"]
    assert escalate == [Permission("", CLUSTER_ROLES, "escalate", "reader")]
    for policy in ("Replace", "Recreate"):
        posted = [p for p in required_permissions([CLUSTER_ROLE], "a", update_policy=policy) if p.verb == "escalate"]
        assert posted == [Permission("", CLUSTER_ROLES, "escalate")]
    annotated = {**CLUSTER_ROLE, "metadata": {"name": "reader", "annotations": {"d.io/update-policy": "Replace"}}}
    assert [p.name for p in required_permissions([annotated], "a", domain="d.io") if p.verb == "escalate"] == [""]
    default = {**CLUSTER_ROLE, "metadata": {"name": "reader", "annotations": {"d.io/update-policy": "Default"}}}
    assert [p.name for p in required_permissions([default], "a", domain="d.io") if p.verb == "escalate"] == ["reader"]
