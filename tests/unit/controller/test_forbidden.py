"""A 403 is retried quietly for a few seconds before it is an error (docs/operator.md#a-403-in-the-first-seconds):
the classification on a fake clock, then what a pass makes of it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from oam_operator.controller.reconcile.forbidden import GRACE, ForbiddenGrace
from oam_operator.controller.reconcile.seams import Memory
from oam_operator.reconciler.errors import PermanentApiError
from tests.unit.unitkit import (
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

__all__ = ["fake_reconciler"]  # the fixture, imported for pytest

FORBIDDEN = ('error reading object /v1, Kind=ConfigMap shop/web-config: 403 Forbidden: configmaps "web-config" is '
             'forbidden: User "system:serviceaccount:shop:default" cannot get resource "configmaps" in API group "" '
             'in the namespace "shop"')
SECOND = timedelta(seconds=1)


def forbidden() -> PermanentApiError:
    return PermanentApiError(FORBIDDEN, status=403, reason="Forbidden", verb="get")


# -- the classification ----------------------------------------------------------------------------


T0 = NOW.timestamp()


def test_the_first_403_opens_the_window_and_it_closes_after_the_grace() -> None:
    grace = ForbiddenGrace()
    assert grace.quiet(T0)
    assert grace.quiet(T0 + GRACE - 0.001)
    assert not grace.quiet(T0 + GRACE)
    assert not grace.quiet(T0 + GRACE + 600)  # the run goes on: no new window


def test_a_pass_without_a_403_closes_the_run_and_the_next_403_is_quiet_again() -> None:
    grace = ForbiddenGrace()
    grace.quiet(T0)
    assert not grace.quiet(T0 + 2 * GRACE)
    grace.reset()
    assert grace.quiet(T0 + 3 * GRACE)
    assert grace.quiet(T0 + 3 * GRACE + 1)


def test_a_clock_that_went_back_opens_a_new_window() -> None:
    grace = ForbiddenGrace()
    grace.quiet(T0)
    assert grace.quiet(T0 - 60)
    assert grace.since == T0 - 60


# -- the passes --------------------------------------------------------------------------------------


def _ready_status(fake: FakeReconciler, clock: Clock) -> dict[str, Any]:
    """The status of a first pass that reached Ready."""
    return run_apply(application(), Memory(), pass_environment(clock=clock)).status


def test_a_403_within_the_grace_leaves_the_status_and_is_retried_on_the_backoff(
    fake_reconciler: FakeReconciler,
) -> None:
    clock = Clock()
    env = pass_environment(clock=clock)
    ready = _ready_status(fake_reconciler, clock)
    fake_reconciler.error = forbidden()
    memory = Memory()
    delays = []
    for _ in range(4):
        result = run_apply(application(status=ready), memory, env)
        assert result.status == ready  # no state, condition or Event of its own: nothing to write
        assert (result.outcome, result.error_type) == ("pending", None)
        delays.append(result.delay)
        clock.advance(SECOND)
    assert delays == [0.05, 0.1, 0.2, 0.4]


VERBS = "get, list, create, update, patch, delete"


def test_a_403_past_the_grace_is_not_permitted_naming_all_that_is_missing(fake_reconciler: FakeReconciler) -> None:
    """docs/operator.md#not-permitted-and-the-role-it-needs: one review per verb and resource type
    of the objects, as the Application's identity; the message names every denied one."""
    clock = Clock()
    env = pass_environment(clock=clock)
    ready = _ready_status(fake_reconciler, clock)
    fake_reconciler.error = forbidden()
    fake_reconciler.client.denied = {("", "configmaps", verb) for verb in ("get", "patch")}
    memory = Memory()
    run_apply(application(status=ready), memory, env)
    assert fake_reconciler.client.reviews == []  # a quiet retry asks nothing
    clock.advance(timedelta(seconds=GRACE))
    result = run_apply(application(status=ready), memory, env)
    assert outcome(result.status) == (
        "Error", "NotPermitted",
        "ServiceAccount shop/default may not get, patch configmaps in namespace shop; the Application's objects "
        "need it. `oam-operator rbac web -n shop` prints a Role and RoleBinding that grant it")
    assert result.status["summary"] == "Not permitted; see: oam-operator rbac web -n shop"
    assert (result.outcome, result.error_type, result.delay) == ("error", "403", 5.0)
    assert sorted(fake_reconciler.client.reviews, key=lambda review: review["verb"]) == [
        {"verb": verb, "group": "", "resource": "configmaps", "namespace": "shop"} for verb in sorted(VERBS.split(", "))]


def test_without_a_finding_of_the_reviews_it_is_an_api_error_with_the_api_servers_text(
    fake_reconciler: FakeReconciler,
) -> None:
    """Nothing the reviews deny (an escalation RBAC refused, a request outside the objects' verbs),
    or reviews that fail: no Role would help, so the API server's 403 stands as it is."""
    for review_error in (None, PermanentApiError("403 Forbidden", status=403, reason="Forbidden", verb="create")):
        clock = Clock()
        env = pass_environment(clock=clock)
        ready = _ready_status(fake_reconciler, clock)
        fake_reconciler.error = forbidden()
        fake_reconciler.client.review_error = review_error
        memory = Memory()
        run_apply(application(status=ready), memory, env)
        clock.advance(timedelta(seconds=GRACE))
        result = run_apply(application(status=ready), memory, env)
        assert outcome(result.status) == ("Error", "ApiError", FORBIDDEN[0].upper() + FORBIDDEN[1:])
        assert (result.outcome, result.error_type, result.delay) == ("error", "403", 5.0)
        fake_reconciler.error = None


