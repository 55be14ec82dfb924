"""The phase state machine of an inventory item
(docs/reconciler.md#phases-and-statuses, docs/reconciler.md#item-state-machine)."""

from __future__ import annotations

from datetime import UTC, datetime

from oam_operator.reconciler.inventory import InventoryItem, Phase

NOW = datetime(2026, 3, 1, 10, 4, 5, tzinfo=UTC)


def new_item() -> InventoryItem:
    return InventoryItem.model_validate({"kind": "ConfigMap", "version": "v1", "name": "c"})


def test_desired_object_lifecycle() -> None:
    item = new_item()
    item.schedule_application("d1")
    assert (item.phase, item.status, item.digest) == (Phase.SCHEDULED_FOR_APPLICATION, "InProgress", "d1")
    item.mark_creating(NOW)
    assert (item.phase, item.status, item.last_applied_at) == (Phase.CREATING, "InProgress", NOW)
    assert not item.observe("InProgress", terminating=False)
    assert (item.phase, item.status) == (Phase.CREATING, "InProgress")
    assert item.observe("Current", terminating=False)
    assert (item.phase, item.status) == (Phase.READY, "Current")
    # A Ready object that becomes unready keeps its phase; only the status changes.
    assert not item.observe("Failed", terminating=False)
    assert (item.phase, item.status) == (Phase.READY, "Failed")
    item.mark_updating(NOW)
    assert (item.phase, item.status) == (Phase.UPDATING, "InProgress")
    # Current but terminating is not ready.
    assert not item.observe("Current", terminating=True)
    assert item.phase is Phase.UPDATING


def test_purge_lifecycle() -> None:
    item = new_item()
    item.schedule_application("d1")
    item.mark_creating(NOW)
    item.observe("Current", terminating=False)
    item.schedule_completion()
    assert (item.phase, item.status) == (Phase.SCHEDULED_FOR_COMPLETION, "Current")
    item.mark_completing()
    assert (item.phase, item.status) == (Phase.COMPLETING, "Terminating")
    item.mark_completed()
    assert (item.phase, item.status) == (Phase.COMPLETED, "")
    item.schedule_application("d2")
    assert (item.phase, item.digest) == (Phase.SCHEDULED_FOR_APPLICATION, "d2")


def test_deletion_lifecycle() -> None:
    item = new_item()
    item.schedule_application("d1")
    item.schedule_deletion()
    assert (item.phase, item.status, item.digest) == (Phase.SCHEDULED_FOR_DELETION, "Terminating", "")
    item.mark_deleting()
    assert (item.phase, item.status) == (Phase.DELETING, "Terminating")
    item.schedule_application("d1")
    assert item.phase is Phase.SCHEDULED_FOR_APPLICATION
    item.mark_removed()
    assert item.phase is Phase.NONE
    assert "phase" not in item.to_json()


def test_phase_spellings() -> None:
    assert [p.value for p in Phase] == [
        "",
        "ScheduledForApplication",
        "Creating",
        "Updating",
        "Ready",
        "ScheduledForCompletion",
        "Completing",
        "Completed",
        "ScheduledForDeletion",
        "Deleting",
    ]
