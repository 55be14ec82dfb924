"""A pass under change windows (docs/operator.md#change-windows), on a fake clock with a scripted
reconciler: a new revision writes nothing while closed (``Waiting``/``ChangeWindowClosed``, looked at
again when the windows open), lands once they are; drift is corrected while closed unless
``driftWhileClosed: Report``; deletion is not held; a ClusterProfile's windows apply too, and an
Application's can only narrow them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from oam_operator.api.summary import SUMMARY_WIDTH
from oam_operator.controller.reconcile.plan import digests_of
from oam_operator.controller.reconcile.seams import Environment, Memory, PassResult
from oam_operator.controller.service.ownedwatch import Drift
from oam_operator.operatorpolicies.change_window_clock import REASON, STATE
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
    run_apply,
    run_delete,
)

__all__ = ["fake_reconciler"]

# NOW is Sunday 2026-03-01 12:00 UTC.
CONFIG = configmap_component()["properties"]["object"] | {"metadata": {"name": "web-config", "namespace": "shop"}}
DENY_NOON = {"kind": "deny", "schedule": "0 12 * * *", "duration": "2h"}  # closed 12:00-14:00 UTC
HELD = ('Change window closed until 2026-03-01T14:00:00Z: deny window "0 12 * * *" for 2h (UTC) of policy '
        '"freeze"')
TWO_HOURS = 7200.0


def window_policy(*windows: dict[str, Any], drift: str | None = None) -> dict[str, Any]:
    props: dict[str, Any] = {"windows": list(windows)}
    if drift is not None:
        props["driftWhileClosed"] = drift
    return {"name": "freeze", "type": "change-window", "properties": props}


def component(value: str) -> dict[str, Any]:
    found = configmap_component()
    found["properties"]["object"]["data"] = {"k": value}
    return found


def steady(*policies: dict[str, Any], value: str = "v", profile: tuple[str, dict[str, Any]] | None = None,
           **spec: Any) -> dict[str, Any]:
    """A Ready Application whose ConfigMap (data ``k: value``) is applied, as a previous pass left it."""
    if profile is not None:
        spec["profile"] = profile[0]
    body = application(components=[component(value)], policies=list(policies), **spec)
    name, found = profile if profile is not None else ("", None)
    digest = digests_of(DOMAIN, body["spec"], 2, name, found).current
    body["status"] = {"observedGeneration": 2, "processingDigest": digest, "lastProcessingDigest": digest,
                      "revision": 1, "state": "Ready", "appliedGeneration": 2, "profile": name,
                      "compactInventory": compact(item_of(CONFIG))}
    return body


def changed(body: dict[str, Any], value: str) -> dict[str, Any]:
    """``body`` with a new spec (the ConfigMap's data), its status as it was: a new revision."""
    new = application(components=[component(value)], generation=3,
                      **{k: v for k, v in body["spec"].items() if k != "components"})
    new["status"] = body["status"]
    return new


def passes_until_settled(body: dict[str, Any], memory: Memory, env: Environment) -> PassResult:
    """Run passes as the loop does while a pass asks to run again at once (``Restarting``)."""
    while True:
        result = run_apply(body, memory, env)
        body["status"] = memory.status = result.status
        if result.delay != 0.0:
            return result


def profile_of(name: str, *windows: dict[str, Any], drift: str | None = None) -> dict[str, Any]:
    props: dict[str, Any] = {"windows": list(windows)}
    if drift is not None:
        props["driftWhileClosed"] = drift
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "ClusterProfile", "metadata": {"name": name},
            "spec": {"changeWindows": props}}


