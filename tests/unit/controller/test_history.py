"""The revision history's decisions (docs/operator.md#revision-history): which revision a pass's
status speaks of, what is pruned, the history limit, and that suspend then resume or a new
interval counts no revision while a new spec does (passes with the scripted reconciler)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from oam_operator.api.revisions import Outcome
from oam_operator.controller.reconcile.history import (
    Recorded,
    RevisionRecorder,
    attributed,
    history_limit,
    limit_refusal,
    new_outcome,
    to_prune,
)
from oam_operator.controller.reconcile.passes import apply_pass
from oam_operator.controller.reconcile.seams import Memory
from oam_operator.controller.service.admission import refusal
from tests.unit.controller.test_admission import _parts, app, config_map
from tests.unit.unitkit import FakeReconciler, application, configmap_component, fake_reconciler, pass_environment

__all__ = ["fake_reconciler"]  # the fixture, imported for pytest

READY = {"type": "Ready", "status": "True", "reason": "Ready", "message": "Applied revision 2: 1 objects ready",
         "lastTransitionTime": "2026-12-02T10:00:00Z"}
FAILED = {"type": "Ready", "status": "False", "reason": "ApiError", "message": "Boom",
          "lastTransitionTime": "2026-12-02T10:05:00Z"}


def status(**fields: Any) -> dict[str, Any]:
    return {"revision": 2, "processingDigest": "a", "lastProcessingDigest": "a", **fields}


@pytest.mark.parametrize(("given", "expected"), [
    (status(state="Ready", conditions=[READY]), (2, Outcome("Ready", "2026-12-02T10:00:00Z"))),
    (status(state="Ready", conditions=[READY], lastAppliedAt="2026-12-02T11:00:00Z"),
     (2, Outcome("Ready", "2026-12-02T11:00:00Z"))),
    (status(state="Error", conditions=[FAILED]), (2, Outcome("Error", "2026-12-02T10:05:00Z", "ApiError", "Boom"))),
    (status(state="Processing"), (2, Outcome("Processing"))),
    (status(state="Pending"), (2, Outcome("Processing"))),
    # a new input not counted yet (a transform error of it): not revision 2's outcome
    (status(state="Error", conditions=[FAILED], processingDigest="b"), None),
    ({"state": "Error", "conditions": [FAILED]}, None),  # no revision yet
])
def test_the_outcome_belongs_to_the_revision_being_processed(given: dict[str, Any],
                                                             expected: tuple[int, Outcome] | None) -> None:
    assert attributed(given) == expected


def test_the_oldest_beyond_the_limit_are_pruned() -> None:
    assert to_prune([3, 1, 4, 2], 2) == [1, 2]
    assert to_prune([1, 2], 10) == []
    assert to_prune([1, 2], 0) == [1, 2]


@pytest.mark.parametrize(("spec", "limit"), [
    ({}, 10), ({"revisionHistoryLimit": 3}, 3), ({"revisionHistoryLimit": 0}, 0),
    ({"revisionHistoryLimit": 500}, 100), ({"revisionHistoryLimit": -1}, 0), ({"revisionHistoryLimit": "3"}, 10),
])
def test_the_history_limit(spec: dict[str, Any], limit: int) -> None:
    assert history_limit(spec) == limit


@pytest.mark.parametrize(("value", "message"), [
    (-1, "spec.revisionHistoryLimit must be an integer from 0 to 100, not -1"),
    (101, "spec.revisionHistoryLimit must be an integer from 0 to 100, not 101"),
    ("5", "spec.revisionHistoryLimit must be an integer from 0 to 100, not '5'"),
    (True, "spec.revisionHistoryLimit must be an integer from 0 to 100, not True"),
])
def test_admission_refuses_a_limit_out_of_bounds(value: Any, message: str) -> None:
    assert limit_refusal({"revisionHistoryLimit": value}) == message
    validator, _ = _parts()
    assert refusal(validator, "CREATE", app(config_map("settings"), revisionHistoryLimit=value)) == message


def test_admission_admits_a_limit_within_bounds() -> None:
    validator, _ = _parts()
    for value in (0, 10, 100):
        assert refusal(validator, "CREATE", app(config_map("settings"), revisionHistoryLimit=value)) is None


def _next(body: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """The body of the next generation with ``spec`` changed, carrying the last pass's status."""
    merged = {**body["spec"], **spec}
    components = merged.pop("components")
    return application(status=body["status"], generation=body["metadata"]["generation"] + 1,
                       components=components, **merged)