def test_a_pass_that_gets_through_starts_a_new_grace_for_the_next_403(fake_reconciler: FakeReconciler) -> None:
    clock = Clock()
    env = pass_environment(clock=clock)
    ready = _ready_status(fake_reconciler, clock)
    memory = Memory()
    fake_reconciler.error = forbidden()
    run_apply(application(status=ready), memory, env)
    clock.advance(timedelta(seconds=GRACE))
    fake_reconciler.error = None
    assert outcome(run_apply(application(status=ready), memory, env).status)[0] == "Ready"
    clock.advance(timedelta(minutes=5))
    fake_reconciler.error = forbidden()
    assert run_apply(application(status=ready), memory, env).status == ready


def test_other_permanent_errors_have_no_grace(fake_reconciler: FakeReconciler) -> None:
    clock = Clock()
    ready = _ready_status(fake_reconciler, clock)
    fake_reconciler.error = PermanentApiError("422 Unprocessable Entity: spec.x: Invalid value", status=422,
                                              reason="Invalid", verb="apply")
    result = run_apply(application(status=ready), Memory(), pass_environment(clock=clock))
    assert outcome(result.status)[:2] == ("Error", "ApiError")


def test_a_quiet_403_keeps_the_state_of_the_last_pass(fake_reconciler: FakeReconciler) -> None:
    """A new generation restarts processing first; a 403 on its apply leaves that state."""
    clock = Clock()
    env = pass_environment(clock=clock)
    ready = _ready_status(fake_reconciler, clock)
    changed = {"generation": 3, "components": [configmap_component(object_name="other")]}
    restarted = run_apply(application(status=ready, **changed), Memory(), env).status
    assert outcome(restarted)[:2] == ("Processing", "Restarting")
    fake_reconciler.error = forbidden()
    result = run_apply(application(status=restarted, **changed), Memory(), env)
    assert outcome(result.status) == outcome(restarted)
    assert result.status["observedGeneration"] == 3


def test_a_quiet_403_on_a_first_pass_leaves_it_first_seen(fake_reconciler: FakeReconciler) -> None:
    fake_reconciler.error = forbidden()
    result = run_apply(application(), Memory(), pass_environment())
    assert outcome(result.status) == ("Pending", "FirstSeen", "First seen")
    assert "observedGeneration" not in result.status


def test_a_403_while_deleting_is_quiet_within_the_grace_too(fake_reconciler: FakeReconciler) -> None:
    clock = Clock()
    env = pass_environment(clock=clock, use_operator_identity=True)
    status = {"observedGeneration": 1, "state": "Ready", "compactInventory": compact(item_of(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web-config", "namespace": "shop"}})),
        "objects": 1, "readyObjects": 1}
    fake_reconciler.error = forbidden()
    memory = Memory()
    quiet = run_delete(application(deleting=True, status=status), memory, env)
    assert (quiet.status.get("state"), quiet.outcome) == ("Ready", "pending")
    clock.advance(timedelta(seconds=GRACE))
    loud = run_delete(application(deleting=True, status=status), memory, env)
    assert outcome(loud.status)[:2] == ("Error", "ApiError")


GUARD = ('error listing sealedsecrets in all namespaces: 403 Forbidden: sealedsecrets.bitnami.com is forbidden: User '
         '"system:serviceaccount:shop:default" cannot list resource "sealedsecrets" in API group "bitnami.com" at the '
         'cluster scope')


def test_a_deletion_that_may_not_list_a_crds_instances_names_the_grant_and_backs_off(
    fake_reconciler: FakeReconciler,
) -> None:
    """docs/operator.md#not-permitted-and-the-role-it-needs: the deletion guard lists each owned
    CRD's instances in all namespaces; past the grace the refusal names exactly that, and the
    passes after it wait the error backoff (5 s, 10 s, 20 s), not the quiet retries' 50 ms."""
    clock = Clock()
    env = pass_environment(clock=clock, use_operator_identity=True)
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "sealedsecrets.bitnami.com"}}
    status = {"observedGeneration": 1, "state": "Ready", "compactInventory": compact(item_of(crd)),
              "objects": 1, "readyObjects": 1}
    fake_reconciler.error = PermanentApiError(GUARD, status=403, reason="Forbidden", verb="list")
    fake_reconciler.client.denied = {("bitnami.com", "sealedsecrets", "list")}
    memory = Memory()
    run_delete(application(deleting=True, status=status), memory, env)
    delays = []
    for _ in range(3):
        clock.advance(timedelta(seconds=GRACE))
        result = run_delete(application(deleting=True, status=status), memory, env)
        delays.append(result.delay)
    assert outcome(result.status) == (
        "Error", "NotPermitted",
        "ServiceAccount shop/default may not list sealedsecrets.bitnami.com in all namespaces; the Application's "
        "deletion needs it. `oam-operator rbac web -n shop` prints a Role and RoleBinding that grant it")
    assert (result.outcome, result.error_type) == ("error", "403")
    assert delays == [5.0, 10.0, 20.0]
    assert {(r["group"], r["resource"], r["verb"]) for r in fake_reconciler.client.reviews} == {
        ("bitnami.com", "sealedsecrets", "list"),
        *{("apiextensions.k8s.io", "customresourcedefinitions", verb) for verb in ("get", "list", "patch", "delete")}}
