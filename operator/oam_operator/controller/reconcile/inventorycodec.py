"""The inventory as the status persists it (docs/operator.md#status-fields).

The status keeps the reconciler's inventory in the compact encoding (``compactInventory``);
an inventory in component-operator-runtime's plain form (``inventory``: an upgrade, another
tool) is read too and replaced by the compact one at the next write.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oam_operator.api.application import ApplicationStatus, CompactInventory
from oam_operator.api.compact_inventory import decode as decode_inventory
from oam_operator.api.compact_inventory import encode as encode_inventory
from oam_operator.api.compact_inventory import read_status_inventory
from oam_operator.reconciler.inventory import InventoryItem, load_inventory

__all__ = ["inventory_of", "read_inventory", "write_inventory"]


def read_inventory(status: Mapping[str, Any]) -> list[InventoryItem]:
    """The persisted inventory of a status in its JSON form (``oam-operator diff`` reads a live one)."""
    return load_inventory(read_status_inventory(status))


def inventory_of(status: ApplicationStatus) -> list[InventoryItem]:
    """The persisted inventory of a typed status; raises ``CompactInventoryError``."""
    if status.compact_inventory is not None:
        return load_inventory(decode_inventory(status.compact_inventory.model_dump(mode="json", exclude_none=True)))
    return [item.detached() for item in status.inventory or []]


def write_inventory(status: ApplicationStatus, dumped: list[dict[str, Any]]) -> None:
    """Persist ``dumped`` (c-o-r JSON) in the compact encoding; a c-o-r ``inventory`` is dropped."""
    status.compact_inventory = CompactInventory.model_validate(encode_inventory(dumped))
    status.inventory = None
