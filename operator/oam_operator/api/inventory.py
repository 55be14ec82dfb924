"""The inventory item as persisted in ``status.inventory`` (docs/reconciler.md#inventory-items).

The JSON is the Go implementation's: same names, same order, same omission rules, so the CRD
declares every field (typed, enums included) instead of preserving unknown fields. Reading is
lenient as docs/reconciler.md#inventory-items requires: unknown fields are ignored, missing orders read as 0, missing
strings
as ``""``, missing policies as the reconciler's built-in defaults, and ``lastAppliedAt`` accepts
fractions and offsets; writing is canonical.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field, SerializationInfo, SerializerFunctionWrapHandler, field_validator, model_serializer

from .meta import ApiModel, Timestamp
from .policies import AdoptionPolicy, DeletePolicy, ReconcilePolicy, UpdatePolicy

__all__ = ["INVENTORY_FIELDS", "InventoryItem", "ObjectStatus", "Phase", "TypeVersionInfo"]


class Phase(StrEnum):
    """Lifecycle phase of an inventory item (docs/reconciler.md#phases-and-statuses)."""

    SCHEDULED_FOR_APPLICATION = "ScheduledForApplication"
    CREATING = "Creating"
    UPDATING = "Updating"
    READY = "Ready"
    SCHEDULED_FOR_COMPLETION = "ScheduledForCompletion"
    COMPLETING = "Completing"
    COMPLETED = "Completed"
    SCHEDULED_FOR_DELETION = "ScheduledForDeletion"
    DELETING = "Deleting"


class ObjectStatus(StrEnum):
    """kstatus status of an inventory item's object."""

    IN_PROGRESS = "InProgress"
    FAILED = "Failed"
    CURRENT = "Current"
    TERMINATING = "Terminating"
    NOT_FOUND = "NotFound"
    UNKNOWN = "Unknown"


class TypeVersionInfo(ApiModel):
    """A type an inventory item brings into the cluster (a CRD or an APIService); "*" matches any."""

    group: str = Field(default="", description="API group of the type.")
    version: str = Field(default="", description='API version of the type, "*" for every version.')
    kind: str = Field(default="", description='Kind of the type, "*" for every kind.')


class InventoryItem(ApiModel):
    """One object the operator manages for the Application, with its policies and progress."""

    group: str = Field(default="", description='API group of the object ("" for the core group).')
    version: str = Field(default="", description="API version the object was last applied with.")
    kind: str = Field(default="", description="Kind of the object.")
    namespace: str = Field(default="", description="Namespace of the object; absent for cluster-scoped objects.")
    name: str = Field(default="", description="Name of the object.")
    adoption_policy: AdoptionPolicy = Field(
        default=AdoptionPolicy.IF_UNOWNED, description="Whether an existing object may be taken over."
    )
    reconcile_policy: ReconcilePolicy = Field(
        default=ReconcilePolicy.ON_OBJECT_CHANGE, description="When the object is re-applied."
    )
    update_policy: UpdatePolicy = Field(
        default=UpdatePolicy.REPLACE, description="How the object is written when it is out of sync."
    )
    delete_policy: DeletePolicy = Field(
        default=DeletePolicy.DELETE, description="Whether the object is deleted or orphaned when it goes."
    )
    apply_order: int = Field(default=0, description="Apply wave of the object.")
    delete_order: int = Field(default=0, description="Delete wave of the object.")
    managed_types: list[TypeVersionInfo] = Field(
        default_factory=list, description="Types the object brings (CRDs and APIServices only)."
    )
    digest: str = Field(default="", description='Digest of the desired object; "" once it is no longer desired.')
    phase: Phase | None = Field(default=None, description="Lifecycle phase of the object.")
    status: ObjectStatus | None = Field(default=None, description="kstatus status of the object.")
    last_applied_at: Timestamp | None = Field(default=None, description="When the object was last written.")
    adopted: bool | None = Field(
        default=None, description="The Namespace existed without an owner and was adopted: it is never deleted."
    )

    @field_validator("phase", "status", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_validator("group", "version", "kind", "namespace", "name", "digest", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value

    @field_validator("apply_order", "delete_order", mode="before")
    @classmethod
    def _null_is_zero(cls, value: Any) -> Any:
        return 0 if value is None else value

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        """docs/reconciler.md#inventory-items omission rules: ``group`` is always written; namespace, managedTypes,
        phase, status and
        lastAppliedAt only when set."""
        data: dict[str, Any] = handler(self)
        keys = ("namespace", "managedTypes", "phase", "status", "lastAppliedAt", "adopted")
        if not info.by_alias:
            keys = ("namespace", "managed_types", "phase", "status", "last_applied_at", "adopted")
        for key in keys:
            if key in data and data[key] in ("", [], None, False):
                del data[key]
        return data


# The JSON names in their serialisation order (docs/reconciler.md#inventory-items).
INVENTORY_FIELDS = (
    "group",
    "version",
    "kind",
    "namespace",
    "name",
    "adoptionPolicy",
    "reconcilePolicy",
    "updatePolicy",
    "deletePolicy",
    "applyOrder",
    "deleteOrder",
    "managedTypes",
    "digest",
    "phase",
    "status",
    "lastAppliedAt",
    "adopted",
)
