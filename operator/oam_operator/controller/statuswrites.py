"""When a pass's new status must be written, and when it may wait (docs/operator.md#backoff-and-timeouts).

A status write is a request; at fleet scale most of them were progress: the same
``Processing`` state with a new message or new inventory phases, written after every pass.
The status is written when something a user or a restart depends on changed:

- the state or the Ready condition's reason (every outcome, every state change);
- the set of inventory items (a checkpoint: an object is recorded before it is created, and
  a pruned one is dropped, docs/architecture.md#key-decisions);
- anything at all, outside ``Processing``;
- progress within ``Processing``, at most every ``PROGRESS_WRITE_INTERVAL`` seconds, so a
  long rollout still shows where it is (2 s: a pass that only created objects right after its
  checkpoint is not written, the wait for their readiness is shown within seconds).

What may wait is progress only: the next pass works from the in-memory status (the cache),
and after a restart the persisted one is as good an input (its items are the same; their
phases are re-derived, a re-apply of an already applied object is a server-side no-op).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oam_operator.api.compact_inventory import CompactInventoryError, read_status_inventory

__all__ = ["PROGRESS_WRITE_INTERVAL", "may_wait"]

PROGRESS_WRITE_INTERVAL = 2.0
_PROCESSING = "Processing"


def _ready_reason(status: Mapping[str, Any]) -> str | None:
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Ready":
            return str(condition.get("reason"))
    return None


def _items(status: Mapping[str, Any]) -> set[tuple[Any, ...]] | None:
    """The identities of the inventory items (``compactInventory`` or a c-o-r ``inventory``);
    ``None`` when it cannot be read (then the status is written)."""
    try:
        items = read_status_inventory(status)
    except CompactInventoryError:
        return None
    return {(item.get("group"), item.get("kind"), item.get("namespace"), item.get("name")) for item in items}


def may_wait(persisted: Mapping[str, Any], new: Mapping[str, Any], seconds_since_write: float | None) -> bool:
    """Whether writing ``new`` over ``persisted`` may be left to a later pass.

    ``seconds_since_write`` is the time since this operator last wrote the status (``None``:
    never, e.g. after a restart).
    """
    if new.get("state") != _PROCESSING or persisted.get("state") != _PROCESSING:
        return False
    if _ready_reason(new) != _ready_reason(persisted):
        return False
    if new.get("observedGeneration") != persisted.get("observedGeneration"):
        return False
    items = _items(new)
    if items is None or items != _items(persisted):
        return False
    return seconds_since_write is not None and seconds_since_write < PROGRESS_WRITE_INTERVAL
