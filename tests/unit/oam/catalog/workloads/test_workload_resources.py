"""Container ``resources`` and their defaults (docs/transform.md#shared-workload-properties,
docs/transform.md#durations-and-quantities)."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.workloads import RESOURCES, handler_error, main_container, objects, pod_spec, with_image

WRAP = "invalid resources configuration: "


def resources_of(resources: Any, type_name: str = "webservice") -> dict[str, Any]:
    props = with_image(resources=resources)
    if type_name == "cronjob":
        props["schedule"] = "0 * * * *"
    result: dict[str, Any] = main_container(objects(type_name, props)[0])["resources"]
    return result


@pytest.mark.parametrize("type_name", ["webservice", "worker", "statefulset", "daemonset", "cronjob"])
def test_defaults_on_every_type(type_name: str) -> None:
    assert resources_of(None, type_name) == RESOURCES
    assert resources_of({}, type_name) == RESOURCES


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        (
            {"requests": {"memory": "512Mi"}},
            {"limits": {"memory": "512Mi"}, "requests": {"cpu": "100m", "memory": "512Mi"}},
        ),
        ({"requests": {"cpu": 0.5}}, {"limits": {"memory": "128Mi"}, "requests": {"cpu": "500m", "memory": "128Mi"}}),
        (
            {"requests": {"cpu": "250m", "memory": "1Gi"}, "limits": {"cpu": 1, "memory": "2048Mi"}},
            {"limits": {"cpu": "1", "memory": "2Gi"}, "requests": {"cpu": "250m", "memory": "1Gi"}},
        ),
        (
            {"limits": {"memory": "1536Mi"}},
            {"limits": {"memory": "1536Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
        ),
        (
            {
                "requests": {"ephemeral-storage": "1G", "hugepages-2Mi": "4Mi", "example.com/gpu": 1},
                "limits": {"hugepages-2Mi": "4Mi", "example.com/gpu": "1"},
            },
            {
                "limits": {"example.com/gpu": "1", "hugepages-2Mi": "4Mi", "memory": "128Mi"},
                "requests": {
                    "cpu": "100m",
                    "ephemeral-storage": "1G",
                    "example.com/gpu": "1",
                    "hugepages-2Mi": "4Mi",
                    "memory": "128Mi",
                },
            },
        ),
    ],
)
def test_values_are_canonical_and_defaults_fill_the_gaps(resources: Any, expected: Any) -> None:
    assert resources_of(resources) == expected


def test_defaults_apply_to_init_containers_and_sidecars() -> None:
    props = with_image(
        initContainers=[{"name": "i", "image": "busybox:1.36", "resources": {"requests": {"memory": "64Mi"}}}],
        sidecars=[{"name": "s", "image": "envoy:1.30"}],
    )
    spec = pod_spec(objects("webservice", props)[0])
    assert spec["initContainers"][0]["resources"] == {
        "limits": {"memory": "64Mi"},
        "requests": {"cpu": "100m", "memory": "64Mi"},
    }
    assert spec["containers"][1]["resources"] == RESOURCES


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        (
            {"requests": {"gpu": 1}},
            "resources.requests: gpu: must be a standard container resource (cpu, memory, ephemeral-storage), a "
            'hugepages-<size> name, or a fully qualified extended resource name (e.g. "example.com/foo")',
        ),
        (
            {"limits": {"kubernetes.io/foo": 1}},
            "resources.limits: kubernetes.io/foo: must be a standard container resource (cpu, memory, ephemeral-storage), a "
            'hugepages-<size> name, or a fully qualified extended resource name (e.g. "example.com/foo")',
        ),
        (
            {"requests": {"cpu": "one"}},
            'resources.requests: cpu: invalid quantity "one": quantities must match the regular expression '
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        ({"limits": {"memory": "-1Gi"}}, 'resources.limits: memory: quantity must not be negative, got "-1Gi"'),
        (
            {"requests": {"cpu": "2"}, "limits": {"cpu": "1500m"}},
            "resources: cpu: request 2 must not exceed limit 1500m",
        ),
        (
            {"requests": {"memory": "1Gi"}, "limits": {"memory": "512Mi"}},
            "resources: memory: request 1Gi must not exceed limit 512Mi",
        ),
        ({"requests": {"example.com/gpu": 1}}, "resources: example.com/gpu: request 1 requires a limit equal to it"),
        (
            {"requests": {"example.com/gpu": 1}, "limits": {"example.com/gpu": 2}},
            "resources: example.com/gpu: request 1 must equal limit 2",
        ),
    ],
)
def test_resources_messages(resources: Any, message: str) -> None:
    assert handler_error("worker", with_image(resources=resources)) == WRAP + message


def test_init_container_resource_errors_name_the_container() -> None:
    props = with_image(initContainers=[{"name": "i", "image": "busybox:1.36", "resources": {"requests": {"gpu": 1}}}])
    assert handler_error("worker", props).startswith(f'initContainers[0] "i": {WRAP}resources.requests: gpu: ')
