"""The hard limit on an Application's size (issue 18, docs/operator.md#identity-hostile-input-and-limits): refused
before anything is created.

The inventory lives in the Application's status, and the whole Application (spec, status,
metadata) must fit into one etcd request (1.5 MiB by default). With the compact encoding
(``api/compact_inventory.py``) an object takes about 75 bytes, so 10,000 objects take about
750 KB and leave room for the spec and the rest of the status. Past ``MAX_OBJECTS``, or when
long names would make the inventory larger than ``MAX_INVENTORY_BYTES``, the pass ends in
``Error``/``InvalidObjects`` (``Stalled``) with one exact message and ``apply()`` is not
called: the status write would fail after objects were created, leaving them untracked.

Objects counted are the union of the desired objects and the inventory's (pruned objects
still take room until they are gone).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from oam_operator.reconciler.inventory import InventoryItem

MAX_OBJECTS = 10_000
MAX_INVENTORY_BYTES = 1_000_000
ENTRY_OVERHEAD = 62  # a compact entry without namespace and name: indices, orders, digest, codes, offset, quotes


def _identity(group: str, kind: str, namespace: str, name: str) -> tuple[str, str, str, str]:
    return group, kind, namespace, name


def size_refusal(
    objects: Iterable[Mapping[str, Any]], inventory: Iterable[InventoryItem], namespace: str
) -> str | None:
    """The refusal of an Application too large for its status, else ``None``."""
    entries: dict[tuple[str, str, str, str], int] = {}
    for obj in objects:
        api_version = str(obj.get("apiVersion") or "")
        group = api_version.split("/", 1)[0] if "/" in api_version else ""
        meta = obj.get("metadata") or {}
        name, ns = str(meta.get("name") or ""), str(meta.get("namespace") or "")
        entries[_identity(group, str(obj.get("kind") or ""), ns or namespace, name)] = len(ns or namespace) + len(name)
    for item in inventory:
        key = _identity(item.group, item.kind, item.namespace or namespace, item.name)
        entries.setdefault(key, len(item.namespace) + len(item.name))
    count = len(entries)
    if count > MAX_OBJECTS:
        return (f"The Application has {count} objects; at most {MAX_OBJECTS} fit into one Application's status "
                f"(split it into several Applications)")
    size = sum(ENTRY_OVERHEAD + length for length in entries.values())
    if size > MAX_INVENTORY_BYTES:
        return (f"The inventory of the Application's {count} objects would take about {size} bytes of status; "
                f"at most {MAX_INVENTORY_BYTES} fit (use shorter names or split the Application)")
    return None
