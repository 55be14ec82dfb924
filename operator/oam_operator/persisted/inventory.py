"""The inventory item: its JSON form, its phases and its phase state machine.

One class serves the reconciler (which moves items through their phases), the operator (which
persists them) and the CRD schema (``api/`` generates ``status.inventory`` from it). The JSON is
component-operator-runtime's: same field names, same order, same omission rules, same enum
spellings, so the CRD declares every field (typed, enums included). Reading is lenient: unknown
fields are ignored, missing or null orders read as 0, strings as ``""``, policies as the
built-in defaults, and ``lastAppliedAt`` accepts fractions and offsets; writing is canonical.

Go's zero values are kept: an item without a phase has ``Phase.NONE`` (``""``, never written;
the reconciler uses it for "drop at the end of the call"), one without a status ``""``. The
status is a plain string: the kstatus set is what the CRD allows (``common.objectstatus.ObjectStatus``),
and an item read from elsewhere keeps whatever it holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import (
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from ..common.objectstatus import ObjectStatus
from .model import ApiModel, Timestamp, format_timestamp
from .objectpolicies import AdoptionPolicy, DeletePolicy, ReconcilePolicy, UpdatePolicy

__all__ = [
    "CURRENT",
    "INVENTORY_FIELDS",
    "IN_PROGRESS",
    "TERMINATING",
    "InventoryItem",
    "Phase",
    "TypeVersionInfo",
    "group_kind_string",
    "group_matches",
    "object_key",
]


class Phase(StrEnum):
    """Lifecycle phase of an inventory item; ``NONE`` is unset (never persisted)."""

    NONE = ""
    SCHEDULED_FOR_APPLICATION = "ScheduledForApplication"
    CREATING = "Creating"
    UPDATING = "Updating"
    READY = "Ready"
    SCHEDULED_FOR_COMPLETION = "ScheduledForCompletion"
    COMPLETING = "Completing"
    COMPLETED = "Completed"
    SCHEDULED_FOR_DELETION = "ScheduledForDeletion"
    DELETING = "Deleting"


# kstatus strings written by the state machine itself.
IN_PROGRESS = ObjectStatus.IN_PROGRESS.value
TERMINATING = ObjectStatus.TERMINATING.value
CURRENT = ObjectStatus.CURRENT.value


def object_key(group: str, version: str, kind: str, namespace: str, name: str) -> str:
    """The upstream key format used in every message, e.g. ``/v1, Kind=ConfigMap shop/web``."""
    gvk = f"{group}/{version}, Kind={kind}"
    return f"{gvk} {namespace}/{name}" if namespace else f"{gvk} {name}"


def group_kind_string(group: str, kind: str) -> str:
    """``Kind`` for the core group, else ``Kind.group`` (e.g. ``Deployment.apps``)."""
    return f"{kind}.{group}" if group else kind


def group_matches(pattern: str, group: str) -> bool:
    """``*`` matches any group (the core group too); ``*.<suffix>`` matches a suffix;
    any other pattern with ``*`` never matches; otherwise exact equality."""
    if pattern == "*":
        return True
    if pattern.startswith("*.") and "*" not in pattern[2:]:
        return group.endswith(pattern[1:])
    if "*" in pattern:
        return False
    return pattern == group


class TypeVersionInfo(ApiModel):
    """A type an inventory item brings into the cluster (a CRD or an APIService); "*" matches any."""

    model_config = ConfigDict(frozen=True)

    group: str = Field(default="", description="API group of the type.")
    version: str = Field(default="", description='API version of the type, "*" for every version.')
    kind: str = Field(default="", description='Kind of the type, "*" for every kind.')

    def matches(self, group: str, version: str, kind: str) -> bool:
        return (
            group_matches(self.group, group)
            and (self.version == "*" or self.version == version)
            and (self.kind == "*" or self.kind == kind)
        )

    def to_json(self) -> dict[str, str]:
        return {"group": self.group, "version": self.version, "kind": self.kind}


_POLICY_DEFAULTS: dict[str, str] = {
    "adoption_policy": AdoptionPolicy.IF_UNOWNED.value,
    "reconcile_policy": ReconcilePolicy.ON_OBJECT_CHANGE.value,
    "update_policy": UpdatePolicy.REPLACE.value,
    "delete_policy": DeletePolicy.DELETE.value,
}
# The schema's enums: what may be persisted (the unset values are omitted, never written).
_PHASE_ENUM: dict[str, Any] = {"enum": [phase.value for phase in Phase if phase is not Phase.NONE]}
_STATUS_ENUM: dict[str, Any] = {"enum": [status.value for status in ObjectStatus]}


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
    phase: Phase = Field(default=Phase.NONE, description="Lifecycle phase of the object.",
                         json_schema_extra=_PHASE_ENUM)
    status: str = Field(default="", description="kstatus status of the object.", json_schema_extra=_STATUS_ENUM)
    last_applied_at: Timestamp | None = Field(default=None, description="When the object was last written.")
    # Not in component-operator-runtime's JSON (written only when true, ignored by its readers):
    # the object existed without an owner and was adopted, so it is orphaned, never deleted,
    # when it goes. Set for Namespaces only.
    adopted: bool = Field(
        default=False, description="The Namespace existed without an owner and was adopted: it is never deleted."
    )

    def detached(self) -> InventoryItem:
        """A copy sharing nothing mutable: the fields are immutable values but ``managed_types``,
        a list of frozen types, so a new list is enough (``model_copy(deep=True)`` walks every
        field with ``copy.deepcopy``, fifteen times slower, and a pass copies each item a few times)."""
        return self.model_copy(update={"managed_types": list(self.managed_types)})

    @field_validator("adoption_policy", "reconcile_policy", "update_policy", "delete_policy", mode="before")
    @classmethod
    def _empty_policy_is_default(cls, value: Any, info: Any) -> Any:
        return _POLICY_DEFAULTS[info.field_name] if value in ("", None) else value

    @field_validator("group", "version", "kind", "namespace", "name", "digest", "status", "phase", mode="before")
    @classmethod
    def _null_string_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value

    @field_validator("apply_order", "delete_order", mode="before")
    @classmethod
    def _null_order_is_zero(cls, value: Any) -> Any:
        return 0 if value is None else value

    @field_validator("managed_types", mode="before")
    @classmethod
    def _null_list_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value

    @field_validator("last_applied_at", mode="before")
    @classmethod
    def _empty_time_is_unset(cls, value: Any) -> Any:
        return None if value in ("", None) else value

    @field_validator("adopted", mode="before")
    @classmethod
    def _null_is_false(cls, value: Any) -> Any:
        return False if value is None else value

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        """The omission rules: ``group`` is always written; namespace, managedTypes, phase, status,
        lastAppliedAt and adopted only when set."""
        data: dict[str, Any] = handler(self)
        keys = ("namespace", "managedTypes", "phase", "status", "lastAppliedAt", "adopted")
        if not info.by_alias:
            keys = ("namespace", "managed_types", "phase", "status", "last_applied_at", "adopted")
        for key in keys:
            if key in data and data[key] in ("", [], None, False):
                del data[key]
        return data

    # -- identity -------------------------------------------------------------------------

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_kind(self) -> str:
        return group_kind_string(self.group, self.kind)

    @property
    def key(self) -> str:
        """The object key with the recorded version."""
        return object_key(self.group, self.version, self.kind, self.namespace, self.name)

    def identity(self) -> tuple[str, str, str, str]:
        """Group, kind, namespace, name: the version is not part of an item's identity."""
        return (self.group, self.kind, self.namespace, self.name)

    def __str__(self) -> str:
        return self.key

    def is_managed_by(self, types: Iterable[TypeVersionInfo]) -> bool:
        return any(t.matches(self.group, self.version, self.kind) for t in types)

    # -- the phase state machine ----------------------------------------------------------

    def schedule_application(self, digest: str) -> None:
        """New item, or the desired manifest (digest) changed."""
        self.digest = digest
        self.phase = Phase.SCHEDULED_FOR_APPLICATION
        self.status = IN_PROGRESS

    def schedule_deletion(self) -> None:
        """The object left the desired set."""
        self.digest = ""
        self.phase = Phase.SCHEDULED_FOR_DELETION
        self.status = TERMINATING

    def mark_creating(self, now: datetime) -> None:
        self.phase = Phase.CREATING
        self.status = IN_PROGRESS
        self.last_applied_at = now

    def mark_updating(self, now: datetime) -> None:
        self.phase = Phase.UPDATING
        self.status = IN_PROGRESS
        self.last_applied_at = now

    def observe(self, status: str, terminating: bool) -> bool:
        """Record the analyzer's status of an in-sync object; True when it is ready."""
        self.status = status
        if not terminating and status == CURRENT:
            self.phase = Phase.READY
            return True
        return False

    def schedule_completion(self) -> None:
        """Its purge order is due at the end of a ready wave (status kept)."""
        self.phase = Phase.SCHEDULED_FOR_COMPLETION

    def mark_completing(self) -> None:
        self.phase = Phase.COMPLETING
        self.status = TERMINATING

    def mark_completed(self) -> None:
        self.phase = Phase.COMPLETED
        self.status = ""

    def mark_deleting(self) -> None:
        self.phase = Phase.DELETING
        self.status = TERMINATING

    def mark_removed(self) -> None:
        """Drop from the inventory at the end of the call."""
        self.phase = Phase.NONE

    # -- JSON -----------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The Go field order and omission rules (written by hand: the reconciler dumps often)."""
        out: dict[str, Any] = {"group": self.group, "version": self.version, "kind": self.kind}
        if self.namespace:
            out["namespace"] = self.namespace
        out["name"] = self.name
        out["adoptionPolicy"] = self.adoption_policy.value
        out["reconcilePolicy"] = self.reconcile_policy.value
        out["updatePolicy"] = self.update_policy.value
        out["deletePolicy"] = self.delete_policy.value
        out["applyOrder"] = self.apply_order
        out["deleteOrder"] = self.delete_order
        if self.managed_types:
            out["managedTypes"] = [t.to_json() for t in self.managed_types]
        out["digest"] = self.digest
        if self.phase:
            out["phase"] = self.phase.value
        if self.status:
            out["status"] = str(self.status)
        if self.last_applied_at is not None:
            out["lastAppliedAt"] = format_timestamp(self.last_applied_at)
        if self.adopted:
            out["adopted"] = True
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> InventoryItem:
        return cls.model_validate(dict(data))


# The JSON names in their serialisation order.
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
