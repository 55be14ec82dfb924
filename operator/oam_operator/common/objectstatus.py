"""The kstatus status of an object (docs/reconciler.md#phases-and-statuses), defined once.

The reconciler's analyzer computes it, the inventory persists it and the CRD allows exactly these
values, so all three use this one enum; its values are spelled as kstatus spells them.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ObjectStatus"]


class ObjectStatus(StrEnum):
    """The kstatus status strings, persisted in the inventory exactly so."""

    IN_PROGRESS = "InProgress"
    FAILED = "Failed"
    CURRENT = "Current"
    TERMINATING = "Terminating"
    NOT_FOUND = "NotFound"
    UNKNOWN = "Unknown"
