"""Fair queues between namespaces (docs/operator.md#fair-queues), on the full control plane.

One operator watches two namespaces with one slot (``--max-concurrent-reconciles 1``, not
adaptive), so every pass but the running one waits. A flood of Applications in one namespace
builds a backlog (read from ``oam_operator_pass_queue_deepest``); then one Application is
created in the other namespace. The evidence is the order of admissions in the operator's log
(each pass line carries its ``admission`` number, the passes ``waiting_ahead`` of it when it
asked for a slot and the passes that ``overtaken_by`` it meanwhile), not a time: the healthy
Application's first pass is admitted after at most one of the flood's passes, ahead of the
flood's backlog, which is served after it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from e2ekit import GROUP, VERSION, Kube, OperatorProcess, configmap_component
from kubernetes import client

from tools.devcluster import ClusterHandle
from tools.devcluster.pytest_plugin import default_wait, wait_until

# Which pass is served first depends on how fast the flood's passes run: alone.
pytestmark = pytest.mark.run_alone

FLOOD = 60
OBJECTS = 20  # each flood pass applies 20 objects, so the backlog outlasts kopf's initial delay of up to 2 s
BACKLOG = 15


@pytest.fixture
def calm_namespace(full_kube_api: Any, full_cluster: ClusterHandle) -> Iterator[str]:
    core: Any = client.CoreV1Api(full_kube_api)  # the client's models are loosely typed; read them as data
    name = f"t-fair-calm-{secrets.token_hex(3)}"
    core.create_namespace({"metadata": {"name": name}})
    wait_until(lambda: any(sa.metadata.name == "default" for sa in core.list_namespaced_service_account(name).items),
               default_wait(full_cluster), f"ServiceAccount default in namespace {name}")
    yield name
    core.delete_namespace(name, propagation_policy="Background")


def create_app(kube: Kube, namespace: str, name: str, objects: int) -> None:
    components = [configmap_component(f"{name}-{index}") for index in range(objects)]
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"components": components}}
    kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "applications", body)


def gauge(operator: OperatorProcess, name: str) -> float:
    return next((value for (metric, _), value in operator.metrics().items() if metric == name), 0.0)


def passes(operator: OperatorProcess, namespace: str) -> list[dict[str, Any]]:
    return sorted(operator.passes(namespace), key=lambda entry: int(entry["admission"]))


def test_a_healthy_application_in_another_namespace_is_served_before_the_floods_backlog(
        kube: Kube, calm_namespace: str, start_operator: Callable[..., OperatorProcess]) -> None:
    flood = kube.namespace
    operator = start_operator(flood, "--namespace", calm_namespace, "--max-concurrent-reconciles", "1",
                              "--no-adaptive-concurrency")
    for index in range(FLOOD):
        create_app(kube, flood, f"flood-{index:02d}", OBJECTS)
    wait_until(lambda: gauge(operator, "oam_operator_pass_queue_deepest") >= BACKLOG, default_wait(kube.cluster),
               f"a backlog of {BACKLOG} passes in the flood's namespace")
    create_app(kube, calm_namespace, "healthy", 1)
    healthy = Kube(kube.api, calm_namespace, kube.cluster)
    healthy.wait_ready("healthy")
    for index in range(FLOOD):
        kube.wait_ready(f"flood-{index:02d}")

    first = passes(operator, calm_namespace)[0]
    assert first["name"] == "healthy"
    assert first["waiting_ahead"] >= BACKLOG // 2, first  # the flood's backlog was there when it asked
    assert first["overtaken_by"] <= 1, first  # first come, first served would be all of waiting_ahead
    after = [entry for entry in passes(operator, flood) if entry["admission"] > first["admission"]]
    assert len(after) >= first["waiting_ahead"] - 1  # the backlog it found was served after it
    # Every admission is numbered once, across both namespaces.
    numbers = [int(entry["admission"]) for entry in passes(operator, flood) + passes(operator, calm_namespace)]
    assert len(numbers) == len(set(numbers))
