"""The ``scaler`` trait (docs/transform.md#scaling-and-storage):
HPA, PDB, effective-value checks, allowed component types."""

from __future__ import annotations

from typing import Any

import pytest
from oamkit.traits import (
    NS,
    capabilities,
    document,
    error,
    find,
    kinds,
    objects,
    trait,
    trait_error,
    webservice,
    worker,
)

from oam_operator.oam import ValidationError, new_builtin_transformer, parse_application


def cpu(utilization: int) -> dict[str, Any]:
    return {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": utilization}},
    }


def memory(utilization: int) -> dict[str, Any]:
    return {
        "type": "Resource",
        "resource": {"name": "memory", "target": {"type": "Utilization", "averageUtilization": utilization}},
    }


def test_hpa_with_default_cpu_target() -> None:
    text = document(webservice("api", trait("scaler", minReplicas=2, maxReplicas=10)))
    assert kinds(text)[-1] == ("HorizontalPodAutoscaler", "api-hpa")
    assert find(objects(text), "HorizontalPodAutoscaler") == {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "api-hpa", "namespace": NS, "labels": {"app": "api"}},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
            "minReplicas": 2,
            "maxReplicas": 10,
            "metrics": [cpu(80)],
        },
    }


@pytest.mark.parametrize(
    ("props", "metrics"),
    [
        ({"cpuUtilization": 60}, [cpu(60)]),
        ({"memoryUtilization": 70}, [memory(70)]),
        ({"cpuUtilization": 50, "memoryUtilization": 75.0}, [cpu(50), memory(75)]),
    ],
)
def test_metrics(props: dict[str, Any], metrics: list[Any]) -> None:
    obj = find(
        objects(document(worker("jobs", trait("scaler", minReplicas=1, maxReplicas=3, **props)))),
        "HorizontalPodAutoscaler",
    )
    assert obj["spec"]["metrics"] == metrics
    assert obj["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "jobs"}


def test_pdb_follows_the_hpa() -> None:
    text = document(webservice("api", trait("scaler", minReplicas=2, maxReplicas=4, enablePDB=True)))
    assert kinds(text)[-2:] == [("HorizontalPodAutoscaler", "api-hpa"), ("PodDisruptionBudget", "api-pdb")]
    assert find(objects(text), "PodDisruptionBudget") == {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "api-pdb", "namespace": NS, "labels": {"app": "api"}},
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "api"}}},
    }
    labelled = find(objects(text, label=True), "PodDisruptionBudget")
    assert labelled["metadata"]["labels"] == {"app": "api", "oam-operator.dev/component": "api"}
    assert labelled["spec"]["selector"] == {"matchLabels": {"app": "api"}}


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"minReplicas": "2", "maxReplicas": 3}, "minReplicas must be a whole number"),
        ({"minReplicas": 1.5, "maxReplicas": 3}, "minReplicas must be a whole number"),
        ({"minReplicas": 1, "maxReplicas": "x"}, "maxReplicas must be a whole number"),
        ({"minReplicas": 1, "maxReplicas": 3, "cpuUtilization": 0}, "cpuUtilization must be between 1 and 100, got 0"),
        (
            {"minReplicas": 1, "maxReplicas": 3, "cpuUtilization": 101},
            "cpuUtilization must be between 1 and 100, got 101",
        ),
        (
            {"minReplicas": 1, "maxReplicas": 3, "memoryUtilization": 0},
            "memoryUtilization must be between 1 and 100, got 0",
        ),
        ({"minReplicas": 2, "maxReplicas": 3, "enablePDB": "yes"}, "enablePDB must be a bool"),
    ],
)
def test_property_messages(props: dict[str, Any], message: str) -> None:
    assert trait_error(webservice("api", trait("scaler", **props))) == f'component "api" trait "scaler": {message}'


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (
            {"maxReplicas": 3},
            "minReplicas must be >= 1, got 0 (set it on the trait or via an EnvironmentPolicy scaler default)",
        ),
        (
            {"minReplicas": 0, "maxReplicas": 3},
            "minReplicas must be >= 1, got 0 (set it on the trait or via an EnvironmentPolicy scaler default)",
        ),
        ({"minReplicas": 2}, "maxReplicas (0) must be >= minReplicas (2)"),
        ({"minReplicas": 5, "maxReplicas": 3}, "maxReplicas (3) must be >= minReplicas (5)"),
        (
            {"minReplicas": 1, "maxReplicas": 3, "enablePDB": True},
            "enablePDB requires minReplicas >= 2 (got 1); with 1 replica PDB blocks all voluntary disruptions",
        ),
    ],
)
def test_effective_value_messages_carry_the_component_context_only(props: dict[str, Any], message: str) -> None:
    assert trait_error(webservice("api", trait("scaler", **props))) == f'component "api": {message}'


def test_rendering_supplies_effective_values() -> None:
    caps = capabilities(scaler={"minReplicas": 2, "maxReplicas": 6, "cpuUtilization": 70})
    obj = find(objects(document(webservice("api", trait("scaler", maxReplicas=4))), caps), "HorizontalPodAutoscaler")
    assert (obj["spec"]["minReplicas"], obj["spec"]["maxReplicas"], obj["spec"]["metrics"]) == (2, 4, [cpu(70)])
    bad = capabilities(scaler={"minReplicas": 5})
    assert trait_error(webservice("api", trait("scaler", maxReplicas=4)), bad) == (
        'component "api": maxReplicas (4) must be >= minReplicas (5)'
    )


@pytest.mark.parametrize("component_type", ["statefulset", "daemonset", "cronjob", "passthrough", "helm"])
def test_scaler_is_refused_on_other_component_types(component_type: str) -> None:
    text = document({"name": "c", "type": component_type, "properties": {}, "traits": [trait("scaler")]})
    t = new_builtin_transformer()
    with pytest.raises(ValidationError) as info:
        parse_application(text, component_types=t.component_types(), trait_types=t.trait_types())
    assert str(info.value) == (
        f'trait "scaler" is not supported on component type "{component_type}" (component "c"); '
        "supported types: webservice, worker"
    )


def test_schema_type_check_runs_first() -> None:
    text = document(webservice("api", trait("scaler", minReplicas="two", maxReplicas=3)))
    assert error(text, validate=True) == (
        'component "api": trait "scaler": properties.minReplicas: expected integer, got string (two)'
    )
