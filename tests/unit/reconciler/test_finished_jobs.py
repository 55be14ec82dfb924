"""A finished Job is finished (docs/reconciler.md#finished-jobs, issue 37): seen complete and then
deleted, it is ``Completed`` and not created again until its manifest changes; deleted while
it ran, or after it failed, it is created again as any deleted object is."""

from __future__ import annotations

from oam_operator.reconciler.completion import finished, ran_to_completion
from oam_operator.reconciler.inventory import InventoryItem, Phase
from oam_operator.reconciler.objects import ObjectRef
from tests.unit.reconciler.fakecluster import (
    COMPLETE,
    FAILED,
    OWNER,
    RUNNING,
    FakeCluster,
    configmap,
    job,
    reconciler,
)


def applied(cluster: FakeCluster, inventory: list[InventoryItem], objects: list[dict[str, object]]) -> bool:
    return reconciler(cluster).apply(inventory, objects, "shop", OWNER, "component")


def phases(inventory: list[InventoryItem]) -> dict[str, tuple[str, str]]:
    return {item.name: (item.phase.value, item.status) for item in inventory}


def ready_after_it_completed(cluster: FakeCluster, objects: list[dict[str, object]]) -> list[InventoryItem]:
    inventory: list[InventoryItem] = []
    assert applied(cluster, inventory, objects) is False  # the checkpoint
    assert applied(cluster, inventory, objects) is False  # created
    cluster.set_status("Job", "migrate", COMPLETE)
    assert applied(cluster, inventory, objects) is True
    assert phases(inventory)["migrate"] == ("Ready", "Current")
    return inventory


def test_a_job_deleted_after_it_completed_is_completed_and_not_created_again() -> None:
    cluster = FakeCluster()
    objects = [configmap("settings"), job("migrate")]
    inventory = ready_after_it_completed(cluster, objects)
    cluster.delete_object("Job", "migrate")  # its ttlSecondsAfterFinished
    cluster.writes.clear()
    assert applied(cluster, inventory, objects) is True
    assert phases(inventory) == {"settings": ("Ready", "Current"), "migrate": ("Completed", "")}
    assert cluster.writes == []
    assert applied(cluster, inventory, objects) is True  # and in every later call
    assert cluster.writes == []
    assert ("Job", "shop", "migrate") not in cluster.objects


def test_a_changed_manifest_runs_it_again() -> None:
    cluster = FakeCluster()
    inventory = ready_after_it_completed(cluster, [job("migrate")])
    cluster.delete_object("Job", "migrate")
    assert applied(cluster, inventory, [job("migrate")]) is True
    cluster.writes.clear()
    assert applied(cluster, inventory, [job("migrate", image="registry.invalid/job:2")]) is False
    assert cluster.writes == [("create", "Job", "migrate")]
    assert phases(inventory) == {"migrate": ("Creating", "InProgress")}


def test_a_job_deleted_while_it_ran_or_after_it_failed_is_created_again() -> None:
    for status in (RUNNING, FAILED):
        cluster = FakeCluster()
        inventory: list[InventoryItem] = []
        objects = [job("migrate")]
        applied(cluster, inventory, objects)
        applied(cluster, inventory, objects)
        cluster.set_status("Job", "migrate", status)
        assert applied(cluster, inventory, objects) is False
        cluster.delete_object("Job", "migrate")
        cluster.writes.clear()
        assert applied(cluster, inventory, objects) is False
        assert cluster.writes == [("create", "Job", "migrate")], status


def test_other_objects_deleted_are_created_again() -> None:
    cluster = FakeCluster()
    inventory = ready_after_it_completed(cluster, [configmap("settings"), job("migrate")])
    cluster.delete_object("ConfigMap", "settings")
    cluster.writes.clear()
    assert applied(cluster, inventory, [configmap("settings"), job("migrate")]) is False
    assert cluster.writes == [("create", "ConfigMap", "settings")]


def test_what_counts_as_seen_complete() -> None:
    assert ran_to_completion(job("j") | {"status": COMPLETE})
    assert not ran_to_completion(job("j") | {"status": FAILED})
    assert not ran_to_completion(job("j") | {"status": RUNNING})
    assert not ran_to_completion(job("j") | {"status": {"conditions": [{"type": "Complete", "status": "False"}]}})
    assert not ran_to_completion(configmap("c") | {"status": COMPLETE})
    item = InventoryItem(group="batch", version="v1", kind="Job", name="j", phase=Phase.READY, status="Current")
    assert finished(item)
    assert not finished(item.model_copy(update={"status": "Failed"}))
    assert not finished(item.model_copy(update={"phase": Phase.CREATING, "status": "InProgress"}))
    assert not finished(item.model_copy(update={"kind": "Pod", "group": ""}))


def test_a_job_the_caller_saw_deleted_complete_is_completed_though_no_call_read_it_so() -> None:
    """With ``ttlSecondsAfterFinished: 0`` the Job is gone before a call reads it complete; the
    caller's watch saw its last state (the ``completed`` option), asked only before a create."""
    cluster = FakeCluster()
    asked: list[str] = []

    def completed(ref: ObjectRef) -> bool:
        asked.append(ref.name)
        return ref.name == "migrate"

    r = reconciler(cluster, completed=completed)
    inventory: list[InventoryItem] = []
    objects = [job("migrate"), job("other")]
    r.apply(inventory, objects, "shop", OWNER, "component")
    assert r.apply(inventory, objects, "shop", OWNER, "component") is False  # created: Creating
    assert asked == []  # a first creation asks nothing
    cluster.delete_object("Job", "migrate")
    cluster.delete_object("Job", "other")
    cluster.writes.clear()
    assert r.apply(inventory, objects, "shop", OWNER, "component") is False
    assert asked == ["migrate", "other"]
    assert cluster.writes == [("create", "Job", "other")]
    assert phases(inventory) == {"migrate": ("Completed", ""), "other": ("Creating", "InProgress")}
    cluster.writes.clear()
    changed = [job("migrate", image="registry.invalid/job:2"), job("other")]
    r.apply(inventory, changed, "shop", OWNER, "component")  # a new manifest: created, whatever was seen
    assert ("create", "Job", "migrate") in cluster.writes


def test_the_rule_holds_across_a_restart_and_reads_as_any_completed_item() -> None:
    """What a restart reads is the persisted inventory (the operator's ``compactInventory``): a
    ``Completed`` Job item in the compact encoding every release reads; a fresh reconciler,
    told nothing by any watch, does not create it."""
    from oam_operator.api.compact_inventory import decode, encode
    from oam_operator.reconciler.inventory import dump_inventory, load_inventory

    cluster = FakeCluster()
    inventory = ready_after_it_completed(cluster, [job("migrate")])
    cluster.delete_object("Job", "migrate")
    assert applied(cluster, inventory, [job("migrate")]) is True
    persisted = encode(dump_inventory(inventory))
    assert persisted["entries"][0].split(" ")[6] == "d-"  # phase Completed, no status: format 1 as it was
    restarted = load_inventory(decode(persisted))
    cluster.writes.clear()
    assert applied(cluster, restarted, [job("migrate")]) is True
    assert cluster.writes == [] and phases(restarted) == {"migrate": ("Completed", "")}
