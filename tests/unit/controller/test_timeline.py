"""status.timeline: what a pass records, its bounds, and the critical path (controller/reconcile/timeline.py, api/timeline.py)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from oam_operator.api.application import ApplicationStatus
from oam_operator.api.conditions import State
from oam_operator.api.timeline import MAX_GATES, MAX_REVISIONS, TimelineEntry, TimelineWave, critical_path, render_path
from oam_operator.controller.reconcile.timeline import Before, PassFacts, observe, span_id, trace_id
from oam_operator.reconciler.inventory import InventoryItem, Phase

T0 = datetime(2026, 12, 6, 12, 0, 0, tzinfo=UTC)


def item(kind: str, name: str, wave: int, ready: bool, digest: str = "d") -> InventoryItem:
    return InventoryItem(group="apps", version="v1", kind=kind, namespace="shop", name=name, apply_order=wave,
                         digest=digest, phase=Phase.READY if ready else Phase.CREATING,
                         status="Current" if ready else "InProgress")


def facts(at: float, outcome: str = "progressing", *, writes: int = 0, applied: bool = True,
          tracing: bool = True, took: float = 0.05) -> PassFacts:
    start = T0 + timedelta(seconds=at)
    return PassFacts("uid-1", "shop", "app", 1, start, start + timedelta(seconds=took), outcome, applied, writes,
                     tracing)


NOTHING = Before(None, None)


def test_a_revision_records_each_wave_with_the_objects_that_gated_it() -> None:
    status = ApplicationStatus(processing_digest="k1", revision=1)
    observe(status, [item("StatefulSet", "db", 0, False), item("Deployment", "web", 1, False)], NOTHING,
            facts(0.0, writes=2))
    entry = (status.timeline or [])[0]
    assert entry.waiting == ["StatefulSet/db"] and entry.waves is None and entry.outcome is None
    observe(status, [item("StatefulSet", "db", 0, True), item("Deployment", "web", 1, False)], NOTHING,
            facts(8.0, writes=1))
    observe(status, [item("StatefulSet", "db", 0, True), item("Deployment", "web", 1, True)], NOTHING,
            facts(10.0, "ready"))
    entry = (status.timeline or [])[0]
    assert entry.to_json() == {
        "revision": 1, "key": "k1", "started": "2026-12-06T12:00:00.000Z", "endedMs": 10050, "outcome": "Ready",
        "traceId": trace_id("uid-1", "k1"), "appliedMs": 0,
        "waves": [{"wave": 0, "readyMs": 8050, "gates": ["StatefulSet/db"]},
                  {"wave": 1, "readyMs": 10050, "gates": ["Deployment/web"]}]}
    assert render_path(critical_path(entry)) == "db StatefulSet 8.1 s → web Deployment 2.0 s"


def test_a_wave_ready_in_the_pass_that_applied_it_has_no_gate_and_is_named_by_its_number() -> None:
    status = ApplicationStatus(processing_digest="k1")
    observe(status, [item("ConfigMap", "cfg", 0, True), item("Deployment", "web", 1, False)], NOTHING, facts(0.0))
    observe(status, [item("ConfigMap", "cfg", 0, True), item("Deployment", "web", 1, True)], NOTHING,
            facts(3.05, "ready", took=0.0))
    entry = (status.timeline or [])[0]
    assert [wave.gates for wave in entry.waves or ()] == [None, ["Deployment/web"]]
    assert render_path(critical_path(entry)) == "wave 0 0.1 s → web Deployment 3.0 s"


def test_the_waiting_list_is_bounded_and_names_the_first_objects_not_ready() -> None:
    status = ApplicationStatus(processing_digest="k1")
    observe(status, [item("Deployment", f"w{n}", 0, False) for n in range(5)], NOTHING, facts(0.0))
    assert (status.timeline or [])[0].waiting == ["Deployment/w0", "Deployment/w1", "Deployment/w2"]
    assert MAX_GATES == 3


def test_a_new_input_supersedes_the_open_revision_and_the_timeline_keeps_the_last_five() -> None:
    status = ApplicationStatus(processing_digest="k0")
    observe(status, [item("Deployment", "web", 0, False)], NOTHING, facts(0.0))
    status.processing_digest = "k1"
    traced = observe(status, [item("Deployment", "web", 0, False)], NOTHING, facts(5.0, applied=False))
    first, second = status.timeline or []
    assert (first.outcome, first.ended_ms, second.key, second.outcome) == ("Superseded", 5000, "k1", None)
    assert traced is not None and [entry.key for entry in traced.ended] == ["k0"]
    for n in range(2, 9):
        status.processing_digest = f"k{n}"
        observe(status, [], NOTHING, facts(float(n), "ready"))
    assert [entry.key for entry in status.timeline or []] == ["k4", "k5", "k6", "k7", "k8"]
    assert len(status.timeline or []) == MAX_REVISIONS


def test_a_pass_that_did_not_apply_records_no_wave_from_the_previous_revision_s_phases() -> None:
    status = ApplicationStatus(processing_digest="k1")
    observe(status, [item("Deployment", "web", 0, True)], NOTHING, facts(0.0, applied=False))
    assert (status.timeline or [])[0].waves is None


def test_an_ended_revision_never_changes_and_its_later_passes_send_no_span() -> None:
    status = ApplicationStatus(processing_digest="k1")
    first = observe(status, [item("Deployment", "web", 0, True)], NOTHING, facts(0.0, "ready", writes=1))
    assert first is not None and first.pass_span is not None and len(first.ended) == 1
    ended = (status.timeline or [])[0].to_json()
    for n in range(10):  # no-op passes, and reconcile requests that re-apply every object
        later = observe(status, [item("Deployment", "web", 0, True)], NOTHING,
                        facts(10.0 + n, "ready", writes=n % 2))
        assert later is None
    assert (status.timeline or [])[0].to_json() == ended


def test_a_pass_of_an_open_revision_that_changed_nothing_sends_no_span() -> None:
    status = ApplicationStatus(processing_digest="k1")
    observe(status, [item("Deployment", "web", 0, False)], NOTHING, facts(0.0, writes=1))
    assert observe(status, [item("Deployment", "web", 0, False)], NOTHING, facts(1.0)) is None
    traced = observe(status, [item("Deployment", "web", 0, False)], NOTHING, facts(2.0, writes=1))
    assert traced is not None and traced.pass_span is not None
    assert traced.pass_span.parent_id == span_id(trace_id("uid-1", "k1"), "wave", "0")  # the wave it began in
    assert (status.timeline or [])[0].applying == 0


def test_a_pass_that_ends_the_revision_before_applying_is_a_child_of_the_root() -> None:
    status = ApplicationStatus()
    traced = observe(status, None, NOTHING, facts(0.0, "error", applied=False))
    assert traced is not None and traced.pass_span is not None
    assert traced.pass_span.parent_id == span_id(trace_id("uid-1", "generation/1"), "revision")
    assert (status.timeline or [])[0].key == "generation/1"


def test_an_error_ends_the_revision_as_failed() -> None:
    status = ApplicationStatus(processing_digest="k1")
    observe(status, [item("Deployment", "web", 0, False)], NOTHING, facts(0.0, "error"))
    entry = (status.timeline or [])[0]
    assert (entry.outcome, entry.ended_ms, entry.waiting) == ("Failed", 50, None)


def test_without_tracing_nothing_is_handed_over_and_no_trace_id_is_recorded() -> None:
    status = ApplicationStatus(processing_digest="k1")
    assert observe(status, [item("Deployment", "web", 0, True)], NOTHING, facts(0.0, "ready", tracing=False)) is None
    assert (status.timeline or [])[0].trace_id is None


def test_an_application_ready_before_the_timeline_existed_gets_no_entry() -> None:
    status = ApplicationStatus(processing_digest="k1", state=State.READY)
    assert observe(status, [item("Deployment", "web", 0, True)], Before(State.READY, "k1"), facts(0.0, "ready")) is None
    assert status.timeline is None


def test_ids_are_derived_from_the_uid_and_the_key() -> None:
    assert trace_id("uid-1", "k1") == trace_id("uid-1", "k1") != trace_id("uid-2", "k1")
    assert len(trace_id("uid-1", "k1")) == 32 and len(span_id(trace_id("uid-1", "k1"), "revision")) == 16


def test_a_gate_outside_the_namespace_is_labelled_with_it() -> None:
    entry = TimelineEntry(key="k", started="2026-12-06T12:00:00.000Z",
                          waves=[TimelineWave(wave=0, ready_ms=1500, gates=["Namespace/ops/x"])])
    assert render_path(critical_path(entry)) == "ops/x Namespace 1.5 s"


def test_a_revision_begins_when_its_generation_was_first_seen_not_at_its_first_pass() -> None:
    status = ApplicationStatus(processing_digest="k1")
    seen = T0 - timedelta(seconds=1.5)  # kopf starts an Application's first pass up to 2 s after its event
    observe(status, [item("Deployment", "web", 0, True)], NOTHING,
            dataclasses.replace(facts(0.0, "ready"), seen=seen))
    entry = (status.timeline or [])[0]
    assert (entry.started, entry.applied_ms, entry.ended_ms) == ("2026-12-06T11:59:58.500Z", 1500, 1550)
    assert render_path(critical_path(entry)) == "first pass 1.5 s → wave 0 0.1 s"


def test_new_input_of_the_same_generation_begins_at_the_pass_that_saw_it() -> None:
    status = ApplicationStatus(processing_digest="k1")
    seen = T0 - timedelta(seconds=1)
    observe(status, [item("Deployment", "web", 0, True)], NOTHING, dataclasses.replace(facts(0.0, "ready"), seen=seen))
    status.processing_digest = "k2"  # a ClusterProfile changed: the generation, and its first sight, are the same
    observe(status, [item("Deployment", "web", 0, True)], NOTHING, dataclasses.replace(facts(60.0), seen=seen))
    assert (status.timeline or [])[1].started == "2026-12-06T12:01:00.000Z"
