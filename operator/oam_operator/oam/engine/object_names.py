"""Names the API server would refuse, refused by the transform first
(docs/operator.md#identity-hostile-input-and-limits).

A component's name is a DNS-1123 subdomain (docs/transform.md#kubernetes-name-checks), but the objects generated
from it put that name where Kubernetes is stricter: a Service's name is a DNS-1123 label (no dots), a
container's name a DNS-1123 label (no dots), a label value at most 63 characters. Without this check
the first object the API server refuses (422) is found half-way through an apply wave; with
it the transform fails before anything is touched, naming the component, the object, the
field and the limit.

The rules per generated kind (what the API server validates, checked against it in
``tests/integration/reconciler/test_name_limits.py``):

===================================  ======================================================
kind                                 ``metadata.name``
===================================  ======================================================
Service, Namespace                   DNS-1123 label, ≤ 63 (Kubernetes ≥ 1.34 no longer needs a
                                     Service's name to start with a letter)
CronJob                              DNS-1123 subdomain, ≤ 52 (11 characters are left for
                                     the Jobs' suffix)
Job                                  DNS-1123 subdomain, ≤ 63 (the name is copied into the
                                     ``batch.kubernetes.io/job-name`` label of its Pods)
Role, ClusterRole, RoleBinding,      a path segment (not ``.``/``..``, no ``/`` or ``%``):
ClusterRoleBinding                   RBAC allows names such as ``system:viewer``
every other kind (custom ones too)   DNS-1123 subdomain, ≤ 253
===================================  ======================================================

On every object: label keys are qualified names and label values valid label values (≤ 63),
on ``metadata.labels``, on the pod template's labels and on a ``matchLabels`` selector;
container, init-container and ephemeral-container names are DNS-1123 labels (≤ 63).
Annotations are not checked (their limit is on the total size, which the API reports).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from oam_operator.common.dns1123 import DNS1123_LABEL_MAX, DNS1123_SUBDOMAIN_MAX, is_dns1123_label, is_dns1123_subdomain
from oam_operator.oam.document.names import label_value_errors, qualified_name_errors
from oam_operator.oam.errors import GenerationError
from oam_operator.oam.formatting.gofmt import go_quote

__all__ = ["NameRule", "check_object_names", "name_rule"]

_RBAC = "rbac.authorization.k8s.io"

# (group, kind) → path of the pod spec inside the object
_POD_SPECS: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "Pod"): ("spec",),
    ("", "PodTemplate"): ("template", "spec"),
    ("", "ReplicationController"): ("spec", "template", "spec"),
    ("apps", "Deployment"): ("spec", "template", "spec"),
    ("apps", "StatefulSet"): ("spec", "template", "spec"),
    ("apps", "DaemonSet"): ("spec", "template", "spec"),
    ("apps", "ReplicaSet"): ("spec", "template", "spec"),
    ("batch", "Job"): ("spec", "template", "spec"),
    ("batch", "CronJob"): ("spec", "jobTemplate", "spec", "template", "spec"),
}


class NameRule:
    """One naming rule: a description for messages, a length limit (``None``: none) and a predicate."""

    def __init__(self, description: str, limit: int | None, check: Callable[[str], object]) -> None:
        self.description = description
        self.limit = limit
        self._check = check

    def allows(self, value: str) -> bool:
        return (self.limit is None or len(value) <= self.limit) and bool(self._check(value))


DNS1123_LABEL = NameRule(
    "a DNS-1123 label (at most 63 characters: lower-case letters, digits and '-', starting and ending "
    "with a letter or digit)", DNS1123_LABEL_MAX, is_dns1123_label)
SUBDOMAIN = NameRule(
    "a DNS-1123 subdomain (at most 253 characters: lower-case letters, digits, '-' and '.', starting and "
    "ending with a letter or digit)", DNS1123_SUBDOMAIN_MAX, is_dns1123_subdomain)
CRONJOB = NameRule(
    "a DNS-1123 subdomain of at most 52 characters (a CronJob's limit: its Jobs add 11)", 52,
    is_dns1123_subdomain)
JOB = NameRule(
    "a DNS-1123 subdomain of at most 63 characters (a Job's limit: its name becomes a label value)", 63,
    is_dns1123_subdomain)
PATH_SEGMENT = NameRule(
    "a path segment (not empty, '.' or '..', without '/' or '%')", None,
    lambda value: value not in (".", "..") and "/" not in value and "%" not in value and value != "")

_NAME_RULES: dict[tuple[str, str], NameRule] = {
    ("", "Service"): DNS1123_LABEL,
    ("", "Namespace"): DNS1123_LABEL,
    ("batch", "CronJob"): CRONJOB,
    ("batch", "Job"): JOB,
    (_RBAC, "Role"): PATH_SEGMENT,
    (_RBAC, "ClusterRole"): PATH_SEGMENT,
    (_RBAC, "RoleBinding"): PATH_SEGMENT,
    (_RBAC, "ClusterRoleBinding"): PATH_SEGMENT,
}


def _group(api_version: Any) -> str:
    text = str(api_version or "")
    return text.split("/", 1)[0] if "/" in text else ""


def name_rule(api_version: Any, kind: Any) -> NameRule:
    """The rule for ``metadata.name`` of a kind (the table in the module docstring)."""
    return _NAME_RULES.get((_group(api_version), str(kind or "")), SUBDOMAIN)


def _get(obj: Any, path: Iterable[str]) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def _label_problems(labels: Any, where: str) -> Iterator[str]:
    if not isinstance(labels, Mapping):
        return
    for key in sorted(labels, key=str):
        value = labels[key]
        if not isinstance(key, str) or qualified_name_errors(key):
            errors = qualified_name_errors(key) if isinstance(key, str) else ["must be a string"]
            yield f"{where} key {go_quote(str(key))}: {'; '.join(errors)}"
        elif isinstance(value, str) and label_value_errors(value):
            yield f"{where}[{key}] {go_quote(value)}: {'; '.join(label_value_errors(value))}"


def _object_problems(obj: Mapping[str, Any]) -> Iterator[str]:
    group_kind = (_group(obj.get("apiVersion")), str(obj.get("kind") or ""))
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = meta.get("name")
    if isinstance(name, str):
        rule = name_rule(obj.get("apiVersion"), obj.get("kind"))
        if not rule.allows(name):
            yield f"metadata.name {go_quote(name)} is not {rule.description}"
    yield from _label_problems(meta.get("labels"), "metadata.labels")
    pod_path = _POD_SPECS.get(group_kind)
    if pod_path is None:
        return
    template_path = pod_path[:-1]
    if template_path:
        dotted = ".".join(template_path)
        yield from _label_problems(_get(obj, (*template_path, "metadata", "labels")), f"{dotted}.metadata.labels")
        selector_path = (*template_path[:-1], "selector", "matchLabels")
        yield from _label_problems(_get(obj, selector_path), ".".join(selector_path))
    pod = _get(obj, pod_path)
    if not isinstance(pod, Mapping):
        return
    for field in ("initContainers", "containers", "ephemeralContainers"):
        containers = pod.get(field)
        if not isinstance(containers, list):
            continue
        for index, container in enumerate(containers):
            cname = container.get("name") if isinstance(container, Mapping) else None
            if isinstance(cname, str) and not DNS1123_LABEL.allows(cname):
                path = f"{'.'.join(pod_path)}.{field}[{index}].name"
                yield f"{path} {go_quote(cname)} is not {DNS1123_LABEL.description}"


def check_object_names(owner: str | None, unit: str, objects: Iterable[Mapping[str, Any]]) -> None:
    """Raise ``GenerationError`` for the first name in ``objects`` the API server would refuse.

    ``owner`` is the component that generated them (``None`` for the document's own
    objects, then ``unit`` names the tree application).
    """
    who = f"component {go_quote(owner)}" if owner is not None else f"application unit {go_quote(unit)}"
    for obj in objects:
        for problem in _object_problems(obj):
            name = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), Mapping) else None
            raise GenerationError(f"{who}: {obj.get('kind')} {go_quote(str(name))}: {problem}")
