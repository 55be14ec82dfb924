"""The minimal control plane: readiness and version over verified TLS, KUBECONFIG set before the client is
imported, a CRD and its custom resources, server-side apply (docs/devcluster.md#the-control-plane-library,
docs/devcluster.md#pytest-integration)."""

from __future__ import annotations

import json
import ssl
import urllib.request
import uuid
from typing import Any

import pytest
from kubernetes import client, config, dynamic
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic.exceptions import ConflictError

from tools.devcluster import ClusterHandle
from tools.devcluster.pytest_plugin import default_wait, wait_until

GROUP = "smoke.oam-operator.dev"


def test_api_server_is_ready_and_reports_the_pinned_version(cluster: ClusterHandle, kube_api: Any) -> None:
    version = client.VersionApi(kube_api).get_code()
    if cluster.profile != "external":
        assert version.git_version == cluster.versions["kubernetes"]
        assert cluster.server.startswith("https://127.0.0.1:")
        context = ssl.create_default_context(cafile=f"{cluster.run_dir}/pki/ca.crt")
        https = urllib.request.HTTPSHandler(context=context)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), https)
        with opener.open(f"{cluster.server}/readyz", timeout=5) as response:
            assert response.status == 200
    names = {ns.metadata.name for ns in client.CoreV1Api(kube_api).list_namespace().items}
    assert {"default", "kube-system"} <= names


def test_kubeconfig_is_set_before_the_kubernetes_package_reads_it(cluster: ClusterHandle) -> None:
    assert cluster.kubeconfig == config.kube_config.KUBE_CONFIG_DEFAULT_LOCATION


def _widget_crd(plural: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": plural[:-1], "kind": plural.capitalize()[:-1]},
            "versions": [{
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "required": ["size"],
                                 "properties": {"size": {"type": "integer"}, "colour": {"type": "string"}}},
                        "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
                    },
                }},
            }],
        },
    }


@pytest.fixture
def widget_crd(cluster: ClusterHandle, kube_api: Any) -> Any:
    plural = f"widget{uuid.uuid4().hex[:8]}s"
    extensions = client.ApiextensionsV1Api(kube_api)
    extensions.create_custom_resource_definition(_widget_crd(plural))

    def established() -> bool:
        crd = extensions.read_custom_resource_definition(f"{plural}.{GROUP}")
        conditions = {c.type: c.status for c in (crd.status.conditions or [])}
        return conditions.get("Established") == "True" and conditions.get("NamesAccepted") == "True"

    wait_until(established, default_wait(cluster), f"CRD {plural}.{GROUP} to be Established")
    yield plural
    extensions.delete_custom_resource_definition(f"{plural}.{GROUP}")


def test_crd_becomes_established_and_a_custom_resource_round_trips(
    widget_crd: str, namespace: str, kube_api: Any
) -> None:
    plural, kind = widget_crd, widget_crd.capitalize()[:-1]
    resources = client.ApisApi(kube_api).get_api_versions()
    assert GROUP in {group.name for group in resources.groups}
    custom = client.CustomObjectsApi(kube_api)
    body = {"apiVersion": f"{GROUP}/v1", "kind": kind,
            "metadata": {"name": "w1", "labels": {"tier": "gold"}}, "spec": {"size": 3}}
    created = custom.create_namespaced_custom_object(GROUP, "v1", namespace, plural, body)
    assert created["metadata"]["generation"] == 1

    read = custom.get_namespaced_custom_object(GROUP, "v1", namespace, plural, "w1")
    assert read["spec"] == {"size": 3}
    assert read["metadata"]["labels"] == {"tier": "gold"}

    listed = custom.list_namespaced_custom_object(GROUP, "v1", namespace, plural, label_selector="tier=gold")
    assert [item["metadata"]["name"] for item in listed["items"]] == ["w1"]
    other = custom.list_namespaced_custom_object(GROUP, "v1", namespace, plural, label_selector="tier=lead")
    assert other["items"] == []

    read["spec"]["size"] = 4
    updated = custom.replace_namespaced_custom_object(GROUP, "v1", namespace, plural, "w1", read)
    assert updated["metadata"]["generation"] == 2

    updated["status"] = {"phase": "Ready"}
    with_status = custom.replace_namespaced_custom_object_status(GROUP, "v1", namespace, plural, "w1", updated)
    assert with_status["status"] == {"phase": "Ready"}
    assert with_status["metadata"]["generation"] == 2
    # The main resource ignores status: the status subresource is really in force.
    with_status["status"] = {"phase": "Ignored"}
    after = custom.replace_namespaced_custom_object(GROUP, "v1", namespace, plural, "w1", with_status)
    assert after["status"] == {"phase": "Ready"}

    invalid = {"apiVersion": f"{GROUP}/v1", "kind": kind, "metadata": {"name": "w2"}, "spec": {"colour": "red"}}
    with pytest.raises(ApiException) as refused:
        custom.create_namespaced_custom_object(GROUP, "v1", namespace, plural, invalid)
    assert refused.value.status == 422
    assert "spec.size: Required value" in json.loads(refused.value.body)["message"]

    custom.delete_namespaced_custom_object(GROUP, "v1", namespace, plural, "w1")
    with pytest.raises(ApiException) as gone:
        custom.get_namespaced_custom_object(GROUP, "v1", namespace, plural, "w1")
    assert gone.value.status == 404


