"""A write that changes nothing keeps the item's readiness (docs/reconciler.md#a-no-op-write,
issue 37): a forced re-apply of an object in sync (a reconcile request, the reapply interval)
is answered with the object as it was, its resourceVersion unchanged, so its status step is
made on that answer and the call is done; a write that changed the object is ``Updating`` and
waits for the next call, as before."""

from __future__ import annotations

from datetime import timedelta

from oam_operator.reconciler.inventory import InventoryItem
from tests.unit.reconciler.fakecluster import NOW, OWNER, FakeCluster, configmap, reconciler
from tests.unit.unitkit import Clock


def test_a_forced_re_apply_of_an_object_in_sync_stays_ready() -> None:
    cluster, clock = FakeCluster(), Clock(NOW)
    r = reconciler(cluster, clock)
    inventory: list[InventoryItem] = []
    objects = [configmap("a"), configmap("b")]
    r.apply(inventory, objects, "shop", OWNER, "component")
    r.apply(inventory, objects, "shop", OWNER, "component")
    assert r.apply(inventory, objects, "shop", OWNER, "component") is True
    versions = {name: obj["metadata"]["resourceVersion"] for (_, _, name), obj in cluster.objects.items()}
    clock.advance(timedelta(seconds=30))
    for item in inventory:
        item.last_applied_at = None  # what a reconcile request does (docs/operator.md#drift)
    cluster.writes.clear()
    assert r.apply(inventory, objects, "shop", OWNER, "component") is True
    assert cluster.writes == [("update", "ConfigMap", "a"), ("update", "ConfigMap", "b")]
    assert {(i.name, i.phase.value, i.status, i.last_applied_at) for i in inventory} == {
        ("a", "Ready", "Current", NOW + timedelta(seconds=30)), ("b", "Ready", "Current", NOW + timedelta(seconds=30))}
    assert {name: obj["metadata"]["resourceVersion"] for (_, _, name), obj in cluster.objects.items()} == versions
    assert r.report.pending == ()


def test_a_write_that_changed_the_object_is_updating() -> None:
    cluster = FakeCluster()
    r = reconciler(cluster)
    inventory: list[InventoryItem] = []
    r.apply(inventory, [configmap("a")], "shop", OWNER, "component")
    r.apply(inventory, [configmap("a")], "shop", OWNER, "component")
    assert r.apply(inventory, [configmap("a")], "shop", OWNER, "component") is True
    cluster.objects[("ConfigMap", "shop", "a")]["data"] = {"k": "edited by hand"}
    inventory[0].last_applied_at = None  # drift found: due
    assert r.apply(inventory, [configmap("a")], "shop", OWNER, "component") is False
    assert (inventory[0].phase.value, inventory[0].status) == ("Updating", "InProgress")
    assert cluster.objects[("ConfigMap", "shop", "a")]["data"] == {"k": "v"}