def test_a_spec_change_while_closed_writes_nothing_and_looks_again_at_the_opening(
        fake_reconciler: FakeReconciler) -> None:
    clock = Clock()
    env, memory = pass_environment(clock=clock), Memory()
    body = changed(steady(window_policy(DENY_NOON)), "w")
    held = passes_until_settled(body, memory, env)
    assert fake_reconciler.calls == []  # no object read or written
    assert outcome(held.status) == (STATE, REASON, HELD) == ("Waiting", "ChangeWindowClosed", HELD)
    assert held.delay == TWO_HOURS  # wake_at - now, not jittered: no busy polling
    assert held.status["summary"].startswith("Change window closed until 2026-03-01T14:00:00Z")
    assert len(held.status["summary"]) <= SUMMARY_WIDTH
    assert held.status["compactInventory"] == compact(item_of(CONFIG))  # kept as it is: nothing pruned
    assert held.status["revision"] == 1 and held.status["observedGeneration"] == 3
    ready = {c["type"]: c["status"] for c in held.status["conditions"]}
    assert ready == {"Ready": "Unknown", "Reconciling": "True"}

    clock.advance(timedelta(minutes=59))
    again = passes_until_settled(body, memory, env)  # woken early (a watch, a profile): still held
    assert fake_reconciler.calls == [] and again.delay == TWO_HOURS - 59 * 60

    clock.advance(timedelta(minutes=61))  # 14:00: open
    landed = passes_until_settled(body, memory, env)
    assert fake_reconciler.calls == ["apply"]
    assert fake_reconciler.inventories and landed.status["revision"] == 2
    assert outcome(landed.status) == ("Ready", "Ready", "Applied revision 2: 1 objects ready")


def test_a_new_application_is_a_change_too(fake_reconciler: FakeReconciler) -> None:
    body = application(policies=[window_policy(DENY_NOON)])
    held = passes_until_settled(body, Memory(), pass_environment())
    assert fake_reconciler.calls == []
    assert outcome(held.status) == ("Waiting", "ChangeWindowClosed", HELD)
    assert "compactInventory" not in held.status or held.status["compactInventory"] == compact()


def test_an_open_window_lets_the_change_land(fake_reconciler: FakeReconciler) -> None:
    allow_noon = {"kind": "allow", "schedule": "0 12 * * *", "duration": "2h"}
    body = changed(steady(window_policy(allow_noon)), "w")
    landed = passes_until_settled(body, Memory(), pass_environment())
    assert fake_reconciler.calls == ["apply"]
    assert outcome(landed.status) == ("Ready", "Ready", "Applied revision 2: 1 objects ready")


def test_a_reconcile_request_does_not_lift_the_window(fake_reconciler: FakeReconciler) -> None:
    body = changed(steady(window_policy(DENY_NOON)), "w")
    body["metadata"]["annotations"] = {f"{DOMAIN}/requested-at": "now"}
    held = passes_until_settled(body, Memory(), pass_environment())
    assert fake_reconciler.calls == []
    assert outcome(held.status)[1] == "ChangeWindowClosed"
    assert "lastHandledReconcileAt" not in held.status  # handled when the change lands


def test_lifting_the_own_window_lands_at_once(fake_reconciler: FakeReconciler) -> None:
    """The windows of the revision about to land decide: a spec that drops the policy lands."""
    body = changed(steady(window_policy(DENY_NOON)), "w")
    body["spec"]["policies"] = []
    passes_until_settled(body, Memory(), pass_environment())
    assert fake_reconciler.calls == ["apply"]


IMAGE = "spec.template.spec.containers[name=web].image"


def drifting(clock: Clock | None = None) -> Environment:
    env = pass_environment(clock=clock)
    env.drift = lambda group, kind, namespace, name: Drift((IMAGE,)) if name == "web-config" else None
    return env


def test_drift_while_closed_is_corrected_by_default(fake_reconciler: FakeReconciler) -> None:
    result = run_apply(steady(window_policy(DENY_NOON)), Memory(), drifting())
    assert fake_reconciler.calls == ["apply"]
    assert fake_reconciler.inventories[0][0].last_applied_at is None  # due: re-applied, forced
    assert result.drift_corrections == 1
    assert outcome(result.status) == ("Ready", "Ready", "Applied revision 1: 1 objects ready")


def test_drift_while_closed_is_reported_with_the_switch_off_until_the_opening(
        fake_reconciler: FakeReconciler) -> None:
    clock = Clock()
    memory, env = Memory(), drifting(clock)
    body = steady(window_policy({"kind": "deny", "schedule": "0 12 * * *", "duration": "5m"}, drift="Report"))
    reported = run_apply(body, memory, env)
    assert fake_reconciler.inventories[0][0].last_applied_at == NOW - timedelta(minutes=1)  # not re-applied
    assert reported.drift_corrections == 0
    message = (f"ConfigMap web-config ({IMAGE}) changed by another field manager; left as it is while the change "
               "window is closed (driftWhileClosed: Report)")
    drifted = next(c for c in reported.status["conditions"] if c["type"] == "Drifted")
    assert (drifted["reason"], drifted["message"]) == ("DriftDetected", message)
    assert reported.status["summary"] == f"Drifted: ConfigMap web-config ({IMAGE})"  # without the tail
    assert reported.delay == 300.0  # looked at again when the window opens (12:05), before the 10m interval
    clock.advance(timedelta(minutes=5))
    body["status"] = reported.status
    corrected = run_apply(body, memory, env)
    assert corrected.drift_corrections == 1 and "drift" not in corrected.status


