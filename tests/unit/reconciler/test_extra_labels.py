"""The ``extra_labels`` option (docs/reconciler.md#keys-written-onto-objects): stamped on every
object over authored values (``None`` removes one), part of the object digest, so a change of
them — an Application moved to another shard — re-applies every object at the next call; and
removed from a released object, as the owner label."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from oam_operator.reconciler import Reconciler, ReconcilerOptions
from oam_operator.reconciler.client import MERGE_PATCH
from oam_operator.reconciler.concurrency import Outcome
from oam_operator.reconciler.discovery import ApiResource
from oam_operator.reconciler.inventory import InventoryItem
from oam_operator.reconciler.objectpolicies import DeletePolicy, MissingNamespacesPolicy
from tests.unit.unitkit import run_in_order

NAME = "r.test"
SHARD = f"{NAME}/shard"
OWNER = "cluster/shop/app"
NOW = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
CM = ApiResource("", "v1", "ConfigMap", "configmaps", True, ())


class FakeCluster:
    """Just enough of ``ClusterClient`` for ``apply``/``delete``/``plan`` of ConfigMaps with
    GET reads (``batch_reads=False``), POST/PUT writes (the ``Replace`` policy) and the merge
    patch that releases an object; records the writes."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}
        self.writes: list[tuple[str, str, Any]] = []
        self.version = 0

    @property
    def event_client(self) -> FakeCluster:
        return self

    def resource_for(self, api_version: str, kind: str) -> ApiResource | None:
        return CM if (api_version, kind) == ("v1", "ConfigMap") else None

    def run_bounded(self, tasks: Sequence[Callable[[], Any]], limit: int) -> list[Outcome[Any]]:
        return run_in_order(tasks)

    def get(self, resource: ApiResource, namespace: str, name: str) -> dict[str, Any] | None:
        obj = self.objects.get((namespace, name))
        return copy.deepcopy(obj) if obj is not None else None

    def _store(self, body: Any) -> dict[str, Any]:
        self.version += 1
        obj = copy.deepcopy(dict(body))
        obj["metadata"]["resourceVersion"] = str(self.version)
        self.objects[(obj["metadata"]["namespace"], obj["metadata"]["name"])] = obj
        return copy.deepcopy(obj)

    def create(self, resource: ApiResource, namespace: str, body: Any, **_: Any) -> dict[str, Any]:
        self.writes.append(("create", body["metadata"]["name"], copy.deepcopy(body)))
        return self._store(body)

    def replace(self, resource: ApiResource, namespace: str, name: str, body: Any, **_: Any) -> dict[str, Any]:
        self.writes.append(("update", name, copy.deepcopy(body)))
        return self._store(body)

    def patch(self, resource: ApiResource, namespace: str, name: str, body: Any, *, content_type: str,
              **_: Any) -> dict[str, Any]:
        assert content_type == MERGE_PATCH
        self.writes.append(("patch", name, copy.deepcopy(body)))
        obj = copy.deepcopy(self.objects[(namespace, name)])
        for field in ("labels", "annotations"):
            values = obj["metadata"].setdefault(field, {})
            for key, value in (body["metadata"].get(field) or {}).items():
                if value is None:
                    values.pop(key, None)
                else:
                    values[key] = value
        return self._store(obj)


def configmap(name: str = "c", labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}


def reconciler(cluster: FakeCluster, extra: dict[str, str | None] | None = None, **options: Any) -> Reconciler:
    return Reconciler(NAME, cluster, ReconcilerOptions(  # type: ignore[arg-type]
        extra_labels=extra or {}, batch_reads=False, enable_events=False, clock=lambda: NOW,
        missing_namespaces_policy=MissingNamespacesPolicy.DO_NOT_CREATE, **options))


def apply_until_done(r: Reconciler, inventory: list[InventoryItem], objects: list[dict[str, Any]]) -> None:
    for _ in range(5):
        if r.apply(inventory, objects, "shop", OWNER, "component"):
            return
    raise AssertionError(f"apply() did not finish: {r.report}")


def labels(cluster: FakeCluster, name: str = "c") -> dict[str, str]:
    return dict(cluster.objects[("shop", name)]["metadata"].get("labels") or {})


