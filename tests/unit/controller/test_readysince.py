"""Since when an Application is not Ready (controller/service/readysince.py, docs/operator.md#metrics)."""

from __future__ import annotations

from datetime import UTC, datetime

from oam_operator.controller.service.readysince import not_ready_since

AT = "2026-12-02T18:00:00Z"


def _status(status: str, reason: str, at: str = AT) -> dict[str, object]:
    return {"conditions": [{"type": "Drifted", "status": "False", "lastTransitionTime": "2020-01-01T00:00:00Z"},
                           {"type": "Ready", "status": status, "reason": reason, "lastTransitionTime": at}]}


def test_the_ready_conditions_transition_is_the_start() -> None:
    assert not_ready_since(_status("False", "Timeout")) == datetime(2026, 12, 2, 18, tzinfo=UTC).timestamp()
    assert not_ready_since(_status("Unknown", "Processing")) == datetime(2026, 12, 2, 18, tzinfo=UTC).timestamp()


def test_ready_suspended_and_unknown_starts_are_none() -> None:
    assert not_ready_since(_status("True", "Ready")) is None
    assert not_ready_since(_status("False", "Suspended")) is None
    assert not_ready_since(_status("False", "Timeout", at="")) is None
    assert not_ready_since({}) is None
