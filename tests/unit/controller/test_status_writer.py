"""The write path of a pass (controller/reconcile/statuswriter.py, docs/operator.md#the-status-writer), table-driven.

The writer's transport is a recording ``send`` that answers as the API server does (or raises
the error the cluster client raises for an HTTP status), its clock is fixed: each case is what
was persisted before, what the pass returned, and what the writer sent, posted and remembered.
"""

from __future__ import annotations

import http
from dataclasses import dataclass, field
from typing import Any

import pytest

from oam_operator.controller.reconcile.seams import ApplicationGone, Event, Memory, PassResult, StatusNotWritten
from oam_operator.controller.reconcile.statuswriter import PROGRESS_WRITE_INTERVAL, StatusWriter, ready_event
from oam_operator.reconciler.client import classify_api_error
from oam_operator.reconciler.errors import ApiError

NOW = 1000.0
DOMAIN = "oam-operator.dev"


def api_error(status: int, message: str) -> ApiError:
    """The error ``ClusterClient.request`` raises for a failed PATCH with this answer."""
    phrase = http.HTTPStatus(status).phrase
    cls = classify_api_error(status, read=False, message=message)
    return cls(f"{status} {phrase}: {message}", status=status, reason=phrase, verb="patch")


def status(state: str, reason: str, message: str, *items: str, generation: int = 1) -> dict[str, Any]:
    return {
        "state": state, "observedGeneration": generation,
        "conditions": [{"type": "Ready", "status": "True" if state == "Ready" else "False", "reason": reason,
                        "message": message}],
        "inventory": [{"group": "", "kind": "ConfigMap", "namespace": "shop", "name": name, "phase": "Ready"}
                      for name in items],
    }


PROCESSING = status("Processing", "Processing", "Waiting for bundle web (0/1 ready)", "a")
PROGRESS = status("Processing", "Processing", "Waiting for bundle web (1/2 ready)", "a")
READY = status("Ready", "Ready", "Applied revision 1: 1 objects ready", "a")
MORE_ITEMS = status("Processing", "Processing", "Recorded 1 new objects in the inventory", "a", "b")
CONFLICT = api_error(409, 'Operation cannot be fulfilled on applications "web": the object has been modified')
THROTTLED = api_error(429, "Too many requests, please try again later.")
GONE = api_error(404, 'applications.oam-operator.dev "web" not found')
TOO_LARGE = api_error(500, "etcdserver: request is too large")
FORBIDDEN = api_error(403, 'applications.oam-operator.dev "web" is forbidden: User "system:serviceaccount:oam:oam" '
                      'cannot patch resource "applications/status" in API group "oam-operator.dev"')
DENIED = api_error(422, 'Application.oam-operator.dev "web" is invalid: status.conditions: Too many')


def body(persisted: dict[str, Any] | None) -> dict[str, Any]:
    meta = {"name": "web", "namespace": "shop", "uid": "uid-web", "generation": 1,
            "annotations": {f"{DOMAIN}/requested-at": "2026-12-01T00:00:00Z"}}
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application", "metadata": meta,
            "status": persisted or {}}


@dataclass
class Wire:
    """The writer's transport: records what was sent and posted; ``fail`` raises for a send."""

    fail: ApiError | None = None
    sent: list[dict[str, Any]] = field(default_factory=list)
    posted: list[Event] = field(default_factory=list)

    def send(self, patch: dict[str, Any]) -> None:
        if self.fail is not None:
            raise self.fail
        self.sent.append(patch)

    def writer(self, persisted: dict[str, Any] | None, memory: Memory) -> StatusWriter:
        return StatusWriter(body(persisted), memory, send=self.send, post=self.posted.append, error_interval=600.0,
                            requested_at_key=f"{DOMAIN}/requested-at", clock=lambda: NOW)


@dataclass
class Case:
    id: str
    persisted: dict[str, Any] | None  # in memory, as this operator last wrote it (None: only the body's)
    new: dict[str, Any]  # what the pass returned
    written_ago: float | None = None  # seconds since that write (None: not by this process)
    fail: ApiError | None = None
    writes: int = 1
    delay: float | None = 600.0  # result.delay after conclude (the pass's own: 600)
    events: tuple[tuple[str, str, str], ...] = ()
    remembered: str = "new"  # memory.status afterwards: "new" or "old"


