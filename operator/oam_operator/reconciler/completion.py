"""Objects that run to completion: a finished Job is finished (docs/reconciler.md#finished-jobs).

A Job's work is done once it is complete, and whoever deletes it then — its own
``ttlSecondsAfterFinished``, a cleanup tool, a user — deletes a record, not a workload. Creating
it again would run the work again and, with a TTL of 0, loop for ever. So an item whose Job
was seen complete and is now gone is ``Completed``, as a purged one is, and stays so until its
desired manifest (its digest) changes. A Job deleted before it completed, or after it failed,
is created again, as any deleted object is.

Two sightings count as "seen complete": the item itself (``Ready`` with status ``Current``: the
status analyzer calls a Job Current only once it finished, docs/reconciler.md#kstatus-rules),
which the inventory persists, so the rule holds across restarts; and the last state of the
deleted object, which a caller's watch sees in the deletion event (``ran_to_completion``) even
when the object is gone before any call read it complete.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..persisted.inventory import CURRENT
from .inventory import InventoryItem, Phase

__all__ = ["RUNS_TO_COMPLETION", "finished", "ran_to_completion"]

#: (group, kind) of the objects that run to completion.
RUNS_TO_COMPLETION = frozenset({("batch", "Job")})


def ran_to_completion(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` is a Job whose ``Complete`` condition is True (a failed one is not)."""
    api_version = str(obj.get("apiVersion") or "")
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    if (group, str(obj.get("kind") or "")) not in RUNS_TO_COMPLETION:
        return False
    status = obj.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    return any(isinstance(c, Mapping) and c.get("type") == "Complete" and c.get("status") == "True"
               for c in conditions or [])


def finished(item: InventoryItem) -> bool:
    """Whether the item's object was last seen complete: a Job item ``Ready`` and ``Current``."""
    return (item.group, item.kind) in RUNS_TO_COMPLETION and item.phase is Phase.READY and item.status == CURRENT
