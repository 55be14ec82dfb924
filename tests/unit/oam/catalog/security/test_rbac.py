"""The ``rbac`` trait (docs/transform.md#access-and-security): Role and RoleBinding, cluster-wide variants, messages."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.traits import NS, document, kinds, objects, trait, trait_error, webservice

RULES = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]
RBAC = "rbac.authorization.k8s.io"


def test_role_and_binding() -> None:
    text = document(webservice("api", trait("rbac", rules=[*RULES, {"resources": ["pods"], "verbs": ["get"]}])))
    assert kinds(text)[-2:] == [("Role", "api"), ("RoleBinding", "api")]
    role, binding = objects(text)[-2:]
    meta = {"name": "api", "namespace": NS, "labels": {"app": "api"}}
    assert role == {
        "apiVersion": f"{RBAC}/v1",
        "kind": "Role",
        "metadata": meta,
        "rules": [*RULES, {"resources": ["pods"], "verbs": ["get"]}],
    }
    assert binding == {
        "apiVersion": f"{RBAC}/v1",
        "kind": "RoleBinding",
        "metadata": meta,
        "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": "api"},
        "subjects": [{"kind": "ServiceAccount", "name": "api", "namespace": NS}],
    }


def test_cluster_wide_adds_cluster_role_and_binding() -> None:
    text = document(webservice("api", trait("rbac", rules=RULES, clusterWide=True)))
    assert kinds(text)[-4:] == [
        ("Role", "api"),
        ("RoleBinding", "api"),
        ("ClusterRole", "api"),
        ("ClusterRoleBinding", "api"),
    ]
    cluster_role, cluster_binding = objects(text)[-2:]
    meta = {"name": "api", "labels": {"app": "api"}}
    assert cluster_role == {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": meta, "rules": RULES}
    assert cluster_binding == {
        "apiVersion": f"{RBAC}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": meta,
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "api"},
        "subjects": [{"kind": "ServiceAccount", "name": "api", "namespace": NS}],
    }
    assert kinds(document(webservice("api", trait("rbac", rules=RULES, clusterWide=False))))[-1] == (
        "RoleBinding",
        "api",
    )


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({}, "rbac: required property 'rules' missing or empty"),
        ({"rules": []}, "rbac: required property 'rules' missing or empty"),
        ({"rules": [RULES[0], "x"]}, "rbac: rules[1]: expected object"),
        ({"rules": [{"verbs": ["get"]}]}, "rbac: rules[0].resources must not be empty"),
        ({"rules": [{"resources": ["pods"], "verbs": []}]}, "rbac: rules[0].verbs must not be empty"),
        (
            {"rules": [{"apiGroups": "", "resources": ["pods"], "verbs": ["get"]}]},
            "rbac: rules[0].apiGroups: expected array",
        ),
        ({"rules": [{"resources": ["pods", 1], "verbs": ["get"]}]}, "rbac: rules[0].resources[1]: expected string"),
        ({"rules": [{"resources": ["pods"], "verbs": "get"}]}, "rbac: rules[0].verbs: expected array"),
        ({"rules": RULES, "clusterWide": "yes"}, "rbac: clusterWide must be a bool"),
    ],
)
def test_messages(props: dict[str, Any], message: str) -> None:
    assert trait_error(webservice("api", trait("rbac", **props))) == f'component "api" trait "rbac": {message}'
