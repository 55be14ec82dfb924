"""The controller's pure passes (``apply_pass``/``delete_pass``), table-driven, with a scripted
fake reconciler and a fixed clock: each case is an Application body, what the reconciler does,
and the outcome the epilogue writes (state, Ready reason and message, ``observedGeneration``,
counts, requeue)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest

from oam_operator.api.summary import summary_of
from oam_operator.controller.reconcile.digest import component_digest
from oam_operator.controller.reconcile.inventorycodec import read_inventory
from oam_operator.controller.reconcile.passes import apply_pass, delete_pass
from oam_operator.controller.reconcile.seams import Memory, StatusNotWritten
from oam_operator.reconciler.errors import OwnershipConflictError, TransientApiError
from oam_operator.reconciler.inventory import Phase
from oam_operator.reconciler.report import CallReport
from tests.unit.unitkit import (
    DOMAIN,
    NOW,
    Clock,
    FakeReconciler,
    application,
    compact,
    configmap_component,
    fake_reconciler,
    item_of,
    outcome,
    pass_environment,
    stamp,
)

__all__ = ["fake_reconciler"]  # the fixture, imported for pytest

CONFIG = configmap_component()["properties"]["object"] | {"metadata": {"name": "web-config", "namespace": "shop"}}
BAD_NAME = {"name": "web.v2", "type": "webservice", "properties": {"image": "nginx:1", "port": 80}}
TWO_SCALERS = {"name": "web", "type": "worker", "properties": {"image": "ghcr.io/example/web:1.0"},
               "traits": [{"type": "scaler", "properties": {"minReplicas": 2, "maxReplicas": 4}},
                          {"type": "scaler", "properties": {"minReplicas": 3, "maxReplicas": 9}}]}
NOT_A_LABEL = ('component "web.v2": Deployment "web.v2": spec.template.spec.containers[0].name "web.v2" is not a '
               "DNS-1123 label (at most 63 characters: lower-case letters, digits and '-', starting and ending "
               "with a letter or digit)")


def digest_of(body: dict[str, Any]) -> str:
    """The processing digest the pass computes for ``body`` without a profile."""
    return component_digest(DOMAIN, body["spec"], "", None)


@dataclass
class Case:
    id: str
    body: dict[str, Any]
    state: str
    reason: str
    message: str
    result: str
    delay: float | None  # the first step of the backoff (0.05 s), of the error backoff (5 s), the interval
    observed: int | None = 2  # observedGeneration after the pass
    counts: tuple[int, int] | None = None  # (objects, readyObjects), None: absent
    reconciler: dict[str, Any] = field(default_factory=dict)
    conditions: tuple[str, ...] = ("Ready",)
    extra: dict[str, Any] = field(default_factory=dict)  # further status fields, exactly
    applies: bool = True  # whether the pass calls the reconciler's apply() (else nothing is touched)


def _steady(**status: Any) -> dict[str, Any]:
    """A status as a previous pass left it, at generation 2 and the body's digest."""
    body = application()
    return {"observedGeneration": 2, "processingDigest": digest_of(body), "lastProcessingDigest": digest_of(body),
            "revision": 1, **status}


