"""Helpers of the end-to-end tests: API shortcuts, components; the operator process handle is
``tools.operatorprocess.OperatorProcess``, the one harness (re-exported here)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, dynamic, utils
from kubernetes.client.exceptions import ApiException

from tools.devcluster import ClusterHandle
from tools.devcluster import devcluster as dc
from tools.devcluster.pytest_plugin import api_client, default_wait, require_cluster, wait_until
from tools.operatorprocess import OperatorProcess

__all__ = ["DOMAIN", "GROUP", "VERSION", "Kube", "OperatorProcess", "Plane", "audited_plane", "condition", "configmap_component", "dependency",
           "deployment_component", "install_crds", "inventory", "sleep_briefly"]

GROUP, VERSION = "oam-operator.dev", "v1alpha1"
DOMAIN = "oam-operator.dev"


class Kube:
    """Small helpers over the full cluster's API for the e2e tests."""

    def __init__(self, api: Any, namespace: str, cluster: ClusterHandle) -> None:
        self.api = api
        self.namespace = namespace
        self.cluster = cluster
        self.custom = client.CustomObjectsApi(api)
        self.core = client.CoreV1Api(api)
        self.apps = client.AppsV1Api(api)
        self.dynamic = dynamic.DynamicClient(api)

    def apply_app(self, name: str, spec: dict[str, Any], annotations: dict[str, str] | None = None) -> None:
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application",
                "metadata": {"name": name, "namespace": self.namespace, "annotations": annotations or {}},
                "spec": spec}
        resource = self.dynamic.resources.get(api_version=f"{GROUP}/{VERSION}", kind="Application")
        resource.server_side_apply(body=body, namespace=self.namespace, field_manager="e2e-user",
                                   force_conflicts=True)

    def app(self, name: str) -> dict[str, Any]:
        result: dict[str, Any] = self.custom.get_namespaced_custom_object(
            GROUP, VERSION, self.namespace, "applications", name)
        return result

    def app_or_none(self, name: str) -> dict[str, Any] | None:
        try:
            return self.app(name)
        except ApiException as error:
            if error.status == 404:
                return None
            raise

    def ready(self, name: str) -> dict[str, Any] | None:
        app = self.app(name)
        status = app.get("status") or {}
        ready = next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), None)
        if ready and ready["status"] == "True" and status.get("observedGeneration") == app["metadata"]["generation"]:
            return app
        return None

    def wait_ready(self, name: str, timeout: float | None = None) -> dict[str, Any]:
        result: dict[str, Any] = wait_until(lambda: self.ready(name), timeout or default_wait(self.cluster),
                                            f"Application {name} to be Ready")
        return result

    def wait_state(self, name: str, state: str, reason: str | None = None, timeout: float | None = None
                   ) -> dict[str, Any]:
        def reached() -> dict[str, Any] | None:
            app = self.app(name)
            status = app.get("status") or {}
            ready = next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), {})
            if status.get("state") == state and (reason is None or ready.get("reason") == reason):
                return app
            return None

        result: dict[str, Any] = wait_until(reached, timeout or default_wait(self.cluster),
                                            f"Application {name} to reach {state}/{reason}")
        return result

    def events(self, name: str) -> list[Any]:
        return [e for e in self.core.list_namespaced_event(self.namespace).items
                if e.involved_object.kind == "Application" and e.involved_object.name == name]

    def owned(self, label_value: str | None = None) -> list[tuple[str, str]]:
        """(kind, name) of every ConfigMap/Deployment/Service in the namespace carrying an owner label."""
        found = []
        for cm in self.core.list_namespaced_config_map(self.namespace).items:
            if f"{DOMAIN}/owner-id" in (cm.metadata.labels or {}):
                found.append(("ConfigMap", cm.metadata.name))
        for deployment in self.apps.list_namespaced_deployment(self.namespace).items:
            if f"{DOMAIN}/owner-id" in (deployment.metadata.labels or {}):
                found.append(("Deployment", deployment.metadata.name))
        return sorted(found)

    def create(self, manifest: dict[str, Any]) -> None:
        utils.create_from_dict(self.api, manifest, namespace=self.namespace)

    def event_messages(self, app: str, reason: str) -> list[str]:
        """The messages of the Application's Events with ``reason``."""
        return [e.message for e in self.events(app) if e.reason == reason]

    def image_of(self, deployment: str) -> str:
        """The first container's image of a Deployment."""
        spec = self.apps.read_namespaced_deployment(deployment, self.namespace).spec
        return str(spec.template.spec.containers[0].image)

    def set_image(self, deployment: str, image: str, container: str = "main") -> None:
        """What ``kubectl set image`` sends: a strategic merge patch with its own field manager."""
        self.apps.patch_namespaced_deployment(deployment, self.namespace, {"spec": {"template": {"spec": {
            "containers": [{"name": container, "image": image}]}}}}, field_manager="kubectl-set")

    def set_image_once_reachable(self, deployment: str, image: str) -> None:
        """``set_image`` retried until the API server answers (after a restart, the client's old
        connections may be gone)."""
        def changed() -> bool:
            try:
                self.set_image(deployment, image)
            except Exception:
                return False
            return True

        wait_until(changed, default_wait(self.cluster), f"the image of {deployment} to be changed")


