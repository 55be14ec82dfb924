"""What an Application's identity must be allowed to do, derived from the transform's output
(docs/operator.md#not-permitted-and-the-role-it-needs).

Pure: the objects in, the permissions, the refusal's message and the Role and RoleBinding out.
The pass asks the API server which of the permissions are missing (``accessreview.py``);
``oam-operator rbac`` prints the Role. Each object's type needs the verbs the reconciler sends
for it: ``get`` and ``list`` (reads, batched), ``create``, ``patch`` (server-side apply),
``update`` (the ``Replace`` update policy, finalizers) and ``delete`` (pruning and deletion).
The operator's own watches and Events use the operator's identity, so ``watch`` is not needed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "VERBS",
    "Permission",
    "ResourceType",
    "guess_resource",
    "not_permitted_message",
    "rbac_documents",
    "required_permissions",
    "subject_of",
]

VERBS = ("get", "list", "create", "update", "patch", "delete")

#: Built-in kinds that are not namespaced (the offline guess; the operator asks discovery).
CLUSTER_SCOPED = frozenset({
    ("", "Namespace"), ("", "PersistentVolume"), ("", "Node"),
    ("rbac.authorization.k8s.io", "ClusterRole"), ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"), ("apiregistration.k8s.io", "APIService"),
    ("storage.k8s.io", "StorageClass"), ("storage.k8s.io", "CSIDriver"), ("scheduling.k8s.io", "PriorityClass"),
    ("networking.k8s.io", "IngressClass"), ("node.k8s.io", "RuntimeClass"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("gateway.networking.k8s.io", "GatewayClass"),
})


@dataclass(frozen=True, order=True)
class ResourceType:
    """A resource as RBAC names it: API group and plural, and whether it is namespaced."""

    group: str
    plural: str
    namespaced: bool = True

    @property
    def qualified(self) -> str:
        """``deployments.apps``, ``serviceaccounts`` (the core group): kubectl's spelling."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


@dataclass(frozen=True, order=True)
class Permission:
    """One verb on one resource type in one namespace (``""``: cluster-scoped)."""

    namespace: str
    resource: ResourceType
    verb: str


def _split(api_version: str) -> str:
    group, sep, _ = api_version.partition("/")
    return group if sep else ""


def guess_resource(api_version: str, kind: str) -> ResourceType:
    """The plural and scope of a kind without asking the API server: the built-in rule for
    plurals (lower case; ``…s`` → ``…ses``, ``…y`` → ``…ies``, else ``…s``) and the table of
    cluster-scoped built-in kinds."""
    group, lower = _split(api_version), kind.lower()
    if lower.endswith("s"):
        plural = lower + "es"
    elif lower.endswith("y") and lower[-2:-1] not in ("a", "e", "i", "o", "u"):
        plural = lower[:-1] + "ies"
    else:
        plural = lower + "s"
    return ResourceType(group, plural, (group, kind) not in CLUSTER_SCOPED)


Resolver = Callable[[str, str], ResourceType]
"""(apiVersion, kind) → its resource type."""


def required_permissions(objects: Iterable[Mapping[str, Any]], namespace: str,
                         resolve: Resolver = guess_resource) -> list[Permission]:
    """Every verb on every resource type the objects need, per namespace (an object without
    one is in the Application's ``namespace``), sorted."""
    needed: set[Permission] = set()
    for obj in objects:
        resource = resolve(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
        where = str((obj.get("metadata") or {}).get("namespace") or namespace) if resource.namespaced else ""
        needed.update(Permission(where, resource, verb) for verb in VERBS)
    return sorted(needed)


def subject_of(user: str | None) -> str:
    """How a message names the identity: ``ServiceAccount team-a/default`` for
    ``system:serviceaccount:team-a:default``; the operator's own identity when ``None``."""
    if user is None:
        return "the operator's own identity"
    parts = user.split(":")
    if len(parts) == 4 and parts[:2] == ["system", "serviceaccount"]:
        return f"ServiceAccount {parts[2]}/{parts[3]}"
    return f"user {user}"


def _grouped(missing: Sequence[Permission]) -> list[str]:
    """``get, create deployments.apps`` per resource type, in the namespaces' order."""
    by_type: dict[tuple[str, ResourceType], list[str]] = {}
    for permission in missing:
        by_type.setdefault((permission.namespace, permission.resource), []).append(permission.verb)
    parts = []
    for (where, resource), verbs in sorted(by_type.items()):
        ordered = [verb for verb in VERBS if verb in verbs] + sorted(v for v in verbs if v not in VERBS)
        scope = f" in namespace {where}" if where else " (cluster-scoped)"
        parts.append(f"{', '.join(ordered)} {resource.qualified}{scope}")
    return parts


def not_permitted_message(user: str | None, missing: Sequence[Permission], namespace: str, name: str) -> str:
    """The ``NotPermitted`` message: who, everything missing (as the API server confirmed) and
    the command printing the Role that grants it all."""
    what = "; ".join(_grouped(missing))
    command = f"oam-operator rbac {name} -n {namespace}"
    return (f"{subject_of(user)} may not {what}; the Application's objects need it. "
            f"`{command}` prints a Role and RoleBinding that grant it")


def _rules(permissions: Iterable[Permission]) -> list[dict[str, Any]]:
    """One rule per API group, its resources and verbs sorted (what ``kubectl create role`` writes)."""
    by_group: dict[str, set[str]] = {}
    verbs: dict[str, set[str]] = {}
    for permission in permissions:
        by_group.setdefault(permission.resource.group, set()).add(permission.resource.plural)
        verbs.setdefault(permission.resource.group, set()).add(permission.verb)
    return [{"apiGroups": [group], "resources": sorted(by_group[group]),
             "verbs": [verb for verb in VERBS if verb in verbs[group]]}
            for group in sorted(by_group)]


def rbac_documents(permissions: Sequence[Permission], namespace: str, name: str,
                   service_account: str) -> list[dict[str, Any]]:
    """A Role and a RoleBinding per namespace (a ClusterRole and ClusterRoleBinding for
    cluster-scoped objects) granting ``permissions`` to ``service_account`` of ``namespace``,
    named ``oam-<Application>``."""
    role_name = f"oam-{name}"
    subject = {"kind": "ServiceAccount", "name": service_account, "namespace": namespace}
    rbac = "rbac.authorization.k8s.io/v1"
    documents: list[dict[str, Any]] = []
    for where in sorted({p.namespace for p in permissions}, key=lambda n: (n == "", n)):
        rules = _rules(p for p in permissions if p.namespace == where)
        if where:
            meta = {"name": role_name, "namespace": where}
            documents.append({"apiVersion": rbac, "kind": "Role", "metadata": meta, "rules": rules})
            documents.append({"apiVersion": rbac, "kind": "RoleBinding", "metadata": dict(meta),
                              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                          "name": role_name},
                              "subjects": [subject]})
        else:
            cluster_name = f"oam-{namespace}-{name}"
            documents.append({"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": cluster_name},
                              "rules": rules})
            documents.append({"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": cluster_name},
                              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                          "name": cluster_name},
                              "subjects": [subject]})
    return documents
