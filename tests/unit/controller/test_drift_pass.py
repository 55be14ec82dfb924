"""What a pass does about drift (controller/reconcile/drift.py, docs/operator.md#drift), step by step on a fixed
clock with a scripted reconciler and a scripted watch: ``Correct`` re-applies and says so once,
``Report`` leaves the change and shows it, a fight with another controller is held back."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from oam_operator.controller.reconcile.digest import component_digest
from oam_operator.controller.reconcile.seams import Environment, Memory, PassResult
from oam_operator.controller.service.ownedwatch import Drift
from oam_operator.reconciler.inventory import Phase
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
    pass_environment,
    run_apply,
    stamp,
)

__all__ = ["fake_reconciler"]

CONFIG = configmap_component()["properties"]["object"] | {"metadata": {"name": "web-config", "namespace": "shop"}}
IMAGE = "spec.template.spec.containers[name=web].image"


def steady(**spec: Any) -> dict[str, Any]:
    """A Ready Application whose one ConfigMap is in the inventory, as a previous pass left it."""
    body = application(**spec)
    digest = component_digest(DOMAIN, body["spec"], "", None)
    body["status"] = {"observedGeneration": 2, "processingDigest": digest, "lastProcessingDigest": digest,
                      "revision": 1, "state": "Ready", "appliedGeneration": 2, "profile": "",
                      "compactInventory": compact(item_of(CONFIG))}
    return body


def environment(drift: Drift | None, clock: Clock | None = None) -> Environment:
    env = pass_environment(clock=clock)
    env.drift = lambda group, kind, namespace, name: drift if (kind, name) == ("ConfigMap", "web-config") else None
    return env


def conditions(result: PassResult) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in result.status["conditions"]}


def events(result: PassResult) -> list[tuple[str, str, str]]:
    return [(e.type, e.reason, e.message) for e in result.events]


def test_correct_re_applies_a_drifted_object_and_says_so_once(fake_reconciler: FakeReconciler) -> None:
    result = run_apply(steady(), Memory(), environment(Drift((IMAGE,))))
    assert fake_reconciler.inventories[0][0].last_applied_at is None  # due: re-applied, forced
    assert events(result) == [("Normal", "DriftCorrected", f"Corrected drift: ConfigMap web-config ({IMAGE})")]
    assert result.drift_corrections == 1
    assert "drift" not in result.status and "Drifted" not in conditions(result)
    assert result.status["summary"] == "Applied revision 1: 1 objects ready"


def test_a_deleted_object_is_due_so_it_is_created_again_or_updated(fake_reconciler: FakeReconciler) -> None:
    """Deleted, the reconciler creates it again; only out of the watch's selector (its shard label
    taken off, docs/operator.md#watches-of-owned-objects), being due, it is updated back into it."""
    result = run_apply(steady(), Memory(), environment(Drift(deleted=True)))
    assert fake_reconciler.inventories[0][0].last_applied_at is None
    assert events(result) == [("Normal", "DriftCorrected", "Corrected drift: ConfigMap web-config (deleted)")]


def test_report_leaves_the_change_and_shows_it(fake_reconciler: FakeReconciler) -> None:
    memory, env = Memory(), environment(Drift((IMAGE, "metadata.labels.tier")))
    first = run_apply(steady(drift="Report"), memory, env)
    assert fake_reconciler.inventories[0][0].last_applied_at == NOW - timedelta(minutes=1)  # not re-applied
    message = (f"ConfigMap web-config ({IMAGE}, metadata.labels.tier) changed by another field manager; "
               "left as it is (spec.drift: Report)")
    assert first.status["drift"] == [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "shop",
                                      "name": "web-config", "fields": [IMAGE, "metadata.labels.tier"]}]
    assert conditions(first)["Drifted"] == ("True", "DriftDetected", message)
    assert conditions(first)["Ready"][:2] == ("True", "Ready")
    assert first.status["state"] == "Ready"
    assert first.status["summary"] == "Drifted: ConfigMap web-config (…containers[name=web].image…"  # the field shown
    assert events(first) == [("Warning", "DriftDetected", message)]
    assert first.drift_corrections == 0

    body = steady(drift="Report")
    body["status"] = first.status
    again = run_apply(body, Memory(status=first.status), env)
    assert events(again) == []  # the same episode: one Event
    assert again.status["drift"] == first.status["drift"]

    env.drift = lambda *_: None  # resolved (the field given back, or the Application changed)
    body["status"] = again.status
    resolved = run_apply(body, Memory(status=again.status), env)
    assert "drift" not in resolved.status and "Drifted" not in conditions(resolved)
    assert resolved.status["summary"] == "Applied revision 1: 1 objects ready"


def test_report_holds_off_the_reapply_interval_of_a_drifted_object(fake_reconciler: FakeReconciler) -> None:
    body = steady(drift="Report")
    old = item_of(CONFIG)
    old.last_applied_at = NOW - timedelta(hours=2)  # the 60m reapply would force it back now
    body["status"]["compactInventory"] = compact(old)
    run_apply(body, Memory(), environment(Drift((IMAGE,))))
    assert fake_reconciler.inventories[0][0].last_applied_at == NOW


