"""Static kind priorities within one apply order and one delete order (docs/reconciler.md#kind-priorities).

Within a wave, cluster-wide plumbing (namespaces, webhooks, CRDs, classes, roles) goes first
and APIServices last; deletion runs the other way round, keeping namespaces and classes until
their users are gone.

Beyond the Go implementation (docs/reconciler.md#kind-priorities): the objects a Pod names and
needs before it can start — ServiceAccounts and PersistentVolumeClaims, like ConfigMaps and
Secrets — apply at -1, before the workloads of their wave (a Deployment racing its ServiceAccount
posts ``FailedCreate … serviceaccount not found`` Warning Events), and delete at 2, after them.
"""

from __future__ import annotations

__all__ = ["apply_priority", "delete_priority"]

_APPLY: dict[str, int] = {
    "Namespace": -4,
    "ValidatingWebhookConfiguration.admissionregistration.k8s.io": -3,
    "MutatingWebhookConfiguration.admissionregistration.k8s.io": -3,
    "CustomResourceDefinition.apiextensions.k8s.io": -2,
    "IngressClass.networking.k8s.io": -2,
    "RuntimeClass.node.k8s.io": -2,
    "PriorityClass.scheduling.k8s.io": -2,
    "StorageClass.storage.k8s.io": -2,
    "ClusterRole.rbac.authorization.k8s.io": -2,
    "Role.rbac.authorization.k8s.io": -2,
    "ConfigMap": -1,
    "Secret": -1,
    "ServiceAccount": -1,
    "PersistentVolumeClaim": -1,
    "ClusterRoleBinding.rbac.authorization.k8s.io": -1,
    "RoleBinding.rbac.authorization.k8s.io": -1,
    "APIService.apiregistration.k8s.io": 1,
}

_DELETE: dict[str, int] = {
    "CustomResourceDefinition.apiextensions.k8s.io": -1,
    "APIService.apiregistration.k8s.io": -1,
    "ValidatingWebhookConfiguration.admissionregistration.k8s.io": 1,
    "MutatingWebhookConfiguration.admissionregistration.k8s.io": 1,
    "Service": 2,
    "ConfigMap": 2,
    "Secret": 2,
    "ServiceAccount": 2,
    "PersistentVolumeClaim": 2,
    "Namespace": 3,
    "IngressClass.networking.k8s.io": 4,
    "RuntimeClass.node.k8s.io": 4,
    "PriorityClass.scheduling.k8s.io": 4,
    "StorageClass.storage.k8s.io": 4,
}


def apply_priority(group_kind: str) -> int:
    """Lower applies first within one apply order; unlisted kinds are 0."""
    return _APPLY.get(group_kind, 0)


def delete_priority(group_kind: str) -> int:
    """Lower deletes first within one delete order; unlisted kinds are 0."""
    return _DELETE.get(group_kind, 0)
