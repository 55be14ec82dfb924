"""The inventory item, its JSON form and its phase state machine (docs/reconciler.md#the-inventory).

The JSON is interchangeable with component-operator-runtime's: same field names, same order,
same omission rules, same enum spellings. Reading is lenient (unknown fields ignored, missing
orders 0, missing strings empty, timestamps with fractions or offsets accepted).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .errors import InventoryCorruptError
from .identity import group_kind_string, object_key
from .policies import AdoptionPolicy, DeletePolicy, ReconcilePolicy, UpdatePolicy
from .priorities import delete_priority
from .typeinfo import TypeVersionInfo

__all__ = [
    "DELETION_PHASES",
    "InventoryItem",
    "Phase",
    "dump_inventory",
    "format_timestamp",
    "index_items",
    "load_inventory",
    "sort_for_deletion",
]


class Phase(StrEnum):
    """Lifecycle phase of an item (docs/reconciler.md#phases-and-statuses); ``NONE`` means "drop at the end of the
    call"."""

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


DELETION_PHASES = frozenset({Phase.SCHEDULED_FOR_DELETION, Phase.DELETING})

# kstatus strings written by the reconciler itself (docs/reconciler.md#phases-and-statuses).
IN_PROGRESS = "InProgress"
TERMINATING = "Terminating"
CURRENT = "Current"


def format_timestamp(value: datetime) -> str:
    """RFC 3339, UTC, second precision, ``Z`` (e.g. ``2026-03-01T10:04:05Z``)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_POLICY_DEFAULTS: dict[str, str] = {
    "adoption_policy": AdoptionPolicy.IF_UNOWNED.value,
    "reconcile_policy": ReconcilePolicy.ON_OBJECT_CHANGE.value,
    "update_policy": UpdatePolicy.REPLACE.value,
    "delete_policy": DeletePolicy.DELETE.value,
}


class InventoryItem(BaseModel):
    """One object the reconciler manages. Mutable: the reconciler moves it through phases."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    group: str = ""
    version: str = ""
    kind: str = ""
    namespace: str = ""
    name: str = ""
    adoption_policy: AdoptionPolicy = Field(AdoptionPolicy.IF_UNOWNED, alias="adoptionPolicy")
    reconcile_policy: ReconcilePolicy = Field(ReconcilePolicy.ON_OBJECT_CHANGE, alias="reconcilePolicy")
    update_policy: UpdatePolicy = Field(UpdatePolicy.REPLACE, alias="updatePolicy")
    delete_policy: DeletePolicy = Field(DeletePolicy.DELETE, alias="deletePolicy")
    apply_order: int = Field(0, alias="applyOrder")
    delete_order: int = Field(0, alias="deleteOrder")
    managed_types: list[TypeVersionInfo] = Field(default_factory=list, alias="managedTypes")
    digest: str = ""
    phase: Phase = Phase.NONE
    status: str = ""
    last_applied_at: datetime | None = Field(None, alias="lastAppliedAt")
    # Not in component-operator-runtime's JSON (written only when true, ignored by its readers):
    # the object existed without an owner and was adopted, so it is orphaned, never deleted,
    # when it goes. Set for Namespaces only (issue 18, docs/operator.md#identity-hostile-input-and-limits).
    adopted: bool = False

    @field_validator("adoption_policy", "reconcile_policy", "update_policy", "delete_policy", mode="before")
    @classmethod
    def _empty_policy_is_default(cls, value: Any, info: Any) -> Any:
        # An empty or null policy string (lenient reading) means the built-in default.
        return _POLICY_DEFAULTS[info.field_name] if value in ("", None) else value

    @field_validator("group", "version", "kind", "namespace", "name", "digest", "status", mode="before")
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

    # -- identity -------------------------------------------------------------------------

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_kind(self) -> str:
        return group_kind_string(self.group, self.kind)

    @property
    def key(self) -> str:
        """The object key with the recorded version (docs/reconciler.md#inventory-items)."""
        return object_key(self.group, self.version, self.kind, self.namespace, self.name)

    def identity(self) -> tuple[str, str, str, str]:
        """Group, kind, namespace, name: the version is not part of an item's identity."""
        return (self.group, self.kind, self.namespace, self.name)

    def __str__(self) -> str:
        return self.key

    def is_managed_by(self, types: Iterable[TypeVersionInfo]) -> bool:
        return any(t.matches(self.group, self.version, self.kind) for t in types)

    # -- the phase state machine (docs/reconciler.md#item-state-machine)
    # ---------------------------------------------------

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
        """The Go field order and omission rules (docs/reconciler.md#inventory-items)."""
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
            out["status"] = self.status
        if self.last_applied_at is not None:
            out["lastAppliedAt"] = format_timestamp(self.last_applied_at)
        if self.adopted:
            out["adopted"] = True
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> InventoryItem:
        return cls.model_validate(dict(data))


def load_inventory(data: str | Sequence[Mapping[str, Any]] | None) -> list[InventoryItem]:
    """Read a persisted inventory (a JSON string or a decoded list); ``None`` is empty."""
    if data is None:
        return []
    raw = json.loads(data) if isinstance(data, str) else data
    return [InventoryItem.from_json(entry) for entry in raw or []]


def dump_inventory(items: Iterable[InventoryItem]) -> list[dict[str, Any]]:
    """The JSON-ready list the caller persists (e.g. as ``status.inventory``)."""
    return [item.to_json() for item in items]


def index_items(items: Iterable[InventoryItem]) -> dict[tuple[str, str, str, str], InventoryItem]:
    """Items by identity (group, kind, namespace, name); two items with one identity mean a
    corrupt inventory (docs/reconciler.md#inventory-items)."""
    index: dict[tuple[str, str, str, str], InventoryItem] = {}
    for item in items:
        if item.identity() in index:
            raise InventoryCorruptError(f"duplicate inventory items for {item.key}", object_key=item.key)
        index[item.identity()] = item
    return index


def sort_for_deletion(items: Sequence[InventoryItem]) -> list[InventoryItem]:
    """Stable, ascending by ``(deleteOrder, delete priority)`` (docs/reconciler.md#inventory-order)."""
    return sorted(items, key=lambda i: (i.delete_order, delete_priority(i.group_kind)))
