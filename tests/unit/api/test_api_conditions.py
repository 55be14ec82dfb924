"""Conditions per state (docs/operator.md#conditions) and the legacy reason spelling
(docs/operator.md#states-reasons-and-messages)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from oam_operator.api import Condition, ConditionStatus, Reason, State, conditions_for, find_condition
from oam_operator.api.conditions import ready_condition

NOW = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)

# state, reason → (Ready status, Reconciling present, Stalled present)
TABLE = [
    (State.READY, Reason.READY, "True", False, False),
    (State.PENDING, Reason.FIRST_SEEN, "Unknown", True, False),
    (State.PENDING, Reason.RETRYING, "Unknown", True, False),
    (State.PENDING, Reason.TIMEOUT, "Unknown", True, False),
    (State.PENDING, Reason.SUSPENDED, "Unknown", False, False),
    (State.PROCESSING, Reason.PROCESSING, "Unknown", True, False),
    (State.PROCESSING, Reason.RESTARTING, "Unknown", True, False),
    (State.ERROR, Reason.TRANSFORM_FAILED, "False", False, True),
    (State.ERROR, Reason.TIMEOUT, "False", False, True),
    (State.DELETION_PENDING, Reason.DELETION_RETRYING, "Unknown", True, False),
    (State.DELETING, Reason.DELETION_BLOCKED, "Unknown", True, False),
    (State.WAITING, Reason.DEPENDENCIES_NOT_READY, "Unknown", True, False),
    (State.ERROR, Reason.DEPENDENCY_CYCLE, "False", False, True),
]


@pytest.mark.parametrize(("state", "reason", "ready", "reconciling", "stalled"), TABLE)
def test_conditions_follow_the_state_table(
    state: State, reason: Reason, ready: str, reconciling: bool, stalled: bool
) -> None:
    conditions = conditions_for(state, reason, "some message", 7, NOW)
    expected = [("Ready", ready)] + [("Reconciling", "True")] * reconciling + [("Stalled", "True")] * stalled
    assert [(c.type, c.status.value) for c in conditions] == expected
    for condition in conditions:
        assert (condition.reason, condition.message) == (reason.value, "some message")
        assert condition.observed_generation == 7
        assert condition.last_transition_time == NOW


def test_last_transition_time_changes_only_with_the_status() -> None:
    first = conditions_for(State.PROCESSING, Reason.PROCESSING, "a", 1, NOW)
    later = NOW + timedelta(minutes=5)
    second = conditions_for(State.PROCESSING, Reason.PROCESSING, "b", 2, later, previous=first)
    assert [c.last_transition_time for c in second] == [NOW, NOW]
    assert [c.message for c in second] == ["b", "b"]
    ready = conditions_for(State.READY, Reason.READY, "done", 2, later, previous=second)
    assert [(c.type, c.last_transition_time) for c in ready] == [("Ready", later)]
    error = conditions_for(State.ERROR, Reason.API_ERROR, "x", 2, later + timedelta(seconds=1), previous=ready)
    assert [(c.type, c.last_transition_time) for c in error] == [
        ("Ready", later + timedelta(seconds=1)),
        ("Stalled", later + timedelta(seconds=1)),
    ]


def test_conditions_serialise_like_metav1_condition() -> None:
    (ready,) = conditions_for(State.READY, Reason.READY, "Applied revision 1: 2 objects ready", 3, NOW)
    assert ready.to_json() == {
        "type": "Ready",
        "status": "True",
        "observedGeneration": 3,
        "lastTransitionTime": "2026-03-01T10:00:00Z",
        "reason": "Ready",
        "message": "Applied revision 1: 2 objects ready",
    }


def test_legacy_reason_is_read_as_retrying() -> None:
    condition = Condition.model_validate(
        {
            "type": "Ready",
            "status": "Unknown",
            "lastTransitionTime": "2026-03-01T10:00:00Z",
            "reason": "Reytrying",
            "message": "x",
        }
    )
    assert condition.reason == "Retrying"
    assert condition.status is ConditionStatus.UNKNOWN


def test_find_condition() -> None:
    conditions = conditions_for(State.ERROR, Reason.ERROR, "x", 1, NOW)
    stalled = find_condition(conditions, "Stalled")
    assert stalled is not None and stalled.status is ConditionStatus.TRUE
    assert find_condition(conditions, "Reconciling") is None
    assert find_condition(None, "Ready") is None


def test_ready_condition_of_a_status_as_persisted() -> None:
    ready = {"type": "Ready", "status": "True", "reason": "Ready", "message": "m"}
    assert ready_condition({"conditions": [{"type": "Reconciling"}, ready]}) is ready
    assert ready_condition({"conditions": ["not an object", None, ready]}) is ready  # read back from anyone's writes
    assert ready_condition({"conditions": [{"type": "Stalled"}]}) is None
    assert ready_condition({}) is None and ready_condition(None) is None
