"""Applications and tenant RBAC for the chart's operator tests."""

from __future__ import annotations

from typing import Any

from kubernetes import client, dynamic
from kubernetes.client.exceptions import ApiException

from tools.devcluster import ClusterHandle
from tools.devcluster.pytest_plugin import default_wait, wait_until

GROUP, VERSION = "oam-operator.dev", "v1alpha1"
OWNER_LABEL = "oam-operator.dev/owner-id"


def config_and_deployment(name: str) -> list[dict[str, Any]]:
    """A ConfigMap and a Deployment (passthrough components), the Deployment mounting the ConfigMap."""
    labels = {"app": name}
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-config"},
              "data": {"greeting": "hello"}}
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {
                     "containers": [{"name": "main", "image": "registry.invalid/web:1",
                                     "envFrom": [{"configMapRef": {"name": f"{name}-config"}}]}]}}},
    }
    return [{"name": f"{name}-config", "type": "passthrough", "properties": {"object": config}},
            {"name": name, "type": "passthrough", "properties": {"object": deployment}}]


def apply_application(api: Any, namespace: str, name: str, spec: dict[str, Any]) -> None:
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}
    resource = dynamic.DynamicClient(api).resources.get(api_version=f"{GROUP}/{VERSION}", kind="Application")
    resource.server_side_apply(body=body, namespace=namespace, field_manager="helm-test-user", force_conflicts=True)


def ready_condition(app: dict[str, Any]) -> dict[str, Any]:
    conditions = (app.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "Ready"), {})


def wait_state(api: Any, cluster: ClusterHandle, namespace: str, name: str, state: str,
               reason: str | None = None) -> dict[str, Any]:
    custom = client.CustomObjectsApi(api)

    def reached() -> dict[str, Any] | None:
        app: dict[str, Any] = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "applications", name)
        status = app.get("status") or {}
        current = status.get("observedGeneration") == app["metadata"]["generation"]
        if current and status.get("state") == state and reason in (None, ready_condition(app).get("reason")):
            return app
        return None

    result: dict[str, Any] = wait_until(reached, default_wait(cluster), f"Application {name} to reach {state}")
    return result


def delete_application(api: Any, cluster: ClusterHandle, namespace: str, name: str) -> None:
    """Delete and wait until the operator has removed its objects and finalizer."""
    custom = client.CustomObjectsApi(api)
    custom.delete_namespaced_custom_object(GROUP, VERSION, namespace, "applications", name)

    def gone() -> bool:
        try:
            custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "applications", name)
        except ApiException as error:
            if error.status == 404:
                return True
            raise
        return False

    wait_until(gone, default_wait(cluster), f"Application {name} to be deleted")


def owned_objects(api: Any, namespace: str) -> set[tuple[str, str]]:
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    found = {("ConfigMap", o.metadata.name) for o in core.list_namespaced_config_map(namespace).items
             if OWNER_LABEL in (o.metadata.labels or {})}
    found |= {("Deployment", o.metadata.name) for o in apps.list_namespaced_deployment(namespace).items
              if OWNER_LABEL in (o.metadata.labels or {})}
    return found


def grant_tenant(api: Any, namespace: str, account: str, create: bool = True) -> None:
    """A ServiceAccount (``create=False``: an existing one, e.g. ``default``) whose Role lets it
    manage ConfigMaps and Deployments of its namespace."""
    if create:
        client.CoreV1Api(api).create_namespaced_service_account(namespace, {"metadata": {"name": account}})
    rbac = client.RbacAuthorizationV1Api(api)
    verbs = ["get", "list", "watch", "create", "update", "patch", "delete"]
    rbac.create_namespaced_role(namespace, {
        "metadata": {"name": account},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": verbs},
                  {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": verbs},
                  {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]}]})
    rbac.create_namespaced_role_binding(namespace, {
        "metadata": {"name": account},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": account},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]})
