"""Batched reads (spec §14 a): one LIST per (type, namespace) instead of one GET per object.

A group of reads is served by a LIST with our owner-id selector when enough of its members
are objects we wrote before (they carry our label). A member missing from the LIST may
exist without our label, so it is read by GET: the outcome always equals a GET per object.
Each listed copy serves one read at most, in the wave it was made for; nothing is cached
across calls.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from .errors import ApiError
from .inventory import InventoryItem, Phase
from .objects import ObjectRef
from .operations import Operations

__all__ = ["BATCHABLE_PHASES", "ReadCache", "ReadTarget"]

BATCHABLE_PHASES = frozenset(
    {Phase.CREATING, Phase.UPDATING, Phase.READY, Phase.SCHEDULED_FOR_DELETION, Phase.DELETING}
)


@dataclass(frozen=True)
class ReadTarget:
    """An object a wave will read, and its item (which says whether it carries our label)."""

    ref: ObjectRef
    item: InventoryItem | None


class ReadCache:
    """Per call: which groups may be listed, and the LIST results of the current wave."""

    def __init__(self, ops: Operations, *, enabled: bool, threshold: int, concurrency: int) -> None:
        self._ops = ops
        self._enabled = enabled
        self._threshold = threshold
        self._concurrency = concurrency
        self._lock = threading.Lock()
        self._listed: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {}
        self._forbidden: set[tuple[str, str, str]] = set()

    def prefetch(self, targets: Sequence[ReadTarget]) -> None:
        """Start a wave: drop the previous wave's results, LIST every qualifying group."""
        self._listed = {}
        if not self._enabled:
            return
        members: dict[tuple[str, str, str], int] = {}
        for t in targets:
            item = t.item
            if item is not None and item.phase in BATCHABLE_PHASES and item.last_applied_at is not None:
                group = (t.ref.api_version, t.ref.kind, t.ref.namespace)
                members[group] = members.get(group, 0) + 1
        groups = [g for g, n in members.items() if n >= self._threshold and g not in self._forbidden]
        selector = f"{self._ops.owner_key}={self._ops.hashed_owner_id}"

        def list_group(group: tuple[str, str, str]) -> dict[str, dict[str, Any]] | None:
            api_version, kind, namespace = group
            resource = self._ops.client.resource_for(api_version, kind)
            if resource is None:
                return None
            try:
                items = self._ops.list(resource, namespace if resource.namespaced else "", selector)
            except ApiError as exc:
                if exc.status == 403:
                    with self._lock:
                        self._forbidden.add(group)
                    return None
                raise
            return {str((o.get("metadata") or {}).get("name")): o for o in items}

        outcomes = self._ops.client.run_bounded([partial(list_group, g) for g in groups], self._concurrency)
        for group, outcome in zip(groups, outcomes, strict=True):
            if outcome.error is not None:
                raise outcome.error
            if outcome.value is not None:
                self._listed[group] = outcome.value

    def read(self, ref: ObjectRef) -> dict[str, Any] | None:
        """The live object: from this wave's LIST when it is there, else by GET."""
        with self._lock:
            listed = self._listed.get((ref.api_version, ref.kind, ref.namespace))
            hit = listed.pop(ref.name, None) if listed is not None else None
        return hit if hit is not None else self._ops.read(ref)
