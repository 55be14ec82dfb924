"""What an Application's identity must be allowed to do, derived from the transform's output
(docs/operator.md#not-permitted-and-the-role-it-needs).

Pure: the objects in, the permissions, the refusal's message and the Role and RoleBinding out.
The pass asks the API server which of the permissions are missing (``accessreview.py``);
``oam-operator rbac`` prints the Role. Each object's type needs the verbs the reconciler sends
for it: ``get`` and ``list`` (reads, batched), ``create``, ``patch`` (server-side apply),
``update`` (the ``Replace`` update policy, finalizers) and ``delete`` (pruning and deletion).
The operator's own watches and Events use the operator's identity, so ``watch`` is not needed.
Beyond the objects' own types, the identity also writes RBAC roles and bindings (``escalate``,
``bind``), lists CRDs' instances cluster-wide in the deletion guard, and reads and creates
target namespaces when cross-namespace objects are allowed: one list, used by the review and
by ``rbac`` alike, so the printed grant is what the review checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DELETE_VERBS",
    "VERBS",
    "Permission",
    "ResourceType",
    "created_namespaces",
    "deletion_permissions",
    "guess_resource",
    "not_permitted_message",
    "rbac_documents",
    "rbac_notes",
    "required_permissions",
    "subject_of",
]

VERBS = ("get", "list", "create", "update", "patch", "delete")
#: The order verbs are written in: the reconciler's, then RBAC's own.
VERB_ORDER = (*VERBS, "escalate", "bind")

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
    """One verb on one resource type in one namespace (``""``: cluster-scoped, or all namespaces
    for a namespaced type), on the object ``name`` only when one is given (RBAC's resourceNames)."""

    namespace: str
    resource: ResourceType
    verb: str
    name: str = ""


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


RBAC = "rbac.authorization.k8s.io"
CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
API_SERVICE = ("apiregistration.k8s.io", "APIService")
NAMESPACES = ResourceType("", "namespaces", namespaced=False)
#: The verbs a deletion sends: reads (batched), finalizer and orphan patches, deletes.
DELETE_VERBS = ("get", "list", "patch", "delete")


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


SSA_POLICIES = ("SsaMerge", "SsaOverride")


def _created_by_name(obj: Mapping[str, Any], update_policy: str, domain: str) -> bool:
    """Whether the reconciler creates ``obj`` with a server-side apply, whose URL names it, rather
    than a POST, which names nothing (the ``Replace`` and ``Recreate`` update policies): RBAC's
    ``resourceNames`` match only a request that names its object."""
    annotations = _meta(obj).get("annotations")
    annotations = annotations if isinstance(annotations, Mapping) else {}
    policy = str(annotations.get(f"{domain}/update-policy") or "") if domain else ""
    return (policy if policy and policy != "Default" else update_policy) in SSA_POLICIES


def _escalation(obj: Mapping[str, Any], where: str, named: bool = True) -> list[Permission]:
    """RBAC's escalation check (docs/operator.md#roles-and-bindings-the-application-creates): a
    Role or ClusterRole may be written only by an identity holding every right it grants, or
    with ``escalate`` on it; a binding only by one holding the role's rights, or with ``bind``
    on the role it names. The rights to hold cannot be derived for an ``aggregationRule``
    (RBAC asks for cluster-admin then), so ``escalate`` and ``bind`` it is, named."""
    group, kind = _split(str(obj.get("apiVersion") or "")), str(obj.get("kind") or "")
    if group != RBAC:
        return []
    name = str(_meta(obj).get("name") or "")
    if kind in ("Role", "ClusterRole"):
        plural = "roles" if kind == "Role" else "clusterroles"
        return [Permission(where, ResourceType(RBAC, plural, kind == "Role"), "escalate", name if named else "")]
    if kind in ("RoleBinding", "ClusterRoleBinding"):
        ref = obj.get("roleRef")
        ref = ref if isinstance(ref, Mapping) else {}
        plural = "roles" if ref.get("kind") == "Role" else "clusterroles"
        return [Permission(where, ResourceType(RBAC, plural, plural == "roles"), "bind", str(ref.get("name") or ""))]
    return []


def _guarded_types(obj: Mapping[str, Any]) -> list[Permission]:
    """The deletion guard (docs/reconciler.md#deletion-checks) lists, cluster-wide and with the
    Application's identity, the instances of each CRD and APIService the Application owns before
    it deletes them: ``list`` in all namespaces."""
    group, kind = _split(str(obj.get("apiVersion") or "")), str(obj.get("kind") or "")
    spec = _spec(obj)
    if (group, kind) == CRD:
        names = spec.get("names")
        plural = str((names if isinstance(names, Mapping) else {}).get("plural") or "")
        if not plural:  # a CRD's name is <plural>.<group>
            plural = str(_meta(obj).get("name") or "").partition(".")[0]
        namespaced = str(spec.get("scope") or "Namespaced") == "Namespaced"
        return [Permission("", ResourceType(str(spec.get("group") or ""), plural, namespaced), "list")]
    if (group, kind) == API_SERVICE:
        return [Permission("", ResourceType(str(spec.get("group") or ""), "*", True), "list")]
    return []


def required_permissions(objects: Iterable[Mapping[str, Any]], namespace: str,
                         resolve: Resolver = guess_resource, *, cross_namespace: bool = False,
                         update_policy: str = "SsaMerge", domain: str = "") -> list[Permission]:
    """Everything the Application's identity does for ``objects`` (an object without a namespace
    is in the Application's ``namespace``), sorted: the reconciler's verbs on every type, per
    namespace; ``escalate`` on the roles and ``bind`` on the roles bound (``_escalation``); the
    deletion guard's cluster-wide ``list`` (``_guarded_types``); and with ``cross_namespace``
    (the operator's ``--allow-cross-namespace-objects``) the reconciler's read of every target
    namespace the objects do not declare, and its create when one is missing. ``update_policy`` is
    the Application's (its objects' ``<domain>/update-policy`` annotation overrides it)."""
    needed: set[Permission] = set()
    declared: set[str] = set()
    targets: set[str] = set()
    for obj in objects:
        resource = resolve(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
        where = str(_meta(obj).get("namespace") or namespace) if resource.namespaced else ""
        needed.update(Permission(where, resource, verb) for verb in VERBS)
        needed.update(_escalation(obj, where, _created_by_name(obj, update_policy, domain)))
        needed.update(_guarded_types(obj))
        if resource == NAMESPACES:
            declared.add(str(_meta(obj).get("name") or ""))
        elif where:
            targets.add(where)
    if cross_namespace or any(target != namespace for target in targets):
        for target in sorted(targets - declared):
            needed.add(Permission("", NAMESPACES, "get", target))
            needed.add(Permission("", NAMESPACES, "create"))
    return sorted(needed)


def created_namespaces(objects: Iterable[Mapping[str, Any]]) -> list[str]:
    """The Namespaces among ``objects``: the Application creates them itself."""
    return sorted({str(_meta(obj).get("name") or "") for obj in objects
                   if obj.get("kind") == "Namespace" and _split(str(obj.get("apiVersion") or "")) == ""})


def deletion_permissions(items: Iterable[tuple[str, str, str, str]], resolve: Resolver = guess_resource,
                         ) -> list[Permission]:
    """What the delete branch does with the Application's identity for inventory items
    ``(apiVersion, kind, namespace, name)``: ``DELETE_VERBS`` on each type, and the deletion
    guard's cluster-wide ``list`` of each CRD's instances (a CRD's name is ``<plural>.<group>``)."""
    needed: set[Permission] = set()
    for api_version, kind, where, name in items:
        resource = resolve(api_version, kind)
        scope = where if resource.namespaced else ""
        needed.update(Permission(scope, resource, verb) for verb in DELETE_VERBS)
        if (_split(api_version), kind) == CRD:
            plural, _, group = name.partition(".")
            needed.add(Permission("", ResourceType(group, plural, True), "list"))
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


def _ordered(verbs: Iterable[str]) -> list[str]:
    verbs = set(verbs)
    return [verb for verb in VERB_ORDER if verb in verbs] + sorted(verbs - set(VERB_ORDER))


def _scope(permission: Permission) -> str:
    if permission.namespace:
        return f" in namespace {permission.namespace}"
    return " in all namespaces" if permission.resource.namespaced else " (cluster-scoped)"


def _grouped(missing: Sequence[Permission]) -> list[str]:
    """``get, create deployments.apps in namespace a`` per resource type and object, in the
    namespaces' order (``bind clusterroles.rbac.authorization.k8s.io view (cluster-scoped)``)."""
    by_type: dict[tuple[str, ResourceType, str], list[str]] = {}
    for permission in missing:
        by_type.setdefault((permission.namespace, permission.resource, permission.name), []).append(permission.verb)
    parts = []
    for (where, resource, name), verbs in sorted(by_type.items()):
        named = f" {name}" if name else ""
        parts.append(f"{', '.join(_ordered(verbs))} {resource.qualified}{named}"
                     f"{_scope(Permission(where, resource, verbs[0]))}")
    return parts


def not_permitted_message(user: str | None, missing: Sequence[Permission], namespace: str, name: str,
                          need: str = "the Application's objects need it") -> str:
    """The ``NotPermitted`` message: who, everything missing (as the API server confirmed), what
    needs it and the command printing the Role that grants it all."""
    what = "; ".join(_grouped(missing))
    command = f"oam-operator rbac {name} -n {namespace}"
    return (f"{subject_of(user)} may not {what}; {need}. "
            f"`{command}` prints a Role and RoleBinding that grant it")


def _rules(permissions: Iterable[Permission]) -> list[dict[str, Any]]:
    """The rules granting ``permissions``: one per API group and set of verbs, its resources
    sorted (what ``kubectl create role`` writes), then one per named object's resource and verb
    (``resourceNames``)."""
    verbs_of: dict[tuple[str, str], set[str]] = {}
    names_of: dict[tuple[str, str, str], set[str]] = {}
    for permission in permissions:
        resource = permission.resource
        if permission.name:
            names_of.setdefault((resource.group, resource.plural, permission.verb), set()).add(permission.name)
        else:
            verbs_of.setdefault((resource.group, resource.plural), set()).add(permission.verb)
    plain: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for (group, plural), verbs in sorted(verbs_of.items()):
        plain.setdefault((group, tuple(_ordered(verbs))), []).append(plural)
    rules: list[dict[str, Any]] = [{"apiGroups": [group], "resources": sorted(plurals), "verbs": list(verbs)}
                                   for (group, verbs), plurals in sorted(plain.items(), key=lambda e: e[0][0])]
    rules += [{"apiGroups": [group], "resources": [plural], "verbs": [verb], "resourceNames": sorted(names)}
              for (group, plural, verb), names in sorted(names_of.items())]
    return rules


def rbac_documents(permissions: Sequence[Permission], namespace: str, name: str, service_account: str,
                   created_namespaces: Iterable[str] = ()) -> list[dict[str, Any]]:
    """A Role and a RoleBinding per namespace (a ClusterRole and ClusterRoleBinding for
    cluster-scoped objects and cluster-wide rights) granting ``permissions`` to
    ``service_account`` of ``namespace``, named ``oam-<Application>``. The rights in a namespace
    the Application creates itself (``created_namespaces``) go into the ClusterRole: no Role can
    be put into a namespace before it exists."""
    role_name = f"oam-{name}"
    subject = {"kind": "ServiceAccount", "name": service_account, "namespace": namespace}
    rbac = "rbac.authorization.k8s.io/v1"
    created = set(created_namespaces)
    placed = [p if p.namespace not in created else Permission("", p.resource, p.verb, p.name) for p in permissions]
    documents: list[dict[str, Any]] = []
    for where in sorted({p.namespace for p in placed}, key=lambda n: (n == "", n)):
        rules = _rules(p for p in placed if p.namespace == where)
        if where:
            meta = {"name": role_name, "namespace": where}
            documents.append({"apiVersion": rbac, "kind": "Role", "metadata": meta, "rules": rules})
            documents.append({"apiVersion": rbac, "kind": "RoleBinding", "metadata": dict(meta),
                              "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": role_name},
                              "subjects": [subject]})
        else:
            cluster_name = f"oam-{namespace}-{name}"
            documents.append({"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": cluster_name},
                              "rules": rules})
            documents.append({"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": cluster_name},
                              "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": cluster_name},
                              "subjects": [subject]})
    return documents


