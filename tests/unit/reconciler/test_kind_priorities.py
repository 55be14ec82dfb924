"""Kind priorities within one apply order and one delete order (docs/reconciler.md#kind-priorities)."""

from __future__ import annotations

import pytest

from oam_operator.reconciler.priorities import apply_priority, delete_priority


@pytest.mark.parametrize(
    ("group_kind", "priority"),
    [
        ("Namespace", -4),
        ("ValidatingWebhookConfiguration.admissionregistration.k8s.io", -3),
        ("MutatingWebhookConfiguration.admissionregistration.k8s.io", -3),
        ("CustomResourceDefinition.apiextensions.k8s.io", -2),
        ("IngressClass.networking.k8s.io", -2),
        ("RuntimeClass.node.k8s.io", -2),
        ("PriorityClass.scheduling.k8s.io", -2),
        ("StorageClass.storage.k8s.io", -2),
        ("ClusterRole.rbac.authorization.k8s.io", -2),
        ("Role.rbac.authorization.k8s.io", -2),
        ("ConfigMap", -1),
        ("Secret", -1),
        ("ServiceAccount", -1),
        ("PersistentVolumeClaim", -1),
        ("ClusterRoleBinding.rbac.authorization.k8s.io", -1),
        ("RoleBinding.rbac.authorization.k8s.io", -1),
        ("Deployment.apps", 0),
        ("Service", 0),
        ("Foo.testing.oam-operator.dev", 0),
        ("APIService.apiregistration.k8s.io", 1),
        ("ConfigMap.example.com", 0),
    ],
)
def test_apply_priority(group_kind: str, priority: int) -> None:
    assert apply_priority(group_kind) == priority


@pytest.mark.parametrize(
    ("group_kind", "priority"),
    [
        ("CustomResourceDefinition.apiextensions.k8s.io", -1),
        ("APIService.apiregistration.k8s.io", -1),
        ("Deployment.apps", 0),
        ("ValidatingWebhookConfiguration.admissionregistration.k8s.io", 1),
        ("MutatingWebhookConfiguration.admissionregistration.k8s.io", 1),
        ("Service", 2),
        ("ConfigMap", 2),
        ("Secret", 2),
        ("ServiceAccount", 2),
        ("PersistentVolumeClaim", 2),
        ("Namespace", 3),
        ("IngressClass.networking.k8s.io", 4),
        ("RuntimeClass.node.k8s.io", 4),
        ("PriorityClass.scheduling.k8s.io", 4),
        ("StorageClass.storage.k8s.io", 4),
        ("Role.rbac.authorization.k8s.io", 0),
    ],
)
def test_delete_priority(group_kind: str, priority: int) -> None:
    assert delete_priority(group_kind) == priority
