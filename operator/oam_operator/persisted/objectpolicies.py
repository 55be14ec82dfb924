"""Policy enums of the Application spec, the inventory and the reconciler's options.

The values are persisted (spec, inventory) and interchangeable with component-operator-runtime,
so they are spelled exactly as the Go implementation spells them.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "AdoptionPolicy",
    "ApplicationDeletePolicy",
    "DeletePolicy",
    "MissingNamespacesPolicy",
    "ReconcilePolicy",
    "UpdatePolicy",
]


class AdoptionPolicy(StrEnum):
    """Whether an existing object not yet in the inventory may be taken over."""

    NEVER = "Never"
    IF_UNOWNED = "IfUnowned"
    ALWAYS = "Always"


class ReconcilePolicy(StrEnum):
    """When an in-inventory object is re-applied."""

    ON_OBJECT_CHANGE = "OnObjectChange"
    ON_OBJECT_OR_COMPONENT_CHANGE = "OnObjectOrComponentChange"
    ONCE = "Once"


class UpdatePolicy(StrEnum):
    """How an out-of-sync object is written."""

    RECREATE = "Recreate"
    REPLACE = "Replace"
    SSA_MERGE = "SsaMerge"
    SSA_OVERRIDE = "SsaOverride"

    @property
    def is_ssa(self) -> bool:
        return self in (UpdatePolicy.SSA_MERGE, UpdatePolicy.SSA_OVERRIDE)


class DeletePolicy(StrEnum):
    """What happens to an object that leaves the desired set or its owner."""

    DELETE = "Delete"
    ORPHAN = "Orphan"
    ORPHAN_ON_APPLY = "OrphanOnApply"
    ORPHAN_ON_DELETE = "OrphanOnDelete"

    @property
    def orphans_on_apply(self) -> bool:
        return self in (DeletePolicy.ORPHAN, DeletePolicy.ORPHAN_ON_APPLY)

    @property
    def orphans_on_delete(self) -> bool:
        return self in (DeletePolicy.ORPHAN, DeletePolicy.ORPHAN_ON_DELETE)


class ApplicationDeletePolicy(StrEnum):
    """The delete policies an Application may choose as its default."""

    DELETE = "Delete"
    ORPHAN = "Orphan"


class MissingNamespacesPolicy(StrEnum):
    """Whether namespaces the desired objects live in are created when missing (a reconciler option)."""

    DO_NOT_CREATE = "DoNotCreate"
    CREATE = "Create"
