"""Objects held by the caller (docs/reconciler.md#held-objects): ``apply(hold=…)`` neither reads nor
writes them. The operator holds an object that is deleted again right after each creation
(docs/operator.md#drift): it stays deleted, its item as it was, ready if it was settled."""

from __future__ import annotations

from oam_operator.reconciler.inventory import InventoryItem
from tests.unit.reconciler.fakecluster import OWNER, FakeCluster, configmap, reconciler

HELD = ("", "ConfigMap", "shop", "b")


def test_a_held_object_deleted_is_not_created_and_keeps_its_item() -> None:
    cluster = FakeCluster()
    r = reconciler(cluster)
    inventory: list[InventoryItem] = []
    objects = [configmap("a"), configmap("b")]
    r.apply(inventory, objects, "shop", OWNER, "component")
    r.apply(inventory, objects, "shop", OWNER, "component")
    assert r.apply(inventory, objects, "shop", OWNER, "component") is True
    cluster.delete_object("ConfigMap", "b")
    cluster.writes.clear()
    assert r.apply(inventory, objects, "shop", OWNER, "component", hold={HELD}) is True
    assert cluster.writes == []
    assert {(i.name, i.phase.value, i.status) for i in inventory} == {("a", "Ready", "Current"),
                                                                      ("b", "Ready", "Current")}
    assert r.apply(inventory, objects, "shop", OWNER, "component") is False  # the hold is over
    assert cluster.writes == [("create", "ConfigMap", "b")]


def test_a_held_object_not_yet_ready_keeps_the_wave_waiting() -> None:
    cluster = FakeCluster()
    r = reconciler(cluster)
    inventory: list[InventoryItem] = []
    objects = [configmap("a"), configmap("b")]
    r.apply(inventory, objects, "shop", OWNER, "component")
    r.apply(inventory, objects, "shop", OWNER, "component")  # both Creating
    cluster.delete_object("ConfigMap", "b")
    cluster.writes.clear()
    assert r.apply(inventory, objects, "shop", OWNER, "component", hold={HELD}) is False
    assert cluster.writes == []
    assert [(item.name, detail) for item, detail in r.report.pending] == [("b", "Creating")]
