"""The API server's side of NotPermitted (docs/operator.md#not-permitted-and-the-role-it-needs):
SelfSubjectAccessReviews as an impersonated ServiceAccount find exactly what its Role lacks, and
the watch of grants reports a RoleBinding's namespace; a watch the operator may not make stops."""

from __future__ import annotations

import threading
from typing import Any

from kubernetes import client

from oam_operator.controller.reconcile.accessreview import missing_permissions
from oam_operator.controller.reconcile.permissions import Permission, ResourceType, required_permissions
from oam_operator.controller.service.grantwatch import GrantWatch
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.ratelimit import RateLimiter
from tools.devcluster import ClusterHandle
from tools.devcluster.pytest_plugin import default_wait, wait_until

DEPLOYMENTS = ResourceType("apps", "deployments")


def _role(api: Any, namespace: str, name: str, rules: list[dict[str, Any]], account: str = "default") -> None:
    rbac = client.RbacAuthorizationV1Api(api)
    rbac.create_namespaced_role(namespace, {"metadata": {"name": name}, "rules": rules})
    rbac.create_namespaced_role_binding(namespace, {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]})


def test_the_reviews_find_exactly_what_the_role_lacks(cluster: ClusterHandle, namespace: str, kube_api: Any) -> None:
    operator = ClusterClient.from_kubeconfig(cluster.kubeconfig, rate_limiter=RateLimiter(0, 1))
    tenant = operator.impersonating(f"system:serviceaccount:{namespace}:default")
    try:
        objects = [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}},
                   {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "web"}}]
        needed = required_permissions(objects, namespace)
        assert missing_permissions(tenant, needed) == needed  # the default account may do nothing
        _role(kube_api, namespace, "deployments", [{"apiGroups": ["apps"], "resources": ["deployments"],
                                                    "verbs": ["get", "list", "create", "update", "patch"]}])

        def only_the_rest() -> list[Permission] | None:
            missing = missing_permissions(tenant, needed)
            return missing if missing is not None and len(missing) < len(needed) else None

        missing = wait_until(only_the_rest, default_wait(cluster), "the authorizer to see the Role")
        assert missing == sorted([Permission(namespace, DEPLOYMENTS, "delete")] + [
            p for p in needed if p.resource.plural == "serviceaccounts"])
        assert missing_permissions(operator, needed) == []  # the admin may do everything
    finally:
        operator.close()


def test_the_grant_watch_reports_the_namespace_and_stops_without_rights(
    cluster: ClusterHandle, namespace: str, kube_api: Any,
) -> None:
    operator = ClusterClient.from_kubeconfig(cluster.kubeconfig, rate_limiter=RateLimiter(0, 1))
    seen: list[str] = []
    changed = threading.Event()

    def on_grant(where: str) -> None:
        seen.append(where)
        changed.set()

    watch = GrantWatch(operator, [namespace], on_grant)
    unprivileged = GrantWatch(operator.impersonating(f"system:serviceaccount:{namespace}:default"), [namespace],
                              on_grant)
    try:
        watch.start()
        unprivileged.start()
        for thread in unprivileged._threads:  # 403 on its first LIST: it gives up instead of retrying
            thread.join(default_wait(cluster))
            assert not thread.is_alive()
        created = []

        def reported() -> bool:
            # A grant made before the watch's first LIST is not news; one after it is.
            name = f"grant-{len(created)}"
            _role(kube_api, namespace, name, [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}])
            created.append(name)
            return changed.wait(1.0)

        wait_until(reported, default_wait(cluster), "the watch to report a RoleBinding")
        assert set(seen) == {namespace}
        assert all(t.is_alive() for t in watch._threads)
    finally:
        watch.stop()
        unprivileged.stop()
        operator.close()


def test_reviews_of_escalate_and_bind_honour_the_role_names(cluster: ClusterHandle, namespace: str,
                                                            kube_api: Any) -> None:
    """docs/operator.md#roles-and-bindings-the-application-creates: the printed ``escalate`` and
    ``bind`` rules name their roles, and the review of each asks about that name."""
    operator = ClusterClient.from_kubeconfig(cluster.kubeconfig, rate_limiter=RateLimiter(0, 1))
    tenant = operator.impersonating(f"system:serviceaccount:{namespace}:default")
    roles = ResourceType("rbac.authorization.k8s.io", "roles")
    try:
        _role(kube_api, namespace, "writer", [
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["escalate", "bind"],
             "resourceNames": ["ours"]}])
        asked = [Permission(namespace, roles, "escalate", "ours"), Permission(namespace, roles, "bind", "ours"),
                 Permission(namespace, roles, "escalate", "theirs"), Permission(namespace, roles, "bind", "theirs")]

        def two_missing() -> list[Permission] | None:
            missing = missing_permissions(tenant, asked)
            return missing if missing is not None and len(missing) == 2 else None

        missing = wait_until(two_missing, default_wait(cluster), "the authorizer to see the Role")
        assert missing == asked[2:]
    finally:
        operator.close()