def configmap_component(name: str, data: dict[str, str] | None = None, **annotations: str) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                           "data": data or {"key": name}}
    if annotations:
        obj["metadata"]["annotations"] = annotations
    return {"name": name, "type": "passthrough", "properties": {"object": obj}}


def deployment_component(name: str, replicas: int = 1, image: str = "registry.invalid/app:1") -> dict[str, Any]:
    labels = {"app": name}
    obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
           "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                    "template": {"metadata": {"labels": labels},
                                 "spec": {"containers": [{"name": "main", "image": image}]}}}}
    return {"name": name, "type": "passthrough", "properties": {"object": obj}}


def dependency(*rules: tuple[str, list[str]]) -> dict[str, Any]:
    return {"name": "order", "type": "dependency",
            "properties": {"rules": [{"component": c, "dependsOn": d} for c, d in rules]}}


def inventory(app: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The Application's inventory in component-operator-runtime's shape (decoded from the
    compact form the operator writes)."""
    from oam_operator.api.compact_inventory import read_status_inventory

    return read_status_inventory(((app or {}).get("status")) or {})


def condition(app: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in (app.get("status") or {}).get("conditions") or [] if c["type"] == type_), None)


def sleep_briefly(seconds: float) -> None:
    """Used only where a test must show that nothing happens for a while."""
    time.sleep(seconds)


def install_crds(handle: ClusterHandle) -> None:
    """Apply the repository's CRDs to the cluster behind ``handle`` and wait until they are
    Established (the full cluster's session fixture; a spoke that plays a second hub)."""
    import yaml

    from tools.devcluster.pytest_plugin import api_client

    api = api_client(handle)
    try:
        resources = dynamic.DynamicClient(api).resources.get(api_version="apiextensions.k8s.io/v1",
                                                              kind="CustomResourceDefinition")
        for path in sorted((Path(__file__).resolve().parents[2] / "crds").glob("*.yaml")):
            resources.server_side_apply(body=yaml.safe_load(path.read_text()), field_manager="oam-e2e",
                                        force_conflicts=True)
        extensions = client.ApiextensionsV1Api(api)

        def established() -> bool:
            for name in ("applications.oam-operator.dev", "clusterprofiles.oam-operator.dev",
                         "notifications.oam-operator.dev"):
                conditions = extensions.read_custom_resource_definition(name).status.conditions or []
                if not any(c.type == "Established" and c.status == "True" for c in conditions):
                    return False
            return True

        wait_until(established, default_wait(handle), "the oam-operator CRDs to be Established")
    finally:
        api.close()


@dataclass
class Plane:
    """A full control plane of a module's own, with the audit log on (the shared one has none)."""

    handle: ClusterHandle
    audit_log: Path
    api: Any


@contextmanager
def audited_plane(run_dir: Path) -> Iterator[Plane]:
    """Starts a full control plane with the audit log under ``run_dir``, the CRDs installed; stops it
    after. Fails (never skips) when the cluster is required and cannot start."""
    try:
        started = dc.start("full", run_dir=run_dir / "run", audit=True)
    except dc.DevclusterError as error:
        if require_cluster():
            pytest.fail(str(error), pytrace=False)
        pytest.skip(str(error))
    api = None
    try:
        install_crds(started.handle)
        api = api_client(started.handle)
        yield Plane(started.handle, run_dir / "run" / "logs" / "audit.log", api)
    finally:
        if api is not None:
            api.close()
        started.stop()
