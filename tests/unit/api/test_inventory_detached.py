"""``InventoryItem.detached`` (persisted/inventory.py): the copy a pass works on shares nothing
it may change with the item it came from."""

from __future__ import annotations

from datetime import UTC, datetime

from oam_operator.persisted.inventory import InventoryItem, Phase, TypeVersionInfo


def test_a_detached_item_is_equal_and_changing_it_leaves_the_original() -> None:
    item = InventoryItem(group="apiextensions.k8s.io", version="v1", kind="CustomResourceDefinition",
                         name="widgets.example.com", digest="d", phase=Phase.READY,
                         last_applied_at=datetime(2026, 12, 2, tzinfo=UTC),
                         managed_types=[TypeVersionInfo(group="example.com", version="*", kind="Widget")])
    copy = item.detached()
    assert copy == item and copy is not item
    copy.phase = Phase.DELETING
    copy.digest = ""
    copy.managed_types.append(TypeVersionInfo(group="example.com", version="v1", kind="Gadget"))
    assert (item.phase, item.digest) == (Phase.READY, "d")
    assert item.managed_types == [TypeVersionInfo(group="example.com", version="*", kind="Widget")]
