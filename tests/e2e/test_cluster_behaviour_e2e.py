"""kubectl integration, API refusals, namespace deletion and peering
(docs/operator.md#printer-columns, docs/operator.md#error-handling,
docs/operator.md#the-delete-branch, docs/operator.md#running-on-kopf)."""

from __future__ import annotations

import secrets
import subprocess
from typing import Any

from e2ekit import DOMAIN, Kube, condition, configmap_component
from kubernetes import client

from tools.devcluster import find_binaries
from tools.devcluster.pytest_plugin import default_wait, wait_until


def test_kubectl_wait_and_get_show_the_application(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    kube.apply_app("app", {"components": [configmap_component("cfg")]})
    kubectl = [str(find_binaries().kubectl), "--kubeconfig", kube.cluster.kubeconfig, "-n", kube.namespace]
    waited = subprocess.run([*kubectl, "wait", "--for=condition=Ready", "application/app", "--timeout=120s"],
                            capture_output=True, text=True, timeout=150)
    assert waited.returncode == 0, waited.stderr
    assert waited.stdout.strip() == "application.oam-operator.dev/app condition met"
    listed = subprocess.run([*kubectl, "get", "oapp"], capture_output=True, text=True, timeout=30)
    header, row = listed.stdout.splitlines()[:2]
    assert header.split() == ["NAME", "READY", "STATUS", "CLUSTERS", "AGE"]  # CLUSTERS: empty, no topology
    assert row.split()[:2] == ["app", "True"]
    status = row[header.index("STATUS"):header.index("CLUSTERS")].strip()
    assert status == kube.app("app")["status"]["summary"] and status.startswith("Applied revision 1: ")


def test_an_object_the_api_server_rejects_gives_api_error(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    bad = configmap_component("bad", {"not a valid key!": "x"})
    kube.apply_app("app", {"components": [bad]})
    app = kube.wait_state("app", "Error", "ApiError")
    message = condition(app, "Ready")["message"]
    assert message.startswith(f"Error creating object /v1, Kind=ConfigMap {kube.namespace}/bad: 422")
    assert "not a valid key!" in message


def test_deleting_the_namespace_deletes_the_application_and_its_cluster_scoped_objects(
    start_operator: Any, full_cluster: Any, full_kube_api: Any, crds_installed: None
) -> None:
    core = client.CoreV1Api(full_kube_api)
    namespace = f"t-ns-gone-{secrets.token_hex(3)}"
    core.create_namespace({"metadata": {"name": namespace, "labels": {"oam-operator.dev/test-run": "e2e"}}})
    wait_until(lambda: any(sa.metadata.name == "default" for sa in core.list_namespaced_service_account(namespace).items),
               default_wait(full_cluster), "the default ServiceAccount")
    kube = Kube(full_kube_api, namespace, full_cluster)
    start_operator(namespace, "--allow-cluster-scoped-objects")
    role = f"e2e-{namespace}"
    cluster_role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": role}, "rules": []}
    kube.apply_app("app", {"components": [configmap_component("cfg"), {
        "name": "role", "type": "passthrough", "properties": {"object": cluster_role, "clusterScoped": True}}]})
    kube.wait_ready("app")
    rbac = client.RbacAuthorizationV1Api(full_kube_api)
    rbac.read_cluster_role(role)
    core.delete_namespace(namespace)

    def all_gone() -> bool:
        names = {r.metadata.name for r in rbac.list_cluster_role().items}
        return role not in names and namespace not in {n.metadata.name for n in core.list_namespace().items}

    wait_until(all_gone, default_wait(full_cluster), "the namespace, the Application and its ClusterRole to go")


def _peering_crd() -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "kopfpeerings.kopf.dev"},
            "spec": {"scope": "Namespaced", "group": "kopf.dev",
                     "names": {"kind": "KopfPeering", "plural": "kopfpeerings", "singular": "kopfpeering"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"status": {
                             "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}


def test_a_dev_instance_pauses_the_peered_operator_until_it_stops(start_operator: Any, kube: Kube) -> None:
    crds = kube.dynamic.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
    crds.server_side_apply(body=_peering_crd(), field_manager="oam-e2e", force_conflicts=True)
    extensions = client.ApiextensionsV1Api(kube.api)
    wait_until(lambda: any(c.type == "Established" and c.status == "True" for c in
                           extensions.read_custom_resource_definition("kopfpeerings.kopf.dev").status.conditions or []),
               default_wait(kube.cluster), "the KopfPeering CRD")
    kube.custom.create_namespaced_custom_object("kopf.dev", "v1", kube.namespace, "kopfpeerings", {
        "apiVersion": "kopf.dev/v1", "kind": "KopfPeering", "metadata": {"name": "e2e"}})
    first = start_operator(kube.namespace, "--peering", "e2e")
    kube.apply_app("app", {"components": [configmap_component("cfg")]})
    kube.wait_ready("app")
    second = start_operator(kube.namespace, "--peering", "e2e", "--dev")

    def paused() -> bool:
        return any("Pausing operations" in str(entry.get("msg", "")) for entry in first.logs())

    wait_until(paused, default_wait(kube.cluster), "the first operator to pause for the --dev instance")
    second.stop()

    def resumed() -> bool:
        return any("Resuming operations" in str(entry.get("msg", "")) for entry in first.logs())

    wait_until(resumed, default_wait(kube.cluster) + 60, "the first operator to resume")
    kube.apply_app("app", {"components": [configmap_component("cfg", {"key": "after"})]})
    kube.wait_ready("app")
    assert kube.core.read_namespaced_config_map("cfg", kube.namespace).data == {"key": "after"}
    assert f"{DOMAIN}/owner-id" in kube.core.read_namespaced_config_map("cfg", kube.namespace).metadata.labels