def test_deletion_is_not_held(fake_reconciler: FakeReconciler) -> None:
    body = steady(window_policy(DENY_NOON))
    body["metadata"] |= {"deletionTimestamp": "2026-03-01T12:00:00Z", "finalizers": [DOMAIN]}
    fake_reconciler.deleted = True
    result = run_delete(body, Memory(), pass_environment())
    assert fake_reconciler.calls == ["is_deletion_allowed", "delete"]
    assert result.finished


ALLOW_NOON = {"kind": "allow", "schedule": "0 12 * * *", "duration": "2h"}
ALLOW_EVENING = {"kind": "allow", "schedule": "0 18 * * *", "duration": "2h"}


@pytest.mark.parametrize(("profile_windows", "own_windows", "message"), [
    pytest.param([DENY_NOON], [{"kind": "allow", "schedule": "0 10 * * *", "duration": "6h"}],
                 'Change window closed until 2026-03-01T14:00:00Z: deny window "0 12 * * *" for 2h (UTC) of '
                 'ClusterProfile "prod"', id="the Application's allow window does not open the profile's deny"),
    pytest.param([ALLOW_EVENING], [],
                 'Change window closed until 2026-03-01T18:00:00Z: outside the allow windows of ClusterProfile "prod"',
                 id="the profile's allow windows alone"),
    pytest.param([ALLOW_NOON], [ALLOW_EVENING],
                 'Change window closed with no opening before 2027-03-02T12:00:00Z: outside the allow windows of '
                 'policy "freeze"', id="the Application's narrow the profile's: never both open"),
])
def test_a_profiles_windows_apply_and_the_applications_only_narrow_them(
        profile_windows: list[dict[str, Any]], own_windows: list[dict[str, Any]], message: str,
        fake_reconciler: FakeReconciler) -> None:
    prod = profile_of("prod", *profile_windows)
    policies = [window_policy(*own_windows)] if own_windows else []
    body = changed(steady(*policies, profile=("prod", prod)), "w")
    held = passes_until_settled(body, Memory(), pass_environment(profiles={"prod": prod}))
    assert fake_reconciler.calls == []
    assert outcome(held.status) == ("Waiting", "ChangeWindowClosed", message)


def test_a_profiles_open_windows_let_the_change_land(fake_reconciler: FakeReconciler) -> None:
    prod = profile_of("prod", ALLOW_NOON)
    body = changed(steady(profile=("prod", prod)), "w")
    landed = passes_until_settled(body, Memory(), pass_environment(profiles={"prod": prod}))
    assert fake_reconciler.calls == ["apply"] and outcome(landed.status)[0] == "Ready"


def test_changing_a_profiles_windows_is_no_new_revision(fake_reconciler: FakeReconciler) -> None:
    prod = profile_of("prod", ALLOW_NOON)
    body = steady(profile=("prod", prod))
    wider = profile_of("prod", ALLOW_NOON, ALLOW_EVENING)
    result = passes_until_settled(body, Memory(), pass_environment(profiles={"prod": wider}))
    assert result.status["revision"] == 1 and outcome(result.status)[0] == "Ready"


def test_a_profile_with_bad_windows_refuses_its_applications(fake_reconciler: FakeReconciler) -> None:
    prod = profile_of("prod", {"kind": "deny", "schedule": "0 25 * * *", "duration": "2h"})
    body = changed(steady(profile=("prod", prod)), "w")
    refused = passes_until_settled(body, Memory(), pass_environment(profiles={"prod": prod}))
    assert fake_reconciler.calls == []
    assert outcome(refused.status) == (
        "Error", "TransformFailed",
        'ClusterProfile "prod": spec.changeWindows.windows[0].schedule "0 25 * * *" is not a cron schedule: its '
        'hour field "25" is not 0-23 (or *, a list, a range or a step of them)')
