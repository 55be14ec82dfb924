"""States, reasons and kstatus-compatible conditions of an Application (docs/operator.md#conditions,
docs/operator.md#states-reasons-and-messages).

``conditions_for`` is the one place that turns a state into conditions, so the controller and
any reader agree on the table of docs/operator.md#conditions: ``Ready`` is always present; ``Reconciling`` and
``Stalled`` are present with status ``True`` when they apply and removed otherwise; all carry the
state's reason and message; ``lastTransitionTime`` changes only when a condition's status does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field, field_validator

from .meta import ApiModel, Timestamp

__all__ = [
    "CONDITION_TYPES",
    "Condition",
    "ConditionStatus",
    "ConditionType",
    "Reason",
    "State",
    "conditions_for",
    "find_condition",
    "ready_condition",
]


class State(StrEnum):
    """Coarse state of an Application."""

    READY = "Ready"
    PENDING = "Pending"
    PROCESSING = "Processing"
    DELETION_PENDING = "DeletionPending"
    DELETING = "Deleting"
    ERROR = "Error"
    #: held before applying a new revision: until the Applications it depends on are Ready, or a change window opens
    WAITING = "Waiting"


class Reason(StrEnum):
    """Reasons of the Ready condition (docs/operator.md#states-reasons-and-messages)."""

    FIRST_SEEN = "FirstSeen"
    SUSPENDED = "Suspended"
    RESTARTING = "Restarting"
    PROCESSING = "Processing"
    READY = "Ready"
    RETRYING = "Retrying"
    TIMEOUT = "Timeout"
    TRANSFORM_FAILED = "TransformFailed"
    PROFILE_NOT_FOUND = "ProfileNotFound"
    CLUSTER_UNUSABLE = "ClusterUnusable"  # the profile's kubeconfig Secret cannot be used (docs/multicluster.md)
    CLUSTER_SWITCHED = "ClusterSwitched"  # the profile delivers elsewhere than the objects are
    INVALID_OBJECTS = "InvalidObjects"
    OWNERSHIP_CONFLICT = "OwnershipConflict"
    NOT_PERMITTED = "NotPermitted"
    MISSING_API = "MissingAPI"
    API_ERROR = "ApiError"
    ERROR = "Error"
    DELETION_RETRYING = "DeletionRetrying"
    DELETION_PROCESSING = "DeletionProcessing"
    DELETION_BLOCKED = "DeletionBlocked"
    DEPENDENCIES_NOT_READY = "DependenciesNotReady"
    CHANGE_WINDOW_CLOSED = "ChangeWindowClosed"  # a new revision waits (docs/operator.md#change-windows)
    NO_CLUSTERS = "NoClusters"  # a topology policy selects no ClusterProfile (docs/multicluster.md#topology)
    ROLLOUT_HALTED = "RolloutHalted"  # a cluster failed a rollout policy's rollout (docs/multicluster.md#rollout)
    ROLLED_BACK = "RolledBack"  # a rollback policy returned a failed revision to the last Ready one
    HOOK_FAILED = "HookFailed"  # a lifecycle hook failed or ran out of time (docs/operator.md#lifecycle-hooks)
    HEALTH_CHECK_FAILED = "HealthCheckFailed"  # a health rule called an object Failed (docs/health.md)
    CLUSTER_FAILED = "ClusterFailed"  # a cluster of a topology without a rollout policy failed
    DEPENDENCY_CYCLE = "DependencyCycle"
    DRIFT_DETECTED = "DriftDetected"  # of the Drifted condition
    DRIFT_FLAPPING = "DriftFlapping"  # of the Drifted condition


class ConditionStatus(StrEnum):
    """Status of a condition."""

    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


class ConditionType(StrEnum):
    """The condition types the operator writes."""

    READY = "Ready"
    RECONCILING = "Reconciling"
    STALLED = "Stalled"
    DRIFTED = "Drifted"
    ROLLED_BACK = "RolledBack"


CONDITION_TYPES = tuple(ConditionType)

# Upstream (component-operator-runtime) once spelled this reason wrongly; old statuses may carry it.
_LEGACY_REASONS = {"Reytrying": Reason.RETRYING.value}


class Condition(ApiModel):
    """An observation of the Application's state, in the shape of metav1.Condition."""

    type: str = Field(
        min_length=1,
        max_length=316,
        description="Type of the condition: Ready (always present), Reconciling or Stalled (present only when True).",
    )
    status: ConditionStatus = Field(description="Status of the condition: True, False or Unknown.")
    observed_generation: int | None = Field(
        default=None,
        ge=0,
        description="metadata.generation of the Application when the condition was set.",
        json_schema_extra={"format": "int64"},
    )
    last_transition_time: Timestamp = Field(description="When the condition's status last changed.")
    reason: str = Field(
        min_length=1,
        max_length=1024,
        pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        description="CamelCase reason of the state, for example Ready, Processing or TransformFailed.",
    )
    message: str = Field(max_length=32768, description="Human-readable explanation of the state.")

    @field_validator("reason", mode="before")
    @classmethod
    def _legacy_reason(cls, value: Any) -> Any:
        """Read the upstream misspelling ``Reytrying`` as ``Retrying``
        (docs/operator.md#states-reasons-and-messages)."""
        return _LEGACY_REASONS.get(value, value) if isinstance(value, str) else value


# docs/operator.md#conditions: (Ready status, Reconciling present) per state; Stalled is present exactly in Error.
_READY_STATUS = {
    State.READY: ConditionStatus.TRUE,
    State.PENDING: ConditionStatus.UNKNOWN,
    State.PROCESSING: ConditionStatus.UNKNOWN,
    State.ERROR: ConditionStatus.FALSE,
    State.DELETION_PENDING: ConditionStatus.UNKNOWN,
    State.DELETING: ConditionStatus.UNKNOWN,
    State.WAITING: ConditionStatus.UNKNOWN,
}


def find_condition(conditions: Sequence[Condition] | None, type_: str) -> Condition | None:
    """The condition of ``type_``, or ``None``."""
    return next((c for c in conditions or () if c.type == type_), None)


def ready_condition(status: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The ``Ready`` condition of a status in its JSON form (as persisted, as read back), or ``None``;
    entries that are not objects are passed over (a status is read back from anyone's writes)."""
    conditions = (status or {}).get("conditions") or ()
    return next((c for c in conditions if isinstance(c, Mapping) and c.get("type") == ConditionType.READY.value),
                None)


def conditions_for(
    state: State,
    reason: str,
    message: str,
    generation: int,
    now: datetime,
    previous: Sequence[Condition] | None = None,
    drifted: tuple[str, str] | None = None,
    rolled_back: str | None = None,
) -> list[Condition]:
    """The conditions of docs/operator.md#conditions for ``state``, in the order Ready, Reconciling,
    Stalled, Drifted (``drifted``: its reason and message, while objects drifted).

    ``previous`` are the conditions last persisted: a condition whose status is unchanged keeps
    its ``lastTransitionTime``, so a pass that changes nothing writes nothing.
    """
    wanted: list[tuple[ConditionType, ConditionStatus, str, str]] = [
        (ConditionType.READY, _READY_STATUS[state], reason, message)]
    if state is not State.READY and state is not State.ERROR and reason != Reason.SUSPENDED:
        wanted.append((ConditionType.RECONCILING, ConditionStatus.TRUE, reason, message))
    if state is State.ERROR:
        wanted.append((ConditionType.STALLED, ConditionStatus.TRUE, reason, message))
    if drifted is not None:
        wanted.append((ConditionType.DRIFTED, ConditionStatus.TRUE, *drifted))
    if rolled_back is not None:  # docs/operator.md#automatic-rollback
        wanted.append((ConditionType.ROLLED_BACK, ConditionStatus.TRUE, Reason.ROLLED_BACK.value, rolled_back))
    result = []
    for type_, status, why, text in wanted:
        old = find_condition(previous, type_)
        since = old.last_transition_time if old is not None and old.status == status else now
        result.append(
            Condition(
                type=type_.value,
                status=status,
                observed_generation=generation,
                last_transition_time=since,
                reason=why,
                message=text,
            )
        )
    return result
