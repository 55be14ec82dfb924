"""Which status changes are written at once and which may wait (controller/reconcile/statuswriter.py)."""

from __future__ import annotations

from typing import Any

import pytest

from oam_operator.api.compact_inventory import encode
from oam_operator.controller.reconcile.statuswriter import PROGRESS_WRITE_INTERVAL, may_wait
from oam_operator.reconciler.inventory import InventoryItem, dump_inventory


def status(state: str = "Processing", reason: str = "Processing", message: str = "m", *,
           items: tuple[str, ...] = ("a", "b"), phase: str = "Creating", generation: int = 1) -> dict[str, Any]:
    return {
        "state": state, "observedGeneration": generation,
        "conditions": [{"type": "Ready", "status": "False", "reason": reason, "message": message}],
        "inventory": [{"group": "", "kind": "ConfigMap", "namespace": "ns", "name": name, "phase": phase}
                      for name in items],
    }


def test_progress_on_the_same_items_may_wait_for_a_while() -> None:
    old, new = status(message="applying 2"), status(message="waiting for b", phase="Ready")
    assert may_wait(old, new, 0.5)
    assert PROGRESS_WRITE_INTERVAL == 2.0
    assert may_wait(old, new, PROGRESS_WRITE_INTERVAL - 0.01)
    assert not may_wait(old, new, PROGRESS_WRITE_INTERVAL)  # progress is shown every 10 s
    assert not may_wait(old, new, None)  # nothing written by this process yet


@pytest.mark.parametrize(("old", "new"), [
    (status(), status(items=("a", "b", "c"))),  # a checkpoint: a new item before its object
    (status(), status(items=("a",))),  # an item pruned
    (status(), status("Ready", "Ready")),  # an outcome
    (status("Ready", "Ready"), status()),  # work starts
    (status(), status("Processing", "Restarting")),  # another reason
    (status(), status("Error", "Timeout")),
    (status(), status(generation=2)),  # a new generation is observed
    (status("Ready", "Ready", "x"), status("Ready", "Ready", "y")),  # outside Processing: everything
    (status("Deleting", "DeletionProcessing", "x"), status("Deleting", "DeletionProcessing", "y")),
])
def test_everything_else_is_written_at_once(old: dict[str, Any], new: dict[str, Any]) -> None:
    assert not may_wait(old, new, 0.1)


def compact(names: tuple[str, ...], phase: str) -> dict[str, Any]:
    """A status as the operator persists it: the compact inventory encoding (issue 18)."""
    items = [InventoryItem.model_validate({"group": "", "version": "v1", "kind": "ConfigMap", "namespace": "ns",
                                           "name": name, "phase": phase, "digest": "d"}) for name in names]
    base = status(items=())
    del base["inventory"]
    return {**base, "compactInventory": encode(dump_inventory(items))}


def test_the_compact_inventory_is_compared_by_its_items() -> None:
    assert may_wait(compact(("a", "b"), "Creating"), compact(("a", "b"), "Ready"), 0.5)
    assert not may_wait(compact(("a",), "Ready"), compact(("a", "b"), "ScheduledForApplication"), 0.5)


def test_an_unreadable_inventory_is_written() -> None:
    broken = {**compact(("a",), "Ready"), "compactInventory": {"format": 99}}
    assert not may_wait(compact(("a",), "Ready"), broken, 0.5)