CASES = [
    Case("an unchanged status is not written", READY, READY, written_ago=100.0, writes=0),
    Case("an outcome is written and announced once", PROCESSING, READY, written_ago=0.1,
         events=(("Normal", "Ready", "Applied revision 1: 1 objects ready"),)),
    Case("progress within the write interval waits", PROCESSING, PROGRESS, written_ago=0.5, writes=0),
    Case("progress after the write interval is written", PROCESSING, PROGRESS,
         written_ago=PROGRESS_WRITE_INTERVAL),
    Case("progress is written when this process never wrote", PROCESSING, PROGRESS, written_ago=None),
    Case("a new inventory item is written at once", PROCESSING, MORE_ITEMS, written_ago=0.1),
    Case("a conflict retries on the retry backoff, keeps the old status and announces nothing yet", PROCESSING,
         READY, written_ago=5.0, fail=CONFLICT, writes=0, delay=1.0, remembered="old"),
    Case("throttling retries on the retry backoff", PROCESSING, READY, written_ago=5.0, fail=THROTTLED, writes=0,
         delay=1.0, remembered="old"),
    Case("too large for etcd warns and waits the error backoff", PROCESSING, READY, written_ago=5.0, fail=TOO_LARGE,
         writes=0, delay=5.0, remembered="old",
         events=(("Warning", "StatusWriteFailed",
                  "The status could not be written: 500 Internal Server Error: etcdserver: request is too large"),
                 ("Normal", "Ready", "Applied revision 1: 1 objects ready"))),
    Case("a refusal warns and waits the error backoff", PROCESSING, READY, written_ago=5.0, fail=DENIED, writes=0,
         delay=5.0, remembered="old",
         events=(("Warning", "StatusWriteFailed",
                  "The status could not be written: 422 Unprocessable Entity: "
                  'Application.oam-operator.dev "web" is invalid: status.conditions: Too many'),
                 ("Normal", "Ready", "Applied revision 1: 1 objects ready"))),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_the_final_write(case: Case) -> None:
    wire = Wire(fail=case.fail)
    seeded = ready_event(case.persisted or {})  # as Runtime.memory_of seeds it: a restart re-emits nothing
    memory = Memory(status=case.persisted, persisted=case.persisted,
                    written_at=None if case.written_ago is None else NOW - case.written_ago,
                    last_event=(seeded.type, seeded.reason, seeded.message) if seeded else None)
    result = wire.writer(case.persisted, memory).conclude(PassResult(case.new, 600.0, "ready"))
    assert len(wire.sent) == case.writes
    if case.writes:
        assert wire.sent[0] == {"status": {**case.new}}
        assert (memory.persisted, memory.written_at) == (case.new, NOW)
    assert result.delay == case.delay
    assert [(e.type, e.reason, e.message) for e in wire.posted] == list(case.events)
    assert memory.status == (case.new if case.remembered == "new" else case.persisted)
    if case.fail is not None:
        assert memory.persisted == case.persisted  # the next pass starts from what is persisted


def test_a_repeated_warning_is_posted_once() -> None:
    wire, memory = Wire(fail=TOO_LARGE), Memory(status=PROCESSING, persisted=PROCESSING)
    for _ in range(3):
        wire.writer(PROCESSING, memory).conclude(PassResult(MORE_ITEMS, 600.0, "progressing"))
    assert [e.reason for e in wire.posted] == ["StatusWriteFailed"]  # Processing is no announced outcome


def test_a_write_that_finds_the_application_gone_ends_the_pass_without_an_event_or_a_requeue() -> None:
    """docs/operator.md#a-fresh-view: a 404, or a failed uid test (a namesake), is ApplicationGone."""
    wire, memory = Wire(), Memory(status=PROCESSING, persisted=PROCESSING)

    def gone(_: dict[str, Any]) -> None:
        raise ApplicationGone('404 Not Found: applications.oam-operator.dev "web" not found')

    writer = StatusWriter(body(PROCESSING), memory, send=gone, post=wire.posted.append, error_interval=600.0,
                          requested_at_key=f"{DOMAIN}/requested-at", clock=lambda: NOW)
    result = writer.conclude(PassResult(READY, 600.0, "ready", events=[Event("Normal", "DriftCorrected", "x")]))
    assert (result.gone, result.delay, result.events, wire.posted) == (True, None, [], [])
    assert (memory.status, memory.persisted) == (PROCESSING, PROCESSING)


def test_a_checkpoint_that_finds_the_application_gone_creates_nothing_and_ends_the_pass() -> None:
    memory = Memory(status=PROCESSING, persisted=PROCESSING)

    def gone(_: dict[str, Any]) -> None:
        raise ApplicationGone("gone")

    writer = StatusWriter(body(PROCESSING), memory, send=gone, post=lambda _: None, error_interval=600.0,
                          requested_at_key=f"{DOMAIN}/requested-at", clock=lambda: NOW)
    with pytest.raises(StatusNotWritten):
        writer.checkpoint(MORE_ITEMS)
    assert writer.conclude(PassResult(MORE_ITEMS, 0.0, "progressing")).gone


def test_failed_writes_back_off_per_application_up_to_the_ceiling_and_a_landed_write_resets_it() -> None:
    """An outage: one request per step (1 s doubling to 60 s), not a tight loop."""
    wire, memory = Wire(fail=api_error(503, "the server is currently unable to handle the request")), \
        Memory(status=PROCESSING, persisted=PROCESSING)
    delays = [wire.writer(PROCESSING, memory).conclude(PassResult(READY, 600.0, "ready")).delay for _ in range(8)]
    assert delays == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]
    wire.fail = None
    wire.writer(PROCESSING, memory).conclude(PassResult(READY, 600.0, "ready"))
    assert memory.retry_backoff.count == 0


