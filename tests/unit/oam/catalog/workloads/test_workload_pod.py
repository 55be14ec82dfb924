"""Pod-level workload properties: extra containers, scheduling, command/args
(docs/transform.md#shared-workload-properties)."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.workloads import RESOURCES, error, handler_error, main_container, objects, pod_spec, with_image

HOSTNAME_SPREAD = {
    "maxSkew": 1,
    "topologyKey": "kubernetes.io/hostname",
    "whenUnsatisfiable": "DoNotSchedule",
    "labelSelector": {"matchLabels": {"app": "c"}},
}
ZONE_SPREAD = {
    "maxSkew": 1,
    "topologyKey": "topology.kubernetes.io/zone",
    "whenUnsatisfiable": "ScheduleAnyway",
    "labelSelector": {"matchLabels": {"app": "c"}},
}


def test_main_container_conventions() -> None:
    c = main_container(objects("worker", with_image(command=["/bin/app", "serve"], args=["--v", "2"]))[0])
    assert c == {
        "name": "c",
        "image": "ghcr.io/example/app:v1.0.0",
        "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/app", "serve"],
        "args": ["--v", "2"],
        "resources": RESOURCES,
    }


def test_non_string_command_items_are_dropped_for_library_callers() -> None:
    c = main_container(objects("worker", with_image(command=["/bin/app", 5], args=[True, "x"]), validate=False)[0])
    assert (c["command"], c["args"]) == (["/bin/app"], ["x"])
    assert error("worker", with_image(command=["/bin/app", 5])) == (
        'component "c" (type "worker"): properties.command[1]: expected string, got int'
    )


def test_init_containers_and_sidecars() -> None:
    props = with_image(
        initContainers=[
            {
                "name": "migrate",
                "image": "ghcr.io/example/migrate:1.2",
                "command": ["migrate"],
                "args": ["up"],
                "env": [{"name": "DSN", "valueFrom": {"secretKeyRef": {"name": "db", "key": "dsn"}}}],
                "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True, "subPath": "x"}],
            }
        ],
        sidecars=[
            {
                "name": "proxy",
                "image": "envoyproxy/envoy:v1.30.1",
                "ports": [{"containerPort": 9901, "name": "admin"}, {"containerPort": 53, "protocol": "UDP"}],
                "resources": {"requests": {"cpu": "50m"}},
            }
        ],
        volumes=[{"name": "data", "mountPath": "/data", "type": "emptyDir"}],
    )
    for type_name in ("webservice", "worker", "statefulset"):
        spec = pod_spec(objects(type_name, props)[0])
        assert spec["initContainers"] == [
            {
                "name": "migrate",
                "image": "ghcr.io/example/migrate:1.2",
                "imagePullPolicy": "IfNotPresent",
                "command": ["migrate"],
                "args": ["up"],
                "env": [{"name": "DSN", "valueFrom": {"secretKeyRef": {"name": "db", "key": "dsn"}}}],
                "resources": RESOURCES,
                "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True, "subPath": "x"}],
            }
        ]
        assert [c["name"] for c in spec["containers"]] == ["c", "proxy"]
        assert spec["containers"][1] == {
            "name": "proxy",
            "image": "envoyproxy/envoy:v1.30.1",
            "imagePullPolicy": "IfNotPresent",
            "ports": [
                {"containerPort": 9901, "name": "admin", "protocol": "TCP"},
                {"containerPort": 53, "protocol": "UDP"},
            ],
            "resources": {"limits": {"memory": "128Mi"}, "requests": {"cpu": "50m", "memory": "128Mi"}},
        }


@pytest.mark.parametrize(
    ("key", "entries", "message"),
    [
        ("initContainers", [{"image": "busybox:1.36"}], "initContainers[0]: name is required"),
        ("initContainers", [{"name": "i"}], 'initContainers[0] "i": image is required'),
        (
            "initContainers",
            [{"name": "i", "image": "busybox"}],
            'initContainers[0] "i": image "busybox" rejected: no tag or digest specified; use an explicit version tag or digest',
        ),
        ("sidecars", [{"image": "envoy:1.0"}], "sidecars[0]: name is required"),
        ("sidecars", [{"name": "s", "image": "envoy:1.0"}, {"name": "t"}], 'sidecars[1] "t": image is required'),
        (
            "sidecars",
            [{"name": "s", "image": "envoy:latest"}],
            'sidecars[0] "s": image "envoy:latest" rejected: :latest tag not allowed; use an explicit version tag or digest',
        ),
        (
            "sidecars",
            [{"name": "s", "image": "envoy:1.0", "ports": [{}]}],
            'sidecars[0] "s": ports[0]: containerPort is required',
        ),
        (
            "sidecars",
            [{"name": "s", "image": "envoy:1.0", "ports": [{"containerPort": 70000}]}],
            'sidecars[0] "s": ports[0]: containerPort 70000 out of valid range 1-65535',
        ),
        (
            "initContainers",
            [{"name": "i", "image": "busybox:1.36", "volumeMounts": [{"name": "v"}]}],
            'initContainers[0] "i": volumeMounts[0]: mountPath is required',
        ),
    ],
)
def test_extra_container_messages(key: str, entries: Any, message: str) -> None:
    assert handler_error("webservice", with_image(**{key: entries})) == message


def test_types_without_sidecars_or_affinity_refuse_them() -> None:
    assert error("daemonset", with_image(sidecars=[])).startswith(
        'component "c" (type "daemonset"): properties: unsupported field "sidecars"'
    )
    assert error("cronjob", with_image(schedule="0 2 * * *", affinity={})).startswith(
        'component "c" (type "cronjob"): properties: unsupported field "affinity"'
    )


@pytest.mark.parametrize(
    ("affinity", "expected"),
    [
        ({}, None),
        ({"enablePodAntiAffinity": False, "podAntiAffinityType": "required"}, None),
        (
            {"enablePodAntiAffinity": True},
            {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 100,
                            "podAffinityTerm": {
                                "labelSelector": {"matchLabels": {"app": "c"}},
                                "topologyKey": "kubernetes.io/hostname",
                            },
                        }
                    ]
                }
            },
        ),
        (
            {
                "enablePodAntiAffinity": True,
                "podAntiAffinityType": "required",
                "topologyKey": "topology.kubernetes.io/zone",
            },
            {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": {"app": "c"}}, "topologyKey": "topology.kubernetes.io/zone"}
                    ]
                }
            },
        ),
        (
            {"nodeSelector": {"zone": "a", "disk": "ssd", "gpu": 1}},
            {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "disk", "operator": "In", "values": ["ssd"]},
                                    {"key": "zone", "operator": "In", "values": ["a"]},
                                ]
                            }
                        ]
                    }
                }
            },
        ),
    ],
)
def test_affinity(affinity: Any, expected: Any) -> None:
    for type_name in ("webservice", "worker", "statefulset"):
        assert pod_spec(objects(type_name, with_image(affinity=affinity))[0]).get("affinity") == expected


def test_affinity_messages() -> None:
    assert handler_error("worker", with_image(affinity={"podAntiAffinityType": "soft"})) == (
        'unknown podAntiAffinityType "soft" (valid: preferred, required)'
    )
    assert error("worker", with_image(affinity={"podAntiAffinityType": "soft"})) == (
        'component "c" (type "worker"): properties.affinity.podAntiAffinityType: unknown podAntiAffinityType '
        '"soft" (valid: preferred, required)'
    )


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({}, None),
        ({"replicas": 2}, [HOSTNAME_SPREAD]),
        ({"replicas": 3}, [HOSTNAME_SPREAD, ZONE_SPREAD]),
        ({"replicas": 5, "topologySpread": True}, [HOSTNAME_SPREAD, ZONE_SPREAD]),
        ({"replicas": 3, "topologySpread": False}, None),
        ({"replicas": 0}, None),
    ],
)
def test_topology_spread(props: dict[str, Any], expected: Any) -> None:
    for type_name in ("webservice", "worker"):
        deployment = objects(type_name, with_image(**props))[0]
        assert pod_spec(deployment).get("topologySpreadConstraints") == expected
        assert deployment["spec"]["replicas"] == props.get("replicas", 1)


def test_statefulset_has_no_topology_spread() -> None:
    assert "topologySpreadConstraints" not in pod_spec(objects("statefulset", with_image(replicas=3))[0])
    assert error("statefulset", with_image(topologySpread=False)).startswith(
        'component "c" (type "statefulset"): properties: unsupported field "topologySpread"'
    )