APPLY = [
    Case("first pass applies everything and is ready", application(), "Ready", "Ready",
         "Applied revision 1: 1 objects ready", "ready", 600.0, counts=(1, 1),
         extra={"appliedGeneration": 2, "lastAppliedAt": stamp(NOW), "revision": 1, "profile": ""}),
    Case("first pass records the objects and waits", application(), "Processing", "Processing",
         "Recorded 1 new objects in the inventory", "progressing", 0.05, counts=(1, 0),
         reconciler={"done": False, "report": CallReport("checkpoint")}, conditions=("Ready", "Reconciling"),
         extra={"processingSince": stamp(NOW), "revision": 1}),
    Case("suspended before anything else", application(suspend=True), "Pending", "Suspended",
         "Reconciliation is suspended", "pending", None, applies=False),
    Case("a missing profile is an error", application(profile="gold"), "Error", "ProfileNotFound",
         "ClusterProfile gold not found", "error", 5.0, conditions=("Ready", "Stalled"), applies=False),
    Case("a changed input restarts processing at once",
         application(status=_steady(processingDigest="0" * 64, processingSince=stamp(NOW - timedelta(minutes=5)))),
         "Processing", "Restarting",
         "Restarting processing due to changes of the Application or its ClusterProfile", "progressing", 0.0,
         conditions=("Ready", "Reconciling"), extra={"processingSince": None}, applies=False),
    # Moved from tests/e2e (the names the API server would refuse): the transform's message, and
    # not even the valid component's ConfigMap is applied.
    Case("a transform failure touches nothing", application(components=[configmap_component("first"), BAD_NAME]),
         "Error", "TransformFailed", NOT_A_LABEL, "error", 600.0, conditions=("Ready", "Stalled"), applies=False),
    # docs/transform.md#duplicate-objects-of-traits: named by its component and trait, nothing applied.
    Case("a trait generating an object twice is a transform failure", application(components=[TWO_SCALERS]),
         "Error", "TransformFailed",
         'component "web" trait "scaler": duplicate HorizontalPodAutoscaler "web-hpa": already generated by '
         'component "web" trait "scaler"', "error", 600.0, conditions=("Ready", "Stalled"), applies=False),
    Case("a retryable API error is retried", application(status=_steady()), "Pending", "Retrying",
         "Connection refused", "pending", 0.05, counts=(1, 1), conditions=("Ready", "Reconciling"),
         reconciler={"error": TransientApiError("connection refused", status=0, reason="ConnectionError",
                                                verb="apply")}),
    Case("another owner's object stalls the Application", application(status=_steady()), "Error",
         "OwnershipConflict", "Object is owned by someone else", "error", 5.0, counts=(1, 1),
         conditions=("Ready", "Stalled"),
         reconciler={"error": OwnershipConflictError("object is owned by someone else")}),
    Case("an unreadable inventory is an error and observes nothing",
         application(status=_steady(observedGeneration=1, compactInventory={"format": 2})), "Error", "Error",
         "CompactInventory has format 2; this operator reads 1", "error", 5.0, observed=1,
         conditions=("Ready", "Stalled"), extra={"compactInventory": {"format": 2}}, applies=False),  # kept as it was
    Case("a component-operator-runtime inventory is read and replaced by the compact one",
         application(status=_steady(inventory=[item_of(CONFIG).to_json()])), "Ready", "Ready",
         "Applied revision 1: 1 objects ready", "ready", 600.0, counts=(1, 1),
         extra={"inventory": None, "compactInventory": compact(item_of(CONFIG))}),
]


@pytest.mark.parametrize("case", APPLY, ids=[c.id for c in APPLY])
def test_apply_pass(case: Case, fake_reconciler: FakeReconciler) -> None:
    for key, value in case.reconciler.items():
        setattr(fake_reconciler, key, value)
    result = apply_pass(case.body, Memory(), pass_environment())
    status = result.status
    assert outcome(status) == (case.state, case.reason, case.message)
    assert (result.outcome, result.delay) == (case.result, case.delay)
    assert status.get("observedGeneration") == case.observed
    assert tuple(c["type"] for c in status["conditions"]) == case.conditions
    assert {c["lastTransitionTime"] for c in status["conditions"]} == {stamp(NOW)}
    assert {c["observedGeneration"] for c in status["conditions"]} == {2}
    assert status["summary"] == summary_of(case.reason, case.message)
    counts = (status["objects"], status["readyObjects"]) if "objects" in status else None
    assert counts == case.counts
    for key, value in case.extra.items():
        assert status.get(key) == value, key
    assert fake_reconciler.calls == (["apply"] if case.applies else [])


@pytest.mark.parametrize(("status", "unreachable"), [(0, True), (503, False)])
def test_only_a_pass_the_api_server_did_not_answer_is_unreachable(fake_reconciler: FakeReconciler, status: int,
                                                                   unreachable: bool) -> None:
    """docs/operator.md#backoff-and-timeouts: no status write is tried when the API server did not answer."""
    fake_reconciler.error = TransientApiError("connection refused", status=status, reason="x", verb="apply")
    assert apply_pass(application(status=_steady()), Memory(), pass_environment()).unreachable is unreachable