def test_suspend_resume_a_new_interval_and_drift_count_no_revision(fake_reconciler: FakeReconciler) -> None:
    env = pass_environment()
    body = application()
    body["status"] = apply_pass(body, Memory(), env).status
    assert body["status"]["revision"] == 1
    for change in ({"suspend": True}, {"suspend": False}, {"interval": "5m"}, {"revisionHistoryLimit": 3},
                   {"drift": "Report"}, {"drift": "Correct"}):
        body = _next(body, **change)
        body["status"] = apply_pass(body, Memory(), env).status
        assert body["status"]["revision"] == 1, change
    assert body["status"]["state"] == "Ready"
    body = _next(body, components=[configmap_component("other")])
    body["status"] = apply_pass(body, Memory(), env).status  # Restarting: the new input
    body["status"] = apply_pass(body, Memory(), env).status
    assert (body["status"]["revision"], body["status"]["state"]) == (2, "Ready")


def test_a_status_written_with_the_legacy_digest_is_taken_over_without_a_new_revision(
        fake_reconciler: FakeReconciler) -> None:
    from oam_operator.controller.reconcile.digest import component_digest, legacy_component_digest

    env = pass_environment()
    body = application()
    body["status"] = apply_pass(body, Memory(), env).status
    legacy = legacy_component_digest(env.settings.domain, 2, body["spec"], "", None)
    body["status"] |= {"processingDigest": legacy, "lastProcessingDigest": legacy}
    result = apply_pass(body, Memory(), env).status
    current = component_digest(env.settings.domain, body["spec"], "", None)
    assert (result["revision"], result["state"]) == (1, "Ready")
    # Written back in the compatible form (docs/chart.md#upgrades): the previous release's digest
    # in the two fields it reads, this version's in revisionDigest.
    assert (result["processingDigest"], result["lastProcessingDigest"], result["revisionDigest"]) == (
        legacy, legacy, current)


def test_a_settled_revision_keeps_the_previous_releases_digest_so_a_downgrade_sees_no_new_input(
        fake_reconciler: FakeReconciler) -> None:
    """What the previous release compares (its digest of the input, with the generation) is what
    the status holds, through a change that is no revision (suspend) and a new revision."""
    from oam_operator.controller.reconcile.digest import component_digest, legacy_component_digest

    env = pass_environment()
    domain = env.settings.domain

    def previous_release_sees_no_new_input(body: dict[str, Any]) -> None:
        status = body["status"]
        legacy = legacy_component_digest(domain, body["metadata"]["generation"], body["spec"], "", None)
        assert status["processingDigest"] == status["lastProcessingDigest"] == legacy
        assert status["revisionDigest"] == component_digest(domain, body["spec"], "", None)

    body = application()
    body["status"] = apply_pass(body, Memory(), env).status
    previous_release_sees_no_new_input(body)
    body["status"] = apply_pass(body, Memory(), env).status  # read back: still settled, the same revision
    assert (body["status"]["revision"], body["status"]["state"]) == (1, "Ready")
    previous_release_sees_no_new_input(body)
    for change in ({"suspend": True}, {"suspend": False}):
        body = _next(body, **change)
        body["status"] = apply_pass(body, Memory(), env).status
        assert body["status"]["revision"] == 1, change
    previous_release_sees_no_new_input(body)
    body = _next(body, components=[configmap_component("other")])
    body["status"] = apply_pass(body, Memory(), env).status  # Restarting: the previous release's digest too
    status = body["status"]
    assert status["processingDigest"] == legacy_component_digest(domain, body["metadata"]["generation"],
                                                                 body["spec"], "", None)
    assert status["revisionDigest"] == component_digest(domain, body["spec"], "", None)
    assert status["lastProcessingDigest"] not in (status["processingDigest"], status["revisionDigest"])
    body["status"] = apply_pass(body, Memory(), env).status
    assert (body["status"]["revision"], body["status"]["state"]) == (2, "Ready")
    previous_release_sees_no_new_input(body)