def test_a_pass_the_api_server_did_not_answer_writes_nothing_and_waits_the_retry_backoff() -> None:
    """An outage: one request per step (the pass's own), not a status write and an Event too."""
    wire, memory = Wire(), Memory(status=READY, persisted=READY)
    delays = [wire.writer(READY, memory).conclude(PassResult(PROCESSING, 0.05, "pending", unreachable=True)).delay
              for _ in range(3)]
    assert (delays, wire.sent, wire.posted, memory.status) == ([1.0, 2.0, 4.0], [], [], READY)


def test_an_outcome_left_unwritten_is_announced_once_it_is_written() -> None:
    wire, memory = Wire(fail=CONFLICT), Memory(status=PROCESSING, persisted=PROCESSING)
    corrected = Event("Normal", "DriftCorrected", "Corrected drift: ConfigMap a (data)")
    wire.writer(PROCESSING, memory).conclude(PassResult(READY, 600.0, "ready", events=[corrected]))
    assert wire.posted == [corrected]  # what the pass did is told at once
    wire.fail = None
    wire.writer(PROCESSING, memory).conclude(PassResult(READY, 600.0, "ready"))
    assert [e.reason for e in wire.posted] == ["DriftCorrected", "Ready"]


def test_vanished_fields_are_set_to_null() -> None:
    old = {**PROCESSING, "processingSince": "2026-12-01T00:00:00Z"}
    wire, memory = Wire(), Memory(status=old, persisted=old)
    wire.writer(old, memory).conclude(PassResult(READY, 600.0, "ready"))
    assert wire.sent == [{"status": {"processingSince": None, **READY}}]


def test_the_checkpoint_is_written_and_progress_on_it_waits_for_the_next_pass() -> None:
    """Never two writes of one state in one pass (the checkpoint, then its progress)."""
    wire, memory = Wire(), Memory()
    writer = wire.writer(None, memory)
    writer.checkpoint(MORE_ITEMS)
    assert wire.sent == [{"status": MORE_ITEMS}]
    assert (memory.status, memory.persisted, memory.written_at) == (MORE_ITEMS, MORE_ITEMS, NOW)
    later = {**MORE_ITEMS, "conditions": [{**MORE_ITEMS["conditions"][0], "message": "Waiting for bundle web"}]}
    writer.conclude(PassResult(later, 0.05, "progressing"))
    assert len(wire.sent) == 1
    assert (memory.status, memory.persisted) == (later, MORE_ITEMS)