def test_a_pass_that_finds_the_status_unchanged_keeps_the_transition_times(fake_reconciler: FakeReconciler) -> None:
    clock = Clock()
    env = pass_environment(clock=clock)
    first = apply_pass(application(), Memory(), env)
    clock.advance(timedelta(minutes=10))
    again = apply_pass(application(status=first.status), Memory(), env)
    assert again.status == first.status  # steady state: nothing to write


def test_processing_times_out_after_the_timeout(fake_reconciler: FakeReconciler) -> None:
    fake_reconciler.done = False
    fake_reconciler.report = CallReport("waiting", wave=0, pending=((item_of(CONFIG), "InProgress"),))
    clock = Clock()
    env = pass_environment(clock=clock)
    first = apply_pass(application(timeout="1m"), Memory(), env)
    assert outcome(first.status)[:2] == ("Processing", "Processing")
    clock.advance(timedelta(minutes=1))
    later = apply_pass(application(timeout="1m", status=first.status), Memory(), env)
    assert outcome(later.status) == (
        "Error", "Timeout",
        "Reconciliation timed out after 1m: Waiting for bundle web (0/1 ready): ConfigMap web-config (InProgress)")
    assert later.status["processingSince"] == stamp(NOW)
    assert later.outcome == "error" and later.error_type == "other"


def _waiting_on(fake: FakeReconciler) -> None:
    fake.done = False
    fake.report = CallReport("waiting", wave=0, pending=((item_of(CONFIG, Phase.CREATING, "InProgress"),
                                                          "InProgress"),))


def _phases(status: dict[str, Any]) -> list[str]:
    return [item.phase.value for item in read_inventory(status)]


def test_the_checkpoint_is_written_within_the_pass_before_anything_is_created(
    fake_reconciler: FakeReconciler,
) -> None:
    """docs/operator.md#the-apply-branch: one pass records the new items (one status write
    from inside ``apply()``) and goes on to create them."""
    _waiting_on(fake_reconciler)
    env = pass_environment()
    written: list[tuple[dict[str, Any], list[str]]] = []

    class Recording:
        def checkpoint(self, status: dict[str, Any]) -> None:
            written.append((status, list(fake_reconciler.calls)))

    result = apply_pass(application(), Memory(), env, Recording())
    assert len(written) == 1
    checkpoint, calls_then = written[0]
    assert calls_then == ["apply"]  # inside the call, before it went on
    assert outcome(checkpoint) == ("Processing", "Processing", "Recorded 1 new objects in the inventory")
    assert _phases(checkpoint) == ["ScheduledForApplication"]
    assert (checkpoint["observedGeneration"], checkpoint["objects"], checkpoint["readyObjects"]) == (2, 1, 0)
    assert checkpoint["processingSince"] == stamp(NOW)
    assert fake_reconciler.calls == ["apply", "checkpoint"]
    assert outcome(result.status) == (
        "Processing", "Processing", "Waiting for bundle web (0/1 ready): ConfigMap web-config (InProgress)")
    assert _phases(result.status) == ["Creating"]
    assert (result.outcome, result.delay) == ("progressing", 0.05)


def test_a_checkpoint_that_is_not_written_ends_the_pass_before_anything_is_created(
    fake_reconciler: FakeReconciler,
) -> None:
    _waiting_on(fake_reconciler)
    env = pass_environment()

    class Refusing:
        def checkpoint(self, status: dict[str, Any]) -> None:
            raise StatusNotWritten("503 Service Unavailable: etcd is gone")

    result = apply_pass(application(), Memory(), env, Refusing())
    assert fake_reconciler.calls == ["apply"]  # the fake's objects never got past the checkpoint
    assert outcome(result.status) == ("Processing", "Processing", "Recorded 1 new objects in the inventory")
    assert _phases(result.status) == ["ScheduledForApplication"]
    assert (result.outcome, result.delay) == ("progressing", 0.0)


def test_without_a_status_writer_the_checkpoint_ends_the_pass(fake_reconciler: FakeReconciler) -> None:
    """The reconciler's own default (docs/reconciler.md#in-call-checkpoint): no callback is passed."""
    _waiting_on(fake_reconciler)
    apply_pass(application(), Memory(), pass_environment())
    assert fake_reconciler.calls == ["apply"]