class RecordingClient:
    """Records the recorder's requests; answers every one with an empty object."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any]] = []

    def request(self, verb: str, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        self.requests.append((method, path, kwargs.get("body")))
        return {}


def test_an_outcomes_time_does_not_move_with_later_passes() -> None:
    """Issue 44: each re-apply moved lastAppliedAt, and with it revision 2's Ready time."""
    client = RecordingClient()
    recorder = RevisionRecorder(client, "oam-operator.dev")  # type: ignore[arg-type]
    body = {"metadata": {"namespace": "shop", "name": "shop", "uid": "u"}, "spec": {}}
    first = status(state="Ready", conditions=[READY], lastAppliedAt="2026-12-02T10:00:00Z")
    recorded = recorder.record(body, status(state="Processing"), first, Recorded(2, Outcome("Processing"), 10))
    assert recorded.outcome == Outcome("Ready", "2026-12-02T10:00:00Z")
    assert [method for method, _, _ in client.requests] == ["PATCH"]
    later = status(state="Ready", conditions=[READY], lastAppliedAt="2026-12-02T11:00:00Z")  # a re-apply
    assert recorder.record(body, first, later, recorded) == recorded
    assert len(client.requests) == 1  # nothing written: 10:00 stays the revision's Ready time
    failed = status(state="Error", conditions=[FAILED])
    recorded = recorder.record(body, later, failed, recorded)
    again = recorder.record(body, failed, later, recorded)
    assert (recorded.outcome, again.outcome) == (Outcome("Error", "2026-12-02T10:05:00Z", "ApiError", "Boom"),
                                                 Outcome("Ready", "2026-12-02T11:00:00Z"))
    assert len(client.requests) == 3  # Ready, then Error, then Ready again: each a new outcome


def test_a_new_outcome_is_a_new_state_reason_or_message() -> None:
    ready = Outcome("Ready", "t1")
    assert new_outcome(ready, None) and new_outcome(ready, Outcome("Processing"))
    assert not new_outcome(Outcome("Ready", "t2"), ready)
    assert new_outcome(Outcome("Error", "t2", "ApiError", "Boom"), Outcome("Error", "t1", "ApiError", "Bang"))
    assert not new_outcome(Outcome("Error", "t2", "ApiError", "Boom"), Outcome("Error", "t1", "ApiError", "Boom"))