def _apply(resource: Any, body: dict[str, Any], manager: str, namespace: str, **kwargs: Any) -> Any:
    return resource.server_side_apply(body=body, namespace=namespace, field_manager=manager, **kwargs)


def _managers(obj: Any) -> dict[str, str]:
    return {entry["manager"]: entry["operation"] for entry in obj.to_dict()["metadata"]["managedFields"]}


def _field_owner(obj: Any, field: str) -> list[str]:
    return [entry["manager"] for entry in obj.to_dict()["metadata"]["managedFields"]
            if f"f:{field}" in json.dumps(entry.get("fieldsV1", {}))]


def _exercise_server_side_apply(resource: Any, make: Any, namespace: str) -> None:
    _apply(resource, make({"a": "1"}), "test-a", namespace)
    both = _apply(resource, make({"b": "2"}), "test-b", namespace)
    assert _managers(both) == {"test-a": "Apply", "test-b": "Apply"}

    with pytest.raises(ConflictError) as conflict:
        _apply(resource, make({"a": "other"}), "test-b", namespace)
    assert conflict.value.status == 409
    assert 'conflict with "test-a"' in json.loads(conflict.value.body)["message"]

    unchanged = _apply(resource, make({"a": "dry", "b": "2"}), "test-b", namespace, force_conflicts=True, dry_run="All")
    assert unchanged is not None
    live = resource.get(name=make({})["metadata"]["name"], namespace=namespace)
    assert _field_owner(live, "a") == ["test-a"]

    forced = _apply(resource, make({"a": "other", "b": "2"}), "test-b", namespace, force_conflicts=True)
    assert _field_owner(forced, "a") == ["test-b"]


def test_server_side_apply_tracks_two_managers_and_conflicts_without_force(namespace: str, kube_api: Any) -> None:
    configmaps = dynamic.DynamicClient(kube_api).resources.get(api_version="v1", kind="ConfigMap")

    def make(data: dict[str, str]) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": data}

    _exercise_server_side_apply(configmaps, make, namespace)
    assert configmaps.get(name="ssa", namespace=namespace).data.to_dict() == {"a": "other", "b": "2"}


def test_server_side_apply_on_a_custom_resource(widget_crd: str, namespace: str, kube_api: Any) -> None:
    kind = widget_crd.capitalize()[:-1]
    widgets = dynamic.DynamicClient(kube_api).resources.get(api_version=f"{GROUP}/v1", kind=kind)

    def widget(spec: dict[str, Any] | None = None, labels: dict[str, str] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"apiVersion": f"{GROUP}/v1", "kind": kind, "metadata": {"name": "ssa"}}
        if spec is not None:
            body["spec"] = spec
        if labels is not None:
            body["metadata"]["labels"] = labels
        return body

    _apply(widgets, widget({"size": 1, "colour": "red"}), "test-a", namespace)
    both = _apply(widgets, widget(labels={"b": "2"}), "test-b", namespace)
    assert _managers(both) == {"test-a": "Apply", "test-b": "Apply"}

    with pytest.raises(ConflictError) as conflict:
        _apply(widgets, widget({"size": 1, "colour": "blue"}, {"b": "2"}), "test-b", namespace)
    assert conflict.value.status == 409
    assert 'conflict with "test-a"' in json.loads(conflict.value.body)["message"]

    _apply(widgets, widget({"size": 1, "colour": "blue"}, {"b": "2"}), "test-b", namespace, force_conflicts=True, dry_run="All")
    assert widgets.get(name="ssa", namespace=namespace).spec.colour == "red"

    forced = _apply(widgets, widget({"size": 1, "colour": "blue"}, {"b": "2"}), "test-b", namespace, force_conflicts=True)
    assert forced.spec.colour == "blue"
    assert _field_owner(forced, "colour") == ["test-b"]
