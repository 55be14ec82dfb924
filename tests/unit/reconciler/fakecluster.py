"""A cluster in memory for the reconciler's unit tests: ConfigMaps and Jobs read with GET and
written with POST and PUT (the ``Replace`` update policy), resourceVersions counted like
etcd's revisions, and a PUT that changes nothing answered as the API server does: with the
object as it was, its resourceVersion unchanged."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from oam_operator.reconciler import Reconciler, ReconcilerOptions
from oam_operator.reconciler.concurrency import Outcome
from oam_operator.reconciler.discovery import ApiResource
from oam_operator.reconciler.objectpolicies import MissingNamespacesPolicy
from tests.unit.unitkit import run_in_order

NAME = "r.test"
OWNER = "cluster/shop/app"
NOW = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
RESOURCES = {
    ("v1", "ConfigMap"): ApiResource("", "v1", "ConfigMap", "configmaps", True, ()),
    ("batch/v1", "Job"): ApiResource("batch", "v1", "Job", "jobs", True, ()),
}


class FakeCluster:
    """Just enough of ``ClusterClient`` for ``apply``; ``writes`` records (verb, kind, name)."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.writes: list[tuple[str, str, str]] = []
        self.version = 0

    @property
    def event_client(self) -> FakeCluster:
        return self

    def resource_for(self, api_version: str, kind: str) -> ApiResource | None:
        return RESOURCES.get((api_version, kind))

    def run_bounded(self, tasks: Sequence[Callable[[], Any]], limit: int) -> list[Outcome[Any]]:
        return run_in_order(tasks)

    def get(self, resource: ApiResource, namespace: str, name: str) -> dict[str, Any] | None:
        obj = self.objects.get((resource.kind, namespace, name))
        return copy.deepcopy(obj) if obj is not None else None

    def _store(self, resource: ApiResource, body: Any) -> dict[str, Any]:
        self.version += 1
        obj = copy.deepcopy(dict(body))
        obj["metadata"]["resourceVersion"] = str(self.version)
        self.objects[(resource.kind, obj["metadata"]["namespace"], obj["metadata"]["name"])] = obj
        return copy.deepcopy(obj)

    def create(self, resource: ApiResource, namespace: str, body: Any, **_: Any) -> dict[str, Any]:
        self.writes.append(("create", resource.kind, body["metadata"]["name"]))
        return self._store(resource, body)

    def replace(self, resource: ApiResource, namespace: str, name: str, body: Any, **_: Any) -> dict[str, Any]:
        self.writes.append(("update", resource.kind, name))
        live = self.objects[(resource.kind, namespace, name)]
        desired = copy.deepcopy(dict(body))
        desired["metadata"] = {**desired["metadata"], "resourceVersion": live["metadata"]["resourceVersion"]}
        if "status" in live:
            desired["status"] = live["status"]  # a PUT of the main resource keeps the status
        if desired == live:
            return copy.deepcopy(live)  # nothing to change: no write, the same resourceVersion
        return self._store(resource, desired)

    def delete_object(self, kind: str, name: str) -> None:
        """Someone else deletes the object."""
        del self.objects[(kind, "shop", name)]

    def set_status(self, kind: str, name: str, status: dict[str, Any]) -> None:
        """A controller writes the object's status (a new resourceVersion)."""
        obj = self.objects[(kind, "shop", name)]
        self.version += 1
        obj["status"] = status
        obj["metadata"]["resourceVersion"] = str(self.version)


def reconciler(cluster: FakeCluster, clock: Callable[[], datetime] = lambda: NOW, **options: Any) -> Reconciler:
    return Reconciler(NAME, cluster, ReconcilerOptions(  # type: ignore[arg-type]
        batch_reads=False, enable_events=False, clock=clock,
        missing_namespaces_policy=MissingNamespacesPolicy.DO_NOT_CREATE, **options))


def configmap(name: str, data: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data or {"k": "v"}}


def job(name: str, image: str = "registry.invalid/job:1") -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"ttlSecondsAfterFinished": 0, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "main", "image": image}]}}}}


COMPLETE = {"startTime": "2026-03-01T10:00:00Z", "succeeded": 1,
            "conditions": [{"type": "Complete", "status": "True"}]}
FAILED = {"startTime": "2026-03-01T10:00:00Z", "failed": 1, "conditions": [{"type": "Failed", "status": "True"}]}
RUNNING = {"startTime": "2026-03-01T10:00:00Z", "active": 1}
