"""The replicas of an autoscaled workload are the autoscaler's (controller/reconcile/autoscaled.py,
docs/operator.md#drift): the operator applies the ``scaler`` trait's Deployment without them."""

from __future__ import annotations

from typing import Any

from oam_operator.controller.reconcile.autoscaled import release_autoscaled_replicas
from oam_operator.controller.reconcile.composition import OperatorTransform
from oam_operator.controller.reconcile.settings import Settings


def workload(kind: str, name: str, replicas: int = 2) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "shop"},
            "spec": {"replicas": replicas, "selector": {}}}


def hpa(kind: str, name: str, api_version: str = "autoscaling/v2") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "HorizontalPodAutoscaler", "metadata": {"name": name, "namespace": "shop"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": name}}}


def test_only_the_scaled_workloads_lose_their_replicas() -> None:
    objects = [workload("Deployment", "web"), workload("Deployment", "api"), workload("StatefulSet", "db"),
               hpa("Deployment", "web"), hpa("StatefulSet", "db", "autoscaling/v1")]
    released = release_autoscaled_replicas(objects)
    assert [obj["spec"].get("replicas") for obj in released[:3]] == [None, 2, None]
    assert objects[0]["spec"]["replicas"] == 2  # the input is left as it was
    assert released[1] is objects[1]


def test_without_an_autoscaler_nothing_changes() -> None:
    objects = [workload("Deployment", "web"), hpa("StatefulSet", "web")]
    assert release_autoscaled_replicas(objects) == objects


def test_the_operators_transform_leaves_the_scaler_traits_replicas_to_the_autoscaler() -> None:
    body = {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"components": [{"name": "web", "type": "webservice",
                                     "properties": {"image": "nginx:1.27", "port": 80},
                                     "traits": [{"type": "scaler", "properties": {"minReplicas": 1,
                                                                                  "maxReplicas": 3}}]}]}}
    encoded, _ = OperatorTransform.from_settings(Settings()).transform(body, cluster_id="c", domain="oam-operator.dev",
                                                                      profile=None)
    deployment = next(obj for obj in encoded.objects if obj["kind"] == "Deployment")
    assert "replicas" not in deployment["spec"]
    assert [obj["kind"] for obj in encoded.objects].count("HorizontalPodAutoscaler") == 1