def planned_labels(extra: dict[str, str | None], obj: dict[str, Any]) -> dict[str, str]:
    [planned] = reconciler(FakeCluster(), extra).plan([obj], "shop", OWNER, "component")
    return dict(planned.body["metadata"]["labels"])


def test_the_extra_labels_are_stamped_over_authored_values() -> None:
    owner = f"{NAME}/owner-id"
    assert planned_labels({SHARD: "s1"}, configmap()) == {SHARD: "s1", owner: planned_labels({}, configmap())[owner]}
    assert planned_labels({SHARD: "s1"}, configmap(labels={SHARD: "s2", "tier": "web"}))[SHARD] == "s1"


def test_a_none_value_removes_the_label_an_authored_one_too() -> None:
    stamped = planned_labels({SHARD: None}, configmap(labels={SHARD: "s2", "tier": "web"}))
    assert SHARD not in stamped and stamped["tier"] == "web"
    assert SHARD not in planned_labels({SHARD: None}, configmap())


def test_the_extra_labels_are_part_of_the_digest() -> None:
    def digest(extra: dict[str, str | None]) -> str:
        [planned] = reconciler(FakeCluster(), extra).plan([configmap()], "shop", OWNER, "component")
        return str(planned.body["metadata"]["annotations"][f"{NAME}/digest"])

    assert len({digest({SHARD: "s1"}), digest({SHARD: "s2"}), digest({SHARD: None})}) == 3
    # Removing a label that is not there leaves the digest as it was without the option: the
    # unsharded instance's objects keep their digests (no re-apply on an upgrade).
    assert digest({SHARD: None}) == digest({})


def test_a_shard_move_re_stamps_every_object_at_the_next_call() -> None:
    cluster = FakeCluster()
    inventory: list[InventoryItem] = []
    objects = [configmap("a"), configmap("b")]
    apply_until_done(reconciler(cluster, {SHARD: "s1"}), inventory, objects)
    assert labels(cluster, "a")[SHARD] == labels(cluster, "b")[SHARD] == "s1"
    cluster.writes.clear()
    assert reconciler(cluster, {SHARD: "s1"}).apply(inventory, objects, "shop", OWNER, "component") is True
    assert cluster.writes == []  # in sync: nothing written

    # The same inventory, the new shard's reconciler: its first call updates both objects.
    moved = reconciler(cluster, {SHARD: "s2"})
    assert moved.apply(inventory, objects, "shop", OWNER, "component") is False
    assert [(verb, name) for verb, name, _ in cluster.writes] == [("update", "a"), ("update", "b")]
    assert labels(cluster, "a")[SHARD] == labels(cluster, "b")[SHARD] == "s2"
    apply_until_done(moved, inventory, objects)

    # Moved to the unsharded instance: the label is taken off.
    cluster.writes.clear()
    apply_until_done(reconciler(cluster, {SHARD: None}), inventory, objects)
    assert [(verb, name) for verb, name, _ in cluster.writes] == [("update", "a"), ("update", "b")]
    assert SHARD not in labels(cluster, "a") and SHARD not in labels(cluster, "b")


def test_a_released_object_loses_the_extra_labels_with_the_owner_label() -> None:
    cluster = FakeCluster()
    inventory: list[InventoryItem] = []
    r = reconciler(cluster, {SHARD: "s1"}, delete_policy=DeletePolicy.ORPHAN)
    apply_until_done(r, inventory, [configmap(labels={"tier": "web"})])
    for _ in range(5):
        if r.delete(inventory, OWNER):
            break
    [patch] = [body for verb, _, body in cluster.writes if verb == "patch"]
    assert patch["metadata"]["labels"] == {f"{NAME}/owner-id": None, SHARD: None}
    assert labels(cluster) == {"tier": "web"}


@pytest.mark.parametrize("extra", [{"": "x"}, {SHARD: 1}, ["x"]])
def test_invalid_extra_labels_are_refused(extra: Any) -> None:
    with pytest.raises(ValueError, match="invalid reconciler option extra_labels"):
        ReconcilerOptions(extra_labels=extra).validate()
