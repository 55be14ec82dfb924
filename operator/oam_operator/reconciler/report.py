"""The report of the last call (docs/reconciler.md#the-report-of-the-last-call): why a call did not finish, and what it
did.

Not persisted; the driver turns it into "why not ready" messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .inventory import InventoryItem

__all__ = ["CallReport", "Outcome"]

Outcome = Literal["done", "checkpoint", "purging", "waiting", "pruning", "deleting", "error"]


@dataclass(frozen=True)
class CallReport:
    """Read-only summary of one ``apply()``, ``delete()`` or ``is_deletion_allowed()``."""

    outcome: Outcome
    wave: int | None = None
    pending: tuple[tuple[InventoryItem, str], ...] = ()
    operations: dict[str, int] = field(default_factory=dict)
    conflicts: tuple[str, ...] = ()
    checkpointed: bool = False  # new items were persisted through apply()'s checkpoint in this call