class ListingClient(RecordingClient):
    """The recorder's client with revisions 1 (digest ``a``, a good spec) and 2 (``b``, a failed one)."""

    def request(self, verb: str, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        super().request(verb, method, path, **kwargs)
        if verb != "list":
            return {}
        return {"items": [{"metadata": {"name": f"shop-r{n}"}, "revision": n, "data": {"digest": d, "spec": s}}
                          for n, d, s in ((1, "a", {"v": "good"}), (2, "b", {"v": "bad"}))]}


def test_a_rollbacks_restore_records_the_restored_spec_with_restores() -> None:
    """docs/operator.md#automatic-rollback: the Application's spec is still the failed one; the
    revision records what was applied, revision 1's spec, and ``restores: 1``."""
    client = ListingClient()
    recorder = RevisionRecorder(client, "oam-operator.dev")  # type: ignore[arg-type]
    body = {"metadata": {"namespace": "shop", "name": "shop", "uid": "u"}, "spec": {"v": "bad"}}
    restore = {"revision": 3, "processingDigest": "a", "lastProcessingDigest": "a", "state": "Processing",
               "rolledBack": {"revision": 2, "digest": "x", "restores": 1, "message": "m", "at": "t"}}
    recorder.record(body, {"revision": 2}, restore, Recorded(2, Outcome("Error"), 10))
    posted = [json.loads(sent) for method, _, sent in client.requests if method == "POST"]
    assert [(p["revision"], p["data"]["spec"], p["data"]["restores"]) for p in posted] == [(3, {"v": "good"}, 1)]


BODY = {"metadata": {"namespace": "shop", "name": "shop", "uid": "u", "generation": 3,
                     "annotations": {"kubernetes.io/change-cause": "v3", "other": "x"}},
        "spec": {"v": "three"}}


def sent(client: RecordingClient) -> list[tuple[str, str]]:
    return [(method, path.rsplit("/", 1)[-1]) for method, path, _ in client.requests]


def test_a_revision_is_recorded_once_it_ends_with_its_outcome_in_one_post() -> None:
    """Issue 43: a first apply to Ready was a POST (Processing) and a PATCH (Ready); it is one POST."""
    client = RecordingClient()
    recorder = RevisionRecorder(client, "oam-operator.dev")  # type: ignore[arg-type]
    waiting = status(revision=1, state="Processing", profile="edge", revisionDigest="r1")
    recorded = recorder.record(BODY, {}, waiting, None)
    assert client.requests == []  # still processing: nothing recorded yet
    assert recorded.pending is not None and recorded.pending.number == 1
    assert recorded.pending.spec == {"v": "three"}
    later = {**BODY, "metadata": {**BODY["metadata"], "generation": 4}, "spec": {"v": "three", "interval": "1m"}}
    ready = status(revision=1, state="Ready", conditions=[READY], lastAppliedAt="2026-12-02T10:00:00Z")
    recorded = recorder.record(later, waiting, ready, recorded)
    assert sent(client) == [("POST", "controllerrevisions")]  # revision 1: nothing earlier to list
    document = json.loads(client.requests[0][2])
    assert document["metadata"]["annotations"] == {"oam-operator.dev/outcome": "Ready",
                                                   "oam-operator.dev/outcome-at": "2026-12-02T10:00:00Z",
                                                   "kubernetes.io/change-cause": "v3"}
    # what its first pass applied, not the later body's
    assert document["data"] == {"spec": {"v": "three"}, "profile": "edge", "digest": "r1", "generation": 3}
    assert recorded == Recorded(1, Outcome("Ready", "2026-12-02T10:00:00Z"), 10)
    assert recorder.record(later, ready, ready, recorded) == recorded
    assert len(client.requests) == 1  # nothing changed, nothing sent


def test_a_pass_that_ends_its_new_revision_records_it_at_once() -> None:
    client = RecordingClient()
    recorder = RevisionRecorder(client, "oam-operator.dev")  # type: ignore[arg-type]
    failed = status(revision=1, state="Error", conditions=[FAILED])
    recorded = recorder.record(BODY, {}, failed, None)
    assert sent(client) == [("POST", "controllerrevisions")]
    assert json.loads(client.requests[0][2])["metadata"]["annotations"]["oam-operator.dev/outcome"] == "Error"
    assert recorded == Recorded(1, Outcome("Error", "2026-12-02T10:05:00Z", "ApiError", "Boom"), 10)


def test_a_revision_superseded_before_it_ended_is_recorded_as_processing() -> None:
    client = ListingClient()
    recorder = RevisionRecorder(client, "oam-operator.dev")  # type: ignore[arg-type]
    recorded = Recorded(2, Outcome("Ready"), 10)
    third = status(revision=3, processingDigest="c", lastProcessingDigest="c", state="Processing")
    recorded = recorder.record(BODY, status(state="Ready"), third, recorded)
    assert client.requests == []
    newer = {**BODY, "metadata": {**BODY["metadata"], "generation": 4}, "spec": {"v": "four"}}
    fourth = status(revision=4, processingDigest="d", lastProcessingDigest="d", state="Processing")
    recorded = recorder.record(newer, third, fourth, recorded)
    assert sent(client) == [("GET", "controllerrevisions"), ("POST", "controllerrevisions")]
    posted = json.loads(client.requests[1][2])
    assert (posted["revision"], posted["data"]["spec"], posted["metadata"]["annotations"]["oam-operator.dev/outcome"]) \
        == (3, {"v": "three"}, "Processing")
    assert recorded.number == 3 and recorded.pending is not None and recorded.pending.number == 4
    ended = status(revision=4, processingDigest="d", lastProcessingDigest="d", state="Ready", conditions=[READY])
    recorder.record(newer, fourth, ended, recorded)
    posted = json.loads(client.requests[-1][2])
    assert (posted["revision"], posted["data"]["spec"], posted["metadata"]["annotations"]["oam-operator.dev/outcome"]) \
        == (4, {"v": "four"}, "Ready")


def test_after_a_restart_a_revision_that_had_not_ended_is_recorded_when_it_ends() -> None:
    """Its record may or may not exist (an earlier process's pass may have ended it unrecorded):
    it is pending again, and a POST that finds one takes it over (the integration test)."""
    client = RecordingClient()
    recorder = RevisionRecorder(client, "oam-operator.dev")  # type: ignore[arg-type]
    waiting = status(revision=2, state="Processing")
    recorded = recorder.record(BODY, waiting, waiting, None)
    assert client.requests == [] and recorded.pending is not None and recorded.pending.number == 2
    recorder.record(BODY, waiting, status(revision=2, state="Ready", conditions=[READY]), recorded)
    assert sent(client) == [("GET", "controllerrevisions"), ("POST", "controllerrevisions")]
    ready = status(state="Ready", conditions=[READY])
    assert recorder.record(BODY, ready, ready, None) == Recorded(2, Outcome("Ready", "2026-12-02T10:00:00Z"), 10)
    assert len(client.requests) == 2  # a Ready revision at a restart: taken as recorded, nothing sent
