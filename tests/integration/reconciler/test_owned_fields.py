"""What the API server does with the operator's field ownership (controller/service/fieldsets.py,
docs/operator.md#drift): a hand edit, a removed label and another controller's forced apply take
fields from the operator's manager; a field the Application does not set (an HPA's replicas)
does not; the operator's forced apply takes them back."""

from __future__ import annotations

from typing import Any

from oam_operator.controller.service.fieldsets import FieldSet, manager_fields, removed
from oam_operator.reconciler.client import APPLY_PATCH, ClusterClient
from oam_operator.reconciler.ratelimit import RateLimiter

OURS = "oam-operator.dev"
IMAGE = "spec.template.spec.containers[name=web].image"


def deployment(namespace: str, image: str = "registry.invalid/web:1") -> dict[str, Any]:
    labels = {"app": "web"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": namespace, "labels": {"app": "web", "tier": "front"}},
            "spec": {"selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "web", "image": image}]}}}}


class Writer:
    def __init__(self, kube_api: Any, namespace: str) -> None:
        self.client = ClusterClient(kube_api, rate_limiter=RateLimiter(0, 1), user_agent="owned-fields-test")
        self.path = f"/apis/apps/v1/namespaces/{namespace}/deployments/web"

    def apply(self, body: dict[str, Any], manager: str) -> dict[str, Any]:
        result: dict[str, Any] = self.client.request(
            "apply", "PATCH", self.path, body=body, content_type=APPLY_PATCH,
            query=[("fieldManager", manager), ("force", "true")])
        return result

    def patch(self, body: Any, manager: str, content_type: str) -> dict[str, Any]:
        result: dict[str, Any] = self.client.request("patch", "PATCH", self.path, body=body,
                                                     content_type=content_type, query=[("fieldManager", manager)])
        return result


def ours(obj: dict[str, Any]) -> FieldSet:
    fields = manager_fields(obj, OURS)
    assert fields is not None
    return fields


def test_edits_by_others_take_fields_from_the_operator_and_its_apply_takes_them_back(
        kube_api: Any, namespace: str) -> None:
    writer = Writer(kube_api, namespace)
    try:
        baseline = ours(writer.apply(deployment(namespace), OURS))

        scaled = writer.patch({"spec": {"replicas": 3}}, "horizontal-pod-autoscaler", "application/merge-patch+json")
        assert removed(baseline, ours(scaled)) == []  # the Application does not set replicas: no drift

        edited = writer.patch({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "evil/web:6"}]}}}},
                              "kubectl-set", "application/strategic-merge-patch+json")
        assert removed(baseline, ours(edited)) == [IMAGE]

        unlabelled = writer.patch([{"op": "remove", "path": "/metadata/labels/tier"}], "kubectl-label",
                                  "application/json-patch+json")
        assert removed(baseline, ours(unlabelled)) == ["metadata.labels.tier", IMAGE]

        restored = writer.apply(deployment(namespace), OURS)
        assert removed(baseline, ours(restored)) == []
        assert restored["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.invalid/web:1"
        assert restored["spec"]["replicas"] == 3  # the autoscaler's field is left alone

        other = writer.apply({"apiVersion": "apps/v1", "kind": "Deployment",
                              "metadata": {"name": "web", "namespace": namespace},
                              "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "other:2"}]}}}},
                             "another-controller")
        assert removed(baseline, ours(other)) == [IMAGE]
    finally:
        writer.client.request("delete", "DELETE", writer.path)
        writer.client.close()