def rbac_notes(permissions: Sequence[Permission], created_namespaces: Iterable[str] = ()) -> list[str]:
    """What the printed grant means beyond its rules, one sentence each, for the reader who
    applies it (``oam-operator rbac`` prints them as comments)."""
    notes = []
    verbs = {p.verb for p in permissions}
    if verbs & {"escalate", "bind"}:
        notes.append(
            "The Application creates RBAC roles or bindings. The API server lets an identity write a role only "
            "if it holds every right the role grants, or has `escalate` on that role, and a binding only if it "
            "holds the bound role's rights, or has `bind` on that role. These rules grant `escalate` and `bind` "
            "on the Application's own roles and the roles it binds, by name: whoever may change this Application "
            "may then grant through them any right, cluster-wide for ClusterRoles. Grant this only to an "
            "Application you would let hold those rights.")
    if any(p.verb == "list" and p.resource.namespaced and not p.namespace for p in permissions):
        notes.append(
            "The cluster-wide `list` of custom resources is the deletion guard's: before it deletes a "
            "CustomResourceDefinition, the operator looks in every namespace for instances that are not the "
            "Application's, with the Application's identity.")
    if any(p.resource == NAMESPACES and p.verb == "get" and p.name for p in permissions):
        notes.append(
            "The operator reads each target namespace and creates it when it is missing "
            "(--allow-cross-namespace-objects), with the Application's identity; `create` on namespaces "
            "(which RBAC cannot narrow to names) is used only for a target namespace that does not exist, so "
            "it may be left out when they all do.")
    created = sorted(set(created_namespaces) & {p.namespace for p in permissions})
    if created:
        notes.append(
            f"The rights in namespace{'s' if len(created) > 1 else ''} {', '.join(created)}, which the "
            "Application creates itself, are in the ClusterRole: a Role cannot be put into a namespace before it "
            "exists.")
    return notes
