"""Policy enums shared by the Application spec and the inventory (docs/reconciler.md#policies).

The values are persisted (spec, inventory) and interchangeable with component-operator-runtime,
so they are spelled exactly as the Go implementation spells them. Kept here rather than imported
from the reconciler so the CRD models stay importable without cluster code.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["AdoptionPolicy", "ApplicationDeletePolicy", "DeletePolicy", "ReconcilePolicy", "UpdatePolicy"]


class AdoptionPolicy(StrEnum):
    """Whether an existing object may be taken over."""

    NEVER = "Never"
    IF_UNOWNED = "IfUnowned"
    ALWAYS = "Always"


class ReconcilePolicy(StrEnum):
    """When an object is re-applied."""

    ON_OBJECT_CHANGE = "OnObjectChange"
    ON_OBJECT_OR_COMPONENT_CHANGE = "OnObjectOrComponentChange"
    ONCE = "Once"


class UpdatePolicy(StrEnum):
    """How an out-of-sync object is written."""

    RECREATE = "Recreate"
    REPLACE = "Replace"
    SSA_MERGE = "SsaMerge"
    SSA_OVERRIDE = "SsaOverride"


class DeletePolicy(StrEnum):
    """What happens to an object that leaves the desired set or its owner."""

    DELETE = "Delete"
    ORPHAN = "Orphan"
    ORPHAN_ON_APPLY = "OrphanOnApply"
    ORPHAN_ON_DELETE = "OrphanOnDelete"


class ApplicationDeletePolicy(StrEnum):
    """The delete policies an Application may choose as its default (docs/operator.md#spec-fields)."""

    DELETE = "Delete"
    ORPHAN = "Orphan"
