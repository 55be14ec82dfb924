"""The ``configmap`` trait (docs/transform.md#certificates-secrets-and-configuration):
the ConfigMap, Go-style data, the mount decoration."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.traits import (
    NS,
    capabilities,
    deployment_object,
    document,
    error,
    find,
    kinds,
    objects,
    passthrough,
    trait,
    trait_error,
    webservice,
)

from oam_operator.oam import CapabilityError


def test_minimal_configmap_object_and_position() -> None:
    text = document(webservice("web", trait("configmap", name="web-config", data={"A": "x"})))
    assert kinds(text)[-1] == ("ConfigMap", "web-config")
    assert find(objects(text), "ConfigMap") == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "web-config", "namespace": NS, "labels": {"app": "web"}},
        "data": {"A": "x"},
    }


def test_data_values_are_stringified_as_go_prints_them() -> None:
    data = {
        "s": "text",
        "i": 42,
        "t": True,
        "f": 1.5,
        "whole": 2.0,
        "big": 1e21,
        "small": 1e20,
        "n": None,
        "l": ["a", 1, True],
        "m": {"z": 1, "a": "b"},
    }
    obj = find(objects(document(webservice("web", trait("configmap", name="c", data=data)))), "ConfigMap")
    assert obj["data"] == {
        "s": "text",
        "i": "42",
        "t": "true",
        "f": "1.5",
        "whole": "2",
        "big": "1e+21",
        "small": "100000000000000000000",
        "n": "<nil>",
        "l": "[a 1 true]",
        "m": "map[a:b z:1]",
    }


@pytest.mark.parametrize("data", [None, {}])
def test_no_data_key_without_data(data: Any) -> None:
    props: dict[str, Any] = {"name": "c"} if data is None else {"name": "c", "data": data}
    obj = find(objects(document(webservice("web", trait("configmap", **props)))), "ConfigMap")
    assert "data" not in obj


def _pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    if obj["kind"] == "CronJob":
        spec: dict[str, Any] = obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        return spec
    template: dict[str, Any] = obj["spec"]["template"]["spec"]
    return template


def test_mount_adds_a_volume_and_mounts_it_on_the_first_container() -> None:
    comp = webservice(
        "web",
        trait("configmap", name="cfg", mountPath="/etc/cfg"),
        trait("configmap", name="more", mountPath="/etc/more"),
        volumes=[{"name": "data", "mountPath": "/data", "type": "emptyDir"}],
        sidecars=[{"name": "side", "image": "busybox:1.36"}],
    )
    spec = _pod_spec(objects(document(comp))[0])
    assert spec["volumes"] == [
        {"name": "data", "emptyDir": {}},
        {"name": "cfg", "configMap": {"name": "cfg"}},
        {"name": "more", "configMap": {"name": "more"}},
    ]
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": "data", "mountPath": "/data"},
        {"name": "cfg", "mountPath": "/etc/cfg"},
        {"name": "more", "mountPath": "/etc/more"},
    ]
    assert "volumeMounts" not in spec["containers"][1]


@pytest.mark.parametrize(
    ("component_type", "props"),
    [
        ("worker", {}),
        ("statefulset", {}),
        ("daemonset", {}),
        ("cronjob", {"schedule": "0 * * * *"}),
    ],
)
def test_mount_on_every_workload_type(component_type: str, props: dict[str, Any]) -> None:
    comp = {
        "name": "w",
        "type": component_type,
        "properties": {"image": "busybox:1.36", **props},
        "traits": [trait("configmap", name="cfg", mountPath="/etc/cfg")],
    }
    workload = objects(document(comp))[0]
    spec = _pod_spec(workload)
    assert spec["volumes"][-1] == {"name": "cfg", "configMap": {"name": "cfg"}}
    assert spec["containers"][0]["volumeMounts"][-1] == {"name": "cfg", "mountPath": "/etc/cfg"}


def test_mount_on_a_passthrough_deployment() -> None:
    comp = passthrough("pt", deployment_object("pt", containers=2), trait("configmap", name="cfg", mountPath="/c"))
    spec = _pod_spec(objects(document(comp))[0])
    assert spec["volumes"] == [{"name": "cfg", "configMap": {"name": "cfg"}}]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "cfg", "mountPath": "/c"}]
    assert "volumeMounts" not in spec["containers"][1]


def test_mount_refusals_are_generation_errors() -> None:
    no_workload = passthrough(
        "pt", {"apiVersion": "v1", "kind": "Secret"}, trait("configmap", name="c", mountPath="/c")
    )
    assert error(document(no_workload)) == (
        "configmap mountPath requires a Deployment, StatefulSet, DaemonSet, or CronJob component; "
        "no supported workload resource was found"
    )
    volume = webservice(
        "web",
        trait("configmap", name="data", mountPath="/etc/cfg"),
        volumes=[{"name": "data", "mountPath": "/data", "type": "emptyDir"}],
    )
    assert error(document(volume)) == (
        "configmap mountPath: volume \"data\" already exists on the workload; rename the configmap via the 'name' "
        "property"
    )
    path = webservice(
        "web",
        trait("configmap", name="cfg", mountPath="/data"),
        volumes=[{"name": "data", "mountPath": "/data", "type": "emptyDir"}],
    )
    assert error(document(path)) == (
        'configmap mountPath: mountPath "/data" is already used by volume "data" on the workload; change the '
        "mountPath or the colliding volume's mount"
    )


def test_without_mount_path_the_workload_is_untouched() -> None:
    plain = objects(document(webservice("web")))[0]
    with_cm = objects(document(webservice("web", trait("configmap", name="c", mountPath=""))))[0]
    assert with_cm == plain


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({}, "required property 'name' missing or not a string"),
        ({"name": ""}, "required property 'name' missing or not a string"),
        ({"name": 3}, "required property 'name' missing or not a string"),
        ({"name": "c", "data": [1]}, "'data' must be a map"),
        ({"name": "c", "mountPath": 1}, "'mountPath' must be a string"),
    ],
)
def test_messages(props: dict[str, Any], message: str) -> None:
    assert (
        trait_error(webservice("web", trait("configmap", **props))) == f'component "web" trait "configmap": {message}'
    )


def test_rendering_accepts_no_keys() -> None:
    with pytest.raises(CapabilityError) as info:
        capabilities(configmap={"x": 1})
    assert str(info.value) == 'capability "configmap": configmap rendering: unsupported field "x" (allowed: (none))'
    with pytest.raises(CapabilityError):
        capabilities(configmap__team={"name": "c"})
    assert capabilities(configmap={})["configmap"].rendering == {}


def test_component_label_on_the_configmap() -> None:
    obj = find(objects(document(webservice("web", trait("configmap", name="c"))), label=True), "ConfigMap")
    assert obj["metadata"]["labels"] == {"app": "web", "oam-operator.dev/component": "web"}
