"""The published schemas of the workload types: keys, descriptions, and defaults equal to behaviour
(docs/transform.md#properties-and-schemas, docs/transform.md#component-catalog)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from oamkit.workloads import objects, with_image

from oam_operator.oam import new_builtin_transformer
from oam_operator.oam.document.schema import walk_schema

SHARED = [
    "args", "command", "env", "envFrom", "image", "initContainers", "lifecycle", "probes", "resources",
    "securityContext", "volumes", "workingDir",
]  # fmt: skip
KEYS = {
    "webservice": sorted([*SHARED, "affinity", "port", "replicas", "sidecars", "topologySpread"]),
    "worker": sorted([*SHARED, "affinity", "replicas", "sidecars", "topologySpread"]),
    "statefulset": sorted([*SHARED, "affinity", "port", "replicas", "serviceName", "sidecars", "volumeClaimTemplates"]),
    "daemonset": sorted([*SHARED, "port", "tolerations"]),
    "cronjob": sorted([*SHARED, "failedJobsHistoryLimit", "restartPolicy", "schedule", "successfulJobsHistoryLimit"]),
}
BASE: dict[str, dict[str, Any]] = {t: {} for t in KEYS}
BASE["cronjob"] = {"schedule": "0 2 * * *"}


def schema(type_name: str) -> dict[str, Any]:
    return new_builtin_transformer().handler_schemas().components[type_name]


@pytest.mark.parametrize("type_name", sorted(KEYS))
def test_properties_and_required(type_name: str) -> None:
    fields = schema(type_name)
    assert sorted(fields) == KEYS[type_name]
    required = sorted(k for k, v in fields.items() if v.required)
    assert required == (["image", "schedule"] if type_name == "cronjob" else ["image"])
    for path, node in walk_schema(fields):
        assert node.description, f"{type_name}: {path}"
    contract = new_builtin_transformer().handler_contracts().components[type_name]
    assert (contract.family, contract.version, contract.required_capability_keys) == (type_name, "v1alpha1", [])


@pytest.mark.parametrize("type_name", sorted(KEYS))
def test_top_level_defaults_equal_behaviour(type_name: str) -> None:
    fields = schema(type_name)
    defaults = {k: v.default for k, v in fields.items() if v.default is not None}
    assert defaults, type_name
    implicit = objects(type_name, with_image(**BASE[type_name]))
    for key, value in sorted(defaults.items()):
        explicit = objects(type_name, with_image(**BASE[type_name], **{key: copy.deepcopy(value)}))
        assert explicit == implicit, key


def test_documented_defaults() -> None:
    web = schema("webservice")
    assert (web["port"].default, web["replicas"].default, web["topologySpread"].default) == (80, 1, True)
    cron = schema("cronjob")
    assert (cron["restartPolicy"].default, cron["restartPolicy"].enum) == ("OnFailure", ["Never", "OnFailure"])
    assert (cron["successfulJobsHistoryLimit"].default, cron["failedJobsHistoryLimit"].default) == (3, 1)
    assert web["resources"].default == {
        "limits": {"memory": "128Mi"},
        "requests": {"cpu": "100m", "memory": "128Mi"},
    }


def test_nested_defaults_equal_behaviour() -> None:
    web = schema("webservice")
    affinity = web["affinity"].properties or {}
    base = objects("worker", with_image(affinity={"enablePodAntiAffinity": True}))
    explicit = {
        "enablePodAntiAffinity": True,
        "topologyKey": affinity["topologyKey"].default,
        "podAntiAffinityType": affinity["podAntiAffinityType"].default,
    }
    assert objects("worker", with_image(affinity=explicit)) == base
    volume = (web["volumes"].items and web["volumes"].items.properties) or {}
    assert volume["type"].default is None  # a volume's type is required by the handler: no default source
    pvc = {"name": "v", "mountPath": "/v", "type": "pvc", "size": "1Gi"}
    assert objects("worker", with_image(volumes=[pvc])) == objects(
        "worker", with_image(volumes=[{**pvc, "accessModes": volume["accessModes"].default}])
    )
    port = ((web["sidecars"].items and web["sidecars"].items.properties) or {})["ports"]
    protocol = ((port.items and port.items.properties) or {})["protocol"].default
    sidecar = {"name": "s", "image": "envoy:1.0", "ports": [{"containerPort": 1}]}
    with_protocol = {**sidecar, "ports": [{"containerPort": 1, "protocol": protocol}]}
    assert objects("worker", with_image(sidecars=[sidecar])) == objects("worker", with_image(sidecars=[with_protocol]))
    vct_schema = schema("statefulset")["volumeClaimTemplates"].items
    vct_modes = ((vct_schema and vct_schema.properties) or {})["accessModes"].default
    vct = {"name": "d", "size": "1Gi", "mountPath": "/d"}
    assert objects("statefulset", with_image(volumeClaimTemplates=[vct])) == objects(
        "statefulset", with_image(volumeClaimTemplates=[{**vct, "accessModes": vct_modes}])
    )
