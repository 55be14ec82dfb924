"""Drift while a new revision is held by closed change windows (docs/operator.md#change-windows):
the applied revision's recorded spec is applied instead, with its own digest, so its drift is
corrected (or, with ``driftWhileClosed: Report``, reported) while the pass still says
``Waiting``/``ChangeWindowClosed``; without the record nothing is applied, as before."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from oam_operator.controller.reconcile.seams import Environment, Memory
from oam_operator.controller.reconcile.tenancy import TenantClients
from tests.unit.controller.test_change_window_pass import (
    DENY_NOON,
    HELD,
    IMAGE,
    TWO_HOURS,
    changed,
    drifting,
    passes_until_settled,
    steady,
    window_policy,
)
from tests.unit.controller.test_rollback_pass import History
from tests.unit.unitkit import DOMAIN, NOW, FakeReconciler, fake_reconciler, outcome

__all__ = ["fake_reconciler"]


def recorded(fake: FakeReconciler) -> list[tuple[str, str]]:
    """Make ``fake.apply`` record each call's ConfigMap data and component digest."""
    calls: list[tuple[str, str]] = []
    apply = fake.apply

    def recording(inventory: Any, objects: list[dict[str, Any]], namespace: str, owner_id: str, digest: str,
                  **kwargs: Any) -> bool:
        calls.append((objects[0]["data"]["k"], digest))
        return apply(inventory, objects, namespace, owner_id, digest, **kwargs)

    fake.apply = recording  # type: ignore[method-assign]
    return calls


def held_change(drift: str | None = None, record: bool = True) -> tuple[dict[str, Any], Environment]:
    """Revision 1 (data ``v``) applied and recorded, its ConfigMap drifted, and a spec change to
    ``w`` while the deny window is closed."""
    applied = steady(window_policy(DENY_NOON, drift=drift))
    history = History()
    if record:
        history.add(1, applied["spec"], "Ready")
    env = drifting()
    env.clients = TenantClients(history)  # type: ignore[arg-type]
    return changed(applied, "w"), env


def test_drift_is_corrected_with_the_applied_revision_while_a_new_one_is_held(
        fake_reconciler: FakeReconciler) -> None:
    body, env = held_change()
    digest = body["status"]["lastProcessingDigest"]
    calls = recorded(fake_reconciler)
    held = passes_until_settled(body, Memory(), env)
    assert calls == [("v", digest)]  # revision 1's data and digest: the held revision writes nothing
    assert fake_reconciler.inventories[0][0].last_applied_at is None  # due: re-applied, forced
    assert held.drift_corrections == 1
    assert outcome(held.status) == ("Waiting", "ChangeWindowClosed", HELD)
    assert held.delay == TWO_HOURS
    assert held.status["revision"] == 1 and held.status["lastProcessingDigest"] == digest
    assert held.status["processingDigest"] != digest
    assert "drift" not in held.status


def test_drift_is_reported_while_a_new_revision_is_held_with_the_switch_off(
        fake_reconciler: FakeReconciler) -> None:
    body, env = held_change(drift="Report")
    held = passes_until_settled(body, Memory(), env)
    assert fake_reconciler.inventories[0][0].last_applied_at == NOW - timedelta(minutes=1)  # not re-applied
    assert held.drift_corrections == 0
    assert outcome(held.status) == ("Waiting", "ChangeWindowClosed", HELD)
    drifted = next(c for c in held.status["conditions"] if c["type"] == "Drifted")
    assert drifted["message"] == (f"ConfigMap web-config ({IMAGE}) changed by another field manager; left as it "
                                  "is while the change window is closed (driftWhileClosed: Report)")
    assert held.delay == TWO_HOURS


def test_without_the_applied_revisions_record_nothing_is_applied_while_held(
        fake_reconciler: FakeReconciler) -> None:
    body, env = held_change(record=False)
    held = passes_until_settled(body, Memory(), env)
    assert fake_reconciler.calls == []
    assert outcome(held.status) == ("Waiting", "ChangeWindowClosed", HELD)


def test_a_reconcile_request_while_held_re_applies_the_applied_revision(fake_reconciler: FakeReconciler) -> None:
    body, env = held_change()
    env.drift = None  # nothing drifted: the request alone makes every object due
    body["metadata"]["annotations"] = {f"{DOMAIN}/requested-at": "now"}
    calls = recorded(fake_reconciler)
    held = passes_until_settled(body, Memory(), env)
    assert calls == [("v", body["status"]["lastProcessingDigest"])]
    assert fake_reconciler.inventories[0][0].last_applied_at is None  # due: re-applied
    assert held.status["lastHandledReconcileAt"] == "now"
    assert outcome(held.status) == ("Waiting", "ChangeWindowClosed", HELD)