def test_first_seen_is_no_outcome_of_its_own(fake_reconciler: FakeReconciler) -> None:
    """A first pass goes straight on to its outcome; the Event-worthy Ready condition is that one."""
    result = apply_pass(application(), Memory(), pass_environment())
    assert [c["reason"] for c in result.status["conditions"]] == ["Ready"]


# -- the delete branch ---------------------------------------------------------------------------

ITEM = item_of(CONFIG)


def _deleting(**kwargs: Any) -> dict[str, Any]:
    status = {"observedGeneration": 1, "state": "Ready", "compactInventory": compact(ITEM), "objects": 1,
              "readyObjects": 1, "processingDigest": "0" * 64}
    return application(deleting=True, status=status, **kwargs)


@dataclass
class DeleteCase:
    id: str
    body: dict[str, Any]
    finished: bool
    result: str
    outcome: tuple[str, str, str] | None = None
    reconciler: dict[str, Any] = field(default_factory=dict)
    calls: tuple[str, ...] = ()
    counts: tuple[int, int] = (1, 1)


DELETE = [
    DeleteCase("the abandon annotation drops the inventory", _deleting(annotations={f"{DOMAIN}/abandon": "true"}),
               True, "deleted"),
    DeleteCase("an empty inventory finishes at once",
               application(deleting=True, status={"observedGeneration": 1}), True, "deleted", counts=(0, 0)),
    DeleteCase("the reconciler's refusal blocks deletion", _deleting(), False, "pending",
               ("Deleting", "DeletionBlocked", "Deletion blocked: instances of Widget exist"),
               reconciler={"deletion_allowed": (False, "instances of Widget exist")}, calls=("is_deletion_allowed",)),
    DeleteCase("foreign finalizers block deletion", _deleting(finalizers=["z.example/x", DOMAIN, "a.example/y"]),
               False, "pending",
               ("Deleting", "DeletionBlocked",
                "Deletion blocked due to existing foreign finalizers: a.example/y, z.example/x"),
               calls=("is_deletion_allowed",)),
    DeleteCase("deletion in progress names what it waits for", _deleting(), False, "progressing",
               ("Deleting", "DeletionProcessing",
                "Deleting dependent objects: waiting for ConfigMap web-config (Terminating)"),
               calls=("is_deletion_allowed", "delete"), counts=(1, 0)),
    DeleteCase("a retryable error retries the deletion", _deleting(), False, "pending",
               ("DeletionPending", "DeletionRetrying", "Throttled"),
               reconciler={"error": TransientApiError("throttled", status=429, reason="TooManyRequests",
                                                      verb="delete")},
               calls=("is_deletion_allowed", "delete")),
    DeleteCase("deletion finishes when the inventory is empty", _deleting(), True, "deleted",
               reconciler={"deleted": True}, calls=("is_deletion_allowed", "delete"), counts=(0, 0)),
]


@pytest.mark.parametrize("case", DELETE, ids=[c.id for c in DELETE])
def test_delete_pass(case: DeleteCase, fake_reconciler: FakeReconciler) -> None:
    for key, value in case.reconciler.items():
        setattr(fake_reconciler, key, value)
    result = delete_pass(case.body, Memory(), pass_environment())
    status = result.status
    assert (result.finished, result.outcome) == (case.finished, case.result)
    assert tuple(fake_reconciler.calls) == case.calls
    assert status.get("observedGeneration") == 1  # deletion observes no new generation
    if case.outcome is not None:
        assert outcome(status) == case.outcome
        assert status["summary"] == summary_of(case.outcome[1], case.outcome[2])
    assert (status.get("objects", 0), status.get("readyObjects", 0)) == case.counts
    assert "processingDigest" not in status or case.id.startswith("the abandon")
    if case.id.startswith("the abandon"):
        assert [(e.type, e.reason, e.message) for e in result.events] == [
            ("Warning", "Abandoned", "Objects left in place; inventory dropped")]
        assert status["compactInventory"]["entries"] == []


def test_the_fake_marks_items_deleting_like_the_reconciler() -> None:
    item = item_of(CONFIG)
    FakeReconciler().delete([item], "owner")
    assert (item.phase, item.status) == (Phase.DELETING, "Terminating")
