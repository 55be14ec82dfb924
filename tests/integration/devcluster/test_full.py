"""The full control plane (real controllers): workloads on fake nodes, garbage collection, namespace deletion,
namespace defaults (docs/devcluster.md#the-local-control-plane)."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tools.devcluster import ClusterHandle
from tools.devcluster.pytest_plugin import default_wait, wait_until

LABELS = {"app": "smoke"}


def _pod_template() -> dict[str, Any]:
    return {
        "metadata": {"labels": LABELS},
        "spec": {"containers": [{"name": "main", "image": "registry.invalid/smoke:1"}]},
    }


def _deployment(name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": LABELS}, "template": _pod_template()},
    }


def _wait_available(apps: client.AppsV1Api, namespace: str, name: str, replicas: int, timeout: float) -> None:
    def available() -> bool:
        status = apps.read_namespaced_deployment_status(name, namespace).status
        conditions = {c.type: c.status for c in (status.conditions or [])}
        return conditions.get("Available") == "True" and status.available_replicas == replicas

    wait_until(available, timeout, f"Deployment {namespace}/{name} to be Available with {replicas} replicas")


def test_a_deployment_becomes_available_on_fake_nodes(
    full_cluster: ClusterHandle, full_namespace: str, full_kube_api: Any
) -> None:
    apps, core = client.AppsV1Api(full_kube_api), client.CoreV1Api(full_kube_api)
    apps.create_namespaced_deployment(full_namespace, _deployment("web", 2))
    _wait_available(apps, full_namespace, "web", 2, default_wait(full_cluster))
    pods = core.list_namespaced_pod(full_namespace, label_selector="app=smoke").items
    assert len(pods) == 2
    for pod in pods:
        if full_cluster.profile != "external":
            assert pod.spec.node_name in full_cluster.fake_nodes
        ready = {c.type: c.status for c in pod.status.conditions}
        assert pod.status.phase == "Running" and ready["Ready"] == "True"


def test_statefulset_daemonset_and_job_reach_their_ready_states(
    full_cluster: ClusterHandle, full_namespace: str, full_kube_api: Any
) -> None:
    apps, batch = client.AppsV1Api(full_kube_api), client.BatchV1Api(full_kube_api)
    apps.create_namespaced_stateful_set(full_namespace, {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
        "spec": {"replicas": 2, "serviceName": "db", "selector": {"matchLabels": LABELS}, "template": _pod_template()},
    })
    apps.create_namespaced_daemon_set(full_namespace, {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "template": {**_pod_template(), "metadata": {"labels": {"app": "agent"}}}},
    })
    batch.create_namespaced_job(full_namespace, {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
                                        "containers": [{"name": "main", "image": "registry.invalid/job:1"}]}}},
    })
    timeout = default_wait(full_cluster)
    wait_until(lambda: apps.read_namespaced_stateful_set_status("db", full_namespace).status.ready_replicas == 2,
               timeout, "StatefulSet db to have 2 ready replicas")
    nodes = len(full_cluster.fake_nodes) or 1

    def daemonset_available() -> bool:
        return apps.read_namespaced_daemon_set_status("agent", full_namespace).status.number_available == nodes

    wait_until(daemonset_available, timeout, "DaemonSet agent to be available on every node")

    def job_complete() -> bool:
        conditions = batch.read_namespaced_job_status("once", full_namespace).status.conditions or []
        return any(c.type == "Complete" and c.status == "True" for c in conditions)

    wait_until(job_complete, timeout, "Job once to Complete")


def test_garbage_collection_removes_dependents(
    full_cluster: ClusterHandle, full_namespace: str, full_kube_api: Any
) -> None:
    core, apps = client.CoreV1Api(full_kube_api), client.AppsV1Api(full_kube_api)
    owner = core.create_namespaced_config_map(full_namespace, {"metadata": {"name": "owner"}})
    core.create_namespaced_config_map(full_namespace, {"metadata": {"name": "dependent", "ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}]}})
    core.delete_namespaced_config_map("owner", full_namespace)

    def dependent_gone() -> bool:
        try:
            core.read_namespaced_config_map("dependent", full_namespace)
        except ApiException as error:
            return error.status == 404
        return False

    wait_until(dependent_gone, 60 * (default_wait(full_cluster) / 120), "the dependent ConfigMap to be collected")

    apps.create_namespaced_deployment(full_namespace, _deployment("fg", 2))
    _wait_available(apps, full_namespace, "fg", 2, default_wait(full_cluster))
    apps.delete_namespaced_deployment("fg", full_namespace, propagation_policy="Foreground")

    def cascade_done() -> bool:
        try:
            apps.read_namespaced_deployment("fg", full_namespace)
            return False
        except ApiException as error:
            if error.status != 404:
                raise
        return (not apps.list_namespaced_replica_set(full_namespace).items
                and not core.list_namespaced_pod(full_namespace).items)

    wait_until(cascade_done, default_wait(full_cluster), "the foreground deletion to remove ReplicaSets and Pods")


def test_namespace_deletion_completes(full_cluster: ClusterHandle, full_kube_api: Any) -> None:
    core, apps = client.CoreV1Api(full_kube_api), client.AppsV1Api(full_kube_api)
    name = f"t-ns-deletion-{id(core) % 100000:05d}"
    core.create_namespace({"metadata": {"name": name, "labels": {"oam-operator.dev/test-run": "ns-deletion"}}})
    timeout = default_wait(full_cluster)
    wait_until(lambda: any(sa.metadata.name == "default" for sa in core.list_namespaced_service_account(name).items),
               timeout, f"ServiceAccount default in {name}")
    core.create_namespaced_config_map(name, {"metadata": {"name": "c"}, "data": {"k": "v"}})
    core.create_namespaced_secret(name, {"metadata": {"name": "s"}, "stringData": {"k": "v"}})
    apps.create_namespaced_deployment(name, _deployment("web", 2))
    _wait_available(apps, name, "web", 2, timeout)
    core.delete_namespace(name)

    def namespace_gone() -> bool:
        try:
            core.read_namespace(name)
        except ApiException as error:
            return error.status == 404
        return False

    wait_until(namespace_gone, 60 * (timeout / 120), f"namespace {name} to be deleted")


@pytest.mark.requires_bare_apiserver
def test_namespace_deletion_stays_terminating_without_controllers(cluster: ClusterHandle, kube_api: Any) -> None:
    """Documents the minimal profile's gap (docs/devcluster.md#the-local-control-plane):
    nothing finalizes namespaces."""
    core = client.CoreV1Api(kube_api)
    name = f"t-ns-terminating-{id(core) % 100000:05d}"
    core.create_namespace({"metadata": {"name": name}})
    core.create_namespaced_config_map(name, {"metadata": {"name": "c"}})
    core.delete_namespace(name)
    wait_until(lambda: core.read_namespace(name).status.phase == "Terminating", 10, f"{name} to be Terminating")
    assert core.read_namespace(name).spec.finalizers == ["kubernetes"]


def test_new_namespaces_get_defaults_and_aggregated_roles(
    full_cluster: ClusterHandle, full_namespace: str, full_kube_api: Any
) -> None:
    core, rbac = client.CoreV1Api(full_kube_api), client.RbacAuthorizationV1Api(full_kube_api)
    wait_until(lambda: any(c.metadata.name == "kube-root-ca.crt"
                           for c in core.list_namespaced_config_map(full_namespace).items),
               10 * (default_wait(full_cluster) / 120), "ConfigMap kube-root-ca.crt")
    assert rbac.read_cluster_role("edit").rules
