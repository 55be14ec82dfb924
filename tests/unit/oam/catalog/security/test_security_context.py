"""The ``security-context`` trait (docs/transform.md#access-and-security): PSA-level pod and container contexts."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.traits import deployment_object, document, objects, passthrough, trait, trait_error, webservice

RESTRICTED_CONTAINER = {
    "allowPrivilegeEscalation": False,
    "runAsNonRoot": True,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


def pod_spec(component: dict[str, Any]) -> dict[str, Any]:
    obj = objects(document(component))[0]
    if obj["kind"] == "CronJob":
        spec: dict[str, Any] = obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        return spec
    template: dict[str, Any] = obj["spec"]["template"]["spec"]
    return template


def full_webservice(*traits: dict[str, Any]) -> dict[str, Any]:
    return webservice(
        "web",
        *traits,
        securityContext={"runAsUser": 5, "privileged": True},
        initContainers=[{"name": "init", "image": "busybox:1.36"}],
        sidecars=[{"name": "side", "image": "busybox:1.36"}],
    )


def test_restricted_replaces_every_container_context() -> None:
    spec = pod_spec(full_webservice(trait("security-context", psaLevel="restricted")))
    assert spec["securityContext"] == {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    contexts = [c["securityContext"] for c in spec["initContainers"] + spec["containers"]]
    assert contexts == [RESTRICTED_CONTAINER] * 3


def test_restricted_with_overrides() -> None:
    props = {"psaLevel": "restricted", "runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 2000.0, "fsGroup": 3000}
    props.update(allowPrivilegeEscalation=False, readOnlyRootFilesystem=True)
    spec = pod_spec(full_webservice(trait("security-context", **props)))
    assert spec["securityContext"] == {
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
        "runAsUser": 1000,
        "runAsGroup": 2000,
        "fsGroup": 3000,
    }
    assert spec["containers"][0]["securityContext"] == RESTRICTED_CONTAINER


@pytest.mark.parametrize("level", ["baseline", "privileged"])
def test_other_levels_write_only_what_is_set(level: str) -> None:
    spec = pod_spec(full_webservice(trait("security-context", psaLevel=level)))
    assert spec["securityContext"] == {}
    assert [c["securityContext"] for c in spec["initContainers"] + spec["containers"]] == [{}] * 3
    props = {"psaLevel": level, "runAsUser": 1, "fsGroup": 2, "allowPrivilegeEscalation": True, "runAsNonRoot": False}
    props["readOnlyRootFilesystem"] = False
    spec = pod_spec(full_webservice(trait("security-context", **props)))
    assert spec["securityContext"] == {"runAsUser": 1, "fsGroup": 2}
    assert spec["containers"][1]["securityContext"] == {
        "allowPrivilegeEscalation": True,
        "readOnlyRootFilesystem": False,
    }


@pytest.mark.parametrize(
    "component",
    [
        {"name": "c", "type": "cronjob", "properties": {"image": "busybox:1.36", "schedule": "0 * * * *"}},
        {"name": "c", "type": "statefulset", "properties": {"image": "busybox:1.36"}},
        {"name": "c", "type": "daemonset", "properties": {"image": "busybox:1.36"}},
        {"name": "c", "type": "worker", "properties": {"image": "busybox:1.36"}},
        passthrough("c", {**deployment_object("c"), "apiVersion": "apps/v1"}),
        passthrough(
            "c",
            {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": {"containers": [{"name": "j"}]}}}},
        ),
    ],
)
def test_every_workload_kind_is_decorated(component: dict[str, Any]) -> None:
    component = {**component, "traits": [trait("security-context", psaLevel="restricted")]}
    spec = pod_spec(component)
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert spec["containers"][0]["securityContext"] == RESTRICTED_CONTAINER


def test_no_workload_is_not_an_error() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}}
    comp = passthrough("c", obj, trait("security-context", psaLevel="restricted"))
    assert objects(document(comp)) == [{**obj, "metadata": {"name": "c", "namespace": "shop"}}]


def test_decorations_apply_in_trait_order() -> None:
    spec = pod_spec(
        webservice(
            "web",
            trait("security-context", psaLevel="restricted"),
            trait("configmap", name="cfg", mountPath="/cfg"),
            trait("security-context", psaLevel="baseline", runAsUser=7),
        )
    )
    assert spec["securityContext"] == {"runAsUser": 7}
    assert spec["containers"][0]["securityContext"] == {}
    assert spec["containers"][0]["volumeMounts"] == [{"name": "cfg", "mountPath": "/cfg"}]


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({}, "psaLevel is required"),
        ({"psaLevel": 1}, "psaLevel must be a string, got int"),
        ({"psaLevel": "strict"}, 'psaLevel: unknown psaLevel "strict" (valid: restricted, baseline, privileged); did you mean "restricted"?'),
        ({"psaLevel": "baseline", "runAsNonRoot": "yes"}, "runAsNonRoot must be a bool, got string"),
        ({"psaLevel": "baseline", "readOnlyRootFilesystem": 1}, "readOnlyRootFilesystem must be a bool, got int"),
        ({"psaLevel": "baseline", "runAsUser": "root"}, "runAsUser: expected integer, got string"),
        ({"psaLevel": "baseline", "fsGroup": 1.5}, "fsGroup: expected integer, got float64"),
        (
            {"psaLevel": "restricted", "allowPrivilegeEscalation": True},
            "allowPrivilegeEscalation: true is incompatible with psaLevel restricted",
        ),
        (
            {"psaLevel": "restricted", "runAsNonRoot": False},
            "runAsNonRoot: false is incompatible with psaLevel restricted",
        ),
        (
            {"psaLevel": "restricted", "readOnlyRootFilesystem": False},
            "readOnlyRootFilesystem: false is incompatible with psaLevel restricted",
        ),
    ],
)
def test_messages(props: dict[str, Any], message: str) -> None:
    comp = webservice("web", trait("security-context", **props))
    assert trait_error(comp) == f'component "web" trait "security-context": security-context: {message}'
