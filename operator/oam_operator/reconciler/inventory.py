"""The inventory item, its JSON form and its phase state machine (docs/reconciler.md#the-inventory).

The item, its phases and its JSON form are defined once, in ``oam_operator.persisted.inventory``
(importable without the kubernetes client, and the source of the CRD's inventory schema); they
are re-exported here with the reconciler's operations on lists of items: reading, dumping,
indexing by identity and the deletion order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from oam_operator.persisted.inventory import InventoryItem, Phase
from oam_operator.persisted.model import format_timestamp

from .errors import InventoryCorruptError
from .priorities import delete_priority

__all__ = [
    "DELETION_PHASES",
    "InventoryItem",
    "Phase",
    "dump_inventory",
    "format_timestamp",
    "index_items",
    "load_inventory",
    "sort_for_deletion",
]

DELETION_PHASES = frozenset({Phase.SCHEDULED_FOR_DELETION, Phase.DELETING})


def load_inventory(data: str | Sequence[Mapping[str, Any]] | None) -> list[InventoryItem]:
    """Read a persisted inventory (a JSON string or a decoded list); ``None`` is empty."""
    if data is None:
        return []
    raw = json.loads(data) if isinstance(data, str) else data
    return [InventoryItem.from_json(entry) for entry in raw or []]


def dump_inventory(items: Iterable[InventoryItem]) -> list[dict[str, Any]]:
    """The JSON-ready list the caller persists (e.g. as ``status.inventory``)."""
    return [item.to_json() for item in items]


def index_items(items: Iterable[InventoryItem]) -> dict[tuple[str, str, str, str], InventoryItem]:
    """Items by identity (group, kind, namespace, name); two items with one identity mean a
    corrupt inventory (docs/reconciler.md#inventory-items)."""
    index: dict[tuple[str, str, str, str], InventoryItem] = {}
    for item in items:
        if item.identity() in index:
            raise InventoryCorruptError(f"duplicate inventory items for {item.key}", object_key=item.key)
        index[item.identity()] = item
    return index


def sort_for_deletion(items: Sequence[InventoryItem]) -> list[InventoryItem]:
    """Stable, ascending by ``(deleteOrder, delete priority)`` (docs/reconciler.md#inventory-order)."""
    return sorted(items, key=lambda i: (i.delete_order, delete_priority(i.group_kind)))
