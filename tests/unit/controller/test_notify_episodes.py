"""Episodes from an Application's status (controller/service/notifyepisodes.py)."""

from __future__ import annotations

from typing import Any

from oam_operator.controller.service.notifyepisodes import selects, step

ALL = ("failed", "recovered", "rolledBack", "drifted", "deleted")


def app(state: str, reason: str, message: str, *, uid: str = "u1", drift: str | None = None,
        rolled_back: int | None = None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    conditions = [{"type": "Ready", "status": "True" if state == "Ready" else "False", "reason": reason,
                   "message": message}]
    if drift is not None:
        conditions.append({"type": "Drifted", "status": "True", "reason": "DriftDetected", "message": drift})
    status: dict[str, Any] = {"state": state, "conditions": conditions}
    if rolled_back is not None:
        status["rolledBack"] = {"revision": rolled_back, "message": f"Revision {rolled_back} failed"}
    return {"metadata": {"name": "web", "uid": uid, "labels": labels or {}}, "status": status}


def run(entry: dict[str, Any] | None, body: dict[str, Any] | None, events: tuple[str, ...] = ALL,
        now: str = "T1") -> dict[str, Any] | None:
    return step(entry, body, namespace="team", name="web", events=events, now=now)


def told(entry: dict[str, Any] | None) -> list[str]:
    return [message["event"] for message in (entry or {}).get("pending") or []]


def test_a_failure_retried_many_times_owes_one_failed_and_its_end_one_recovered() -> None:
    entry = run(None, app("Ready", "Ready", "Applied revision 1: 1 objects ready"))
    assert entry == {"name": "web", "uid": "u1"}
    for attempt in range(25):  # every retry reads the same status, or a new message of the same failure
        entry = run(entry, app("Pending", "Retrying", f"Internal error {attempt}"))
    assert entry is not None
    assert told(entry) == ["failed"]
    assert entry["pending"][0] == {"id": "u1.failed.1", "event": "failed", "at": "T1",
                                   "message": "Application team/web failed: Internal error 0"}
    entry = run({**entry, "pending": None}, app("Processing", "Processing", "Applying wave 1"))
    assert entry is not None and told(entry) == [] and entry["failing"] is True  # under way is not recovered
    entry = run(entry, app("Ready", "Ready", "Applied revision 2: 1 objects ready"))
    assert entry is not None and told(entry) == ["recovered"]
    assert entry["pending"][0]["id"] == "u1.recovered.1"
    assert entry["pending"][0]["message"] == "Application team/web recovered: Applied revision 2: 1 objects ready"
    assert run(entry, app("Ready", "Ready", "Applied revision 2: 1 objects ready")) == entry


def test_the_second_episode_has_its_own_ids() -> None:
    entry: dict[str, Any] | None = {"name": "web", "uid": "u1", "failing": False, "episodes": 1}
    entry = run(entry, app("Error", "TransformFailed", "bad"))
    assert entry is not None and entry["pending"][0]["id"] == "u1.failed.2" and entry["episodes"] == 2


def test_processing_and_waiting_are_no_failure() -> None:
    for state, reason in (("Processing", "Processing"), ("Waiting", "DependenciesNotReady"), ("Pending", "FirstSeen")):
        assert told(run(None, app(state, reason, "…"))) == []


def test_kinds_not_asked_for_move_the_episode_without_a_message() -> None:
    entry = run(None, app("Error", "TransformFailed", "bad"), events=("recovered",))
    assert entry is not None and told(entry) == [] and entry["failing"] is True
    entry = run(entry, app("Ready", "Ready", "ok"), events=("recovered",))
    assert told(entry) == ["recovered"]


def test_a_rollback_is_told_once_per_rolled_back_revision() -> None:
    entry = run(None, app("Error", "RolledBack", "Revision 3 failed", rolled_back=3), events=("rolledBack",))
    assert told(entry) == ["rolledBack"]
    assert entry is not None and entry["pending"][0]["message"] == "Application team/web rolled back: Revision 3 failed"
    assert told(run({**entry, "pending": None}, app("Error", "RolledBack", "Revision 3 failed", rolled_back=3),
                    events=("rolledBack",))) == []


def test_drift_is_told_when_it_starts_and_again_only_after_it_ended() -> None:
    entry = run(None, app("Ready", "Ready", "ok", drift="ConfigMap cfg: data.key"), events=("drifted",))
    assert told(entry) == ["drifted"]
    assert entry is not None
    entry = run({**entry, "pending": None}, app("Ready", "Ready", "ok", drift="ConfigMap cfg: data.other"),
                events=("drifted",))
    assert told(entry) == []
    entry = run(entry, app("Ready", "Ready", "ok"), events=("drifted",))
    assert entry is not None and entry["drifted"] is False
    assert told(run(entry, app("Ready", "Ready", "ok", drift="x"), events=("drifted",), now="T9")) == ["drifted"]


def test_a_deleted_application_is_told_then_dropped() -> None:
    gone = run({"name": "web", "uid": "u1", "failing": True, "episodes": 1}, None)
    assert gone is not None and gone["deleted"] is True and told(gone) == ["deleted"]
    assert gone["pending"][0]["message"] == "Application team/web was deleted"
    assert run(gone, None) == gone  # still owed: kept, not owed twice
    assert run({"name": "web", "uid": "u1"}, None, events=("failed",)) is None
    assert run(None, None) is None


def test_selection_by_names_and_labels() -> None:
    body = app("Ready", "Ready", "ok", labels={"team": "a", "tier": "web"})
    assert selects({}, body)
    assert selects({"applications": ["web"], "selector": {"team": "a"}}, body)
    assert not selects({"applications": ["db"]}, body)
    assert not selects({"selector": {"team": "b"}}, body)