def test_a_fight_with_another_controller_is_held_back_and_reported(fake_reconciler: FakeReconciler) -> None:
    clock = Clock()
    memory, env = Memory(), environment(Drift(("spec.replicas",)), clock)
    outcomes = []
    for _ in range(3):
        outcomes.append(run_apply(steady(), memory, env))
        clock.advance(timedelta(seconds=10))
    assert [r.drift_corrections for r in outcomes] == [1, 1, 1]
    held = outcomes[2]
    until = stamp(NOW + timedelta(seconds=20 + 60))
    assert held.status["drift"] == [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "shop",
                                     "name": "web-config", "fields": ["spec.replicas"], "heldUntil": until}]
    message = ("ConfigMap web-config (spec.replicas) kept drifting right after each correction (3 corrections "
               "within 1m): another controller sets these fields; correcting again in 1m")
    assert conditions(held)["Drifted"] == ("True", "DriftFlapping", message)
    assert ("Warning", "DriftFlapping", message) in events(held)

    fourth = run_apply(steady(), memory, env)  # held: not re-applied, no write loop
    assert fake_reconciler.inventories[3][0].last_applied_at is not None
    assert fourth.drift_corrections == 0
    clock.advance(timedelta(seconds=61))
    fifth = run_apply(steady(), memory, env)  # the hold is over: corrected again
    assert fifth.drift_corrections == 1 and fake_reconciler.inventories[4][0].last_applied_at is None


def test_without_a_watch_nothing_is_known_of_drift(fake_reconciler: FakeReconciler) -> None:
    result = run_apply(steady(), Memory(), pass_environment())
    assert (events(result), result.drift_corrections) == ([], 0)
    assert fake_reconciler.inventories[0][0].last_applied_at == NOW - timedelta(minutes=1)


WEB_CONFIG = ("", "ConfigMap", "shop", "web-config")


def test_an_object_deleted_right_after_each_creation_is_held_back_and_reported(
        fake_reconciler: FakeReconciler) -> None:
    """Issue 37: deletions are a fight too, whatever the item's phase (here it never got Ready):
    the third creation within the window holds the next ones back, with the same report, and the
    Ready pass comes back when the hold ends, since no event will."""
    clock = Clock()
    memory, env = Memory(), environment(Drift(deleted=True), clock)
    body = steady()
    creating = item_of(CONFIG, Phase.CREATING, "InProgress")
    body["status"]["compactInventory"] = compact(creating)
    outcomes = []
    for _ in range(3):
        outcomes.append(run_apply(body, memory, env))
        clock.advance(timedelta(seconds=10))
    assert [r.drift_corrections for r in outcomes] == [1, 1, 1]
    assert fake_reconciler.holds == [set(), set(), set()]
    held = outcomes[2]
    until = stamp(NOW + timedelta(seconds=20 + 60))
    assert held.status["drift"] == [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "shop",
                                     "name": "web-config", "deleted": True, "heldUntil": until}]
    message = ("ConfigMap web-config (deleted) kept drifting right after each correction (3 corrections "
               "within 1m): another controller deletes these objects; correcting again in 1m")
    assert conditions(held)["Drifted"] == ("True", "DriftFlapping", message)
    assert ("Warning", "DriftFlapping", message) in events(held)
    assert held.delay == 60.0  # the interval is 10m: back when the hold ends

    fourth = run_apply(body, memory, env)  # held: not created, no write loop
    assert fake_reconciler.holds[3] == {WEB_CONFIG}
    assert fourth.drift_corrections == 0 and fourth.delay == 50.0
    clock.advance(timedelta(seconds=51))
    fifth = run_apply(body, memory, env)  # the hold is over: created again
    assert fake_reconciler.holds[4] == set() and fifth.drift_corrections == 1


def test_under_report_a_deleted_object_is_created_again_and_its_fight_held_back_too(
        fake_reconciler: FakeReconciler) -> None:
    clock = Clock()
    memory, env = Memory(), environment(Drift(deleted=True), clock)
    outcomes = []
    for _ in range(4):
        outcomes.append(run_apply(steady(drift="Report"), memory, env))
        clock.advance(timedelta(seconds=10))
    assert fake_reconciler.holds == [set(), set(), set(), {WEB_CONFIG}]
    assert conditions(outcomes[0])["Drifted"][1] == "DriftDetected"
    assert conditions(outcomes[2])["Drifted"][1:] == ("DriftFlapping", (
        "ConfigMap web-config (deleted) kept drifting right after each correction (3 corrections within 1m): "
        "another controller deletes these objects; correcting again in 1m"))


def test_a_fight_over_fields_and_deletions_says_both() -> None:
    from oam_operator.controller.reconcile.drift import Drifted, drifted_condition

    fields = Drifted(item_of(CONFIG), Drift((IMAGE,)), NOW + timedelta(minutes=1))
    deleted = Drifted(item_of(CONFIG | {"metadata": {"name": "other", "namespace": "shop"}}), Drift(deleted=True),
                      NOW + timedelta(minutes=1))
    reason, message = drifted_condition([fields, deleted], "shop", NOW)
    assert (reason, message) == ("DriftFlapping", (
        f"ConfigMap web-config ({IMAGE}); ConfigMap other (deleted) kept drifting right after each correction "
        "(3 corrections within 1m): another controller sets these fields or deletes these objects; "
        "correcting again in 1m"))