def test_a_checkpoint_that_fails_changes_nothing_and_says_why() -> None:
    wire, memory = Wire(fail=CONFLICT), Memory(status=PROCESSING, persisted=PROCESSING)
    with pytest.raises(StatusNotWritten) as caught:
        wire.writer(PROCESSING, memory).checkpoint(MORE_ITEMS)
    assert str(caught.value) == str(CONFLICT)
    assert (memory.status, memory.persisted, memory.written_at) == (PROCESSING, PROCESSING, None)


def test_the_body_status_is_the_base_until_this_process_writes() -> None:
    """After a restart the memory is empty: the merge patch is computed against the body's status."""
    old = {**PROCESSING, "stale": True}
    wire, memory = Wire(), Memory()
    wire.writer(old, memory).conclude(PassResult(READY, 600.0, "ready"))
    assert wire.sent == [{"status": {"stale": None, **READY}}]


def test_a_pass_that_finds_the_status_as_persisted_keeps_one_object_for_both() -> None:
    """A settled Application's passes return an equal status each time: the memory holds the
    persisted object once, as the next pass's input and as the last written status."""
    persisted = {**READY, "conditions": [dict(READY["conditions"][0])]}
    wire, memory = Wire(), Memory(status=persisted, persisted=persisted)
    again = {**READY, "conditions": [dict(READY["conditions"][0])]}  # equal, another object
    result = wire.writer(persisted, memory).conclude(PassResult(again, 600.0, "ready"))
    assert wire.sent == [] and result.status == READY
    assert memory.status is persisted and memory.persisted is persisted and result.status is persisted
    first = {**READY}
    wire, memory = Wire(), Memory()  # after a restart: the body's status is the base
    result = wire.writer(READY, memory).conclude(PassResult(first, 600.0, "ready"))
    assert wire.sent == [] and memory.status is first and memory.persisted is first


def test_a_finished_deletion_writes_nothing_and_posts_its_events() -> None:
    wire, memory = Wire(), Memory(status=PROCESSING, persisted=PROCESSING)
    abandoned = Event("Warning", "Abandoned", "Objects left in place; inventory dropped")
    wire.writer(PROCESSING, memory).conclude(PassResult({}, None, "deleted", finished=True, events=[abandoned]))
    assert (wire.sent, wire.posted) == ([], [abandoned])


def test_what_the_pass_learnt_is_remembered() -> None:
    wire, memory = Wire(), Memory(status=READY, persisted=READY)
    writer = wire.writer(READY, memory)
    assert memory.seen == (1, "2026-12-01T00:00:00Z", None)  # what this pass was given, for wake-ups
    writer.conclude(PassResult(READY, 600.0, "ready", profile_name="strict", namespace_terminating=True))
    assert (memory.profile_name, memory.namespace_terminating) == ("strict", True)
    writer.conclude(PassResult(READY, 600.0, "ready"))  # a pass that did not get that far changes neither
    assert (memory.profile_name, memory.namespace_terminating) == ("strict", True)


def test_a_403_of_a_status_write_retries_quietly_for_the_grace_then_warns() -> None:
    """docs/operator.md#a-403-in-the-first-seconds: the operator's own identity, refused by an
    API server whose authorizer has not synced yet."""
    now = [NOW]
    wire, memory = Wire(fail=FORBIDDEN), Memory(status=PROCESSING, persisted=PROCESSING)

    def conclude() -> float | None:
        writer = StatusWriter(body(PROCESSING), memory, send=wire.send, post=wire.posted.append,
                              error_interval=600.0, requested_at_key=f"{DOMAIN}/requested-at", clock=lambda: now[0])
        return writer.conclude(PassResult(MORE_ITEMS, 600.0, "progressing")).delay

    assert [conclude(), conclude()] == [0.05, 0.1]
    now[0] += 4.9
    assert conclude() == 0.2
    assert wire.posted == []
    now[0] += 0.1
    assert conclude() == 5.0  # the error backoff, and the Warning
    assert [(e.type, e.reason) for e in wire.posted] == [("Warning", "StatusWriteFailed")]
    assert wire.posted[0].message == f"The status could not be written: {FORBIDDEN}"
    wire.fail = None
    conclude()
    assert memory.status_forbidden.since is None  # a write that succeeds ends the run
