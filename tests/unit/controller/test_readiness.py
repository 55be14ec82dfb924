"""Readiness wake-ups (docs/operator.md#readiness-wake-ups): which events wake which Application, and
which waiting passes may sleep until then. The watch threads themselves run against the local
control plane in the e2e tests."""

from __future__ import annotations

from typing import Any

import pytest

from oam_operator.controller.reconcile.passes import apply_pass
from oam_operator.controller.reconcile.readiness import (
    INSTANT,
    WATCHED,
    WATCHED_WAIT,
    no_longer_progressing,
    waits_for_wake_up,
)
from oam_operator.controller.reconcile.seams import Memory
from oam_operator.controller.service.ownedwatch import OwnedObjects
from oam_operator.reconciler.inventory import Phase
from oam_operator.reconciler.report import CallReport
from oam_operator.reconciler.status import DefaultStatusAnalyzer
from tests.unit.unitkit import FakeReconciler, application, fake_reconciler, item_of, pass_environment

__all__ = ["fake_reconciler"]

DOMAIN = "oam-operator.dev"


def deployment(*, available: bool, owner: str | None = "cluster-1/shop/web", generation: int = 1) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "web", "namespace": "shop", "generation": generation}
    if owner is not None:
        meta["annotations"] = {f"{DOMAIN}/owner-id": owner}
    replicas = 1 if available else 0
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {"replicas": 1},
            "status": {"observedGeneration": generation, "replicas": 1, "updatedReplicas": 1,
                       "readyReplicas": replicas, "availableReplicas": replicas,
                       "conditions": [{"type": "Available", "status": "True" if available else "False"}]}}


def watch_of(seen: list[tuple[str, str, bool]], namespaces: tuple[str, ...] = ()) -> OwnedObjects:
    return OwnedObjects(client=None, domain=DOMAIN, cluster_id="cluster-1",  # type: ignore[arg-type]
                        namespaces=namespaces, on_change=lambda ns, name, key, obj, deleted: seen.append((ns, name, deleted)))


CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "shop"}}


@pytest.mark.parametrize(("event", "seen"), [
    ({"type": "MODIFIED", "object": deployment(available=True)}, [("shop", "web", False)]),
    ({"type": "ADDED", "object": deployment(available=False)}, [("shop", "web", False)]),
    ({"type": "DELETED", "object": deployment(available=False)}, [("shop", "web", True)]),
    ({"type": "MODIFIED", "object": deployment(available=True, owner="cluster-2/shop/web")}, []),
    ({"type": "MODIFIED", "object": deployment(available=True, owner=None)}, []),
    ({"type": "MODIFIED", "object": deployment(available=True, owner="cluster-1/shop")}, []),
    ({"type": "MODIFIED", "object": "not an object"}, []),
], ids=["modified", "added", "deleted", "other-cluster", "not-ours", "malformed-owner", "no-object"])
def test_an_event_reaches_the_owner_of_its_object(event: dict[str, Any], seen: list[tuple[str, str, bool]]) -> None:
    got: list[tuple[str, str, bool]] = []
    watch_of(got).handle(event)
    assert got == seen


@pytest.mark.parametrize(("obj", "deleted", "woken"), [
    (deployment(available=True), False, True),
    (deployment(available=False), False, False),
    (deployment(available=False), True, True),
    (deployment(available=True, generation=2) | {"status": {"observedGeneration": 1}}, False, False),
    (CONFIGMAP, False, False),  # Ready whenever it exists: its creation is no news for a waiting pass
    (CONFIGMAP, True, True),
], ids=["ready", "progressing", "deleted", "not-observed-yet", "configmap", "configmap-deleted"])
def test_an_owner_is_woken_once_its_object_is_no_longer_progressing(obj: dict[str, Any], deleted: bool,
                                                                   woken: bool) -> None:
    assert no_longer_progressing(obj, deleted, DefaultStatusAnalyzer(DOMAIN)) is woken


def test_a_kind_counts_as_watched_only_while_every_scope_is_followed() -> None:
    watch = watch_of([], namespaces=("a", "b"))
    deployments = WATCHED[0]
    assert not watch.watched("apps", "Deployment")
    assert watch._register(deployments)
    watch._mark(deployments, "a", True, "synced")
    assert not watch.watched("apps", "Deployment")
    watch._mark(deployments, "b", True, "synced")
    assert watch.watched("apps", "Deployment")
    assert not watch.watched("apps", "StatefulSet")
    watch._mark(deployments, "a", False, "down")  # that watch is down: its objects could change unseen
    assert not watch.watched("apps", "Deployment")


def test_watched_kinds_and_paths() -> None:
    assert [(k.group, k.kind) for k in WATCHED] == [("apps", "Deployment"), ("apps", "StatefulSet"),
                                                    ("apps", "DaemonSet"), ("batch", "Job")]
    assert WATCHED[0].path("") == "/apis/apps/v1/deployments"
    assert WATCHED[3].path("shop") == "/apis/batch/v1/namespaces/shop/jobs"
    assert {("", "ConfigMap"), ("", "Secret"), ("batch", "CronJob")} == INSTANT


def _deployments_only(group: str, kind: str) -> bool:
    return (group, kind) == ("apps", "Deployment")


@pytest.mark.parametrize(("pending", "waits"), [
    ([("apps", "Deployment")], True),
    ([("", "ConfigMap"), ("apps", "Deployment"), ("", "Secret")], True),
    ([("", "ConfigMap")], False),  # nothing to be woken by: the next read finds it Ready
    ([("apps", "Deployment"), ("", "Service")], False),  # a Service's readiness is not watched
    ([("apps", "StatefulSet")], False),
    ([], False),
])
def test_which_waiting_passes_sleep_until_woken(pending: list[tuple[str, str]], waits: bool) -> None:
    assert waits_for_wake_up(pending, _deployments_only) is waits


def test_a_pass_pending_only_on_watched_configmaps_does_not_wait_for_a_wake_up() -> None:
    """ConfigMaps are watched from the start, but their events wake nobody: such a pass keeps the
    backoff, and its next read (from the watch) finds them Ready."""
    assert waits_for_wake_up([("", "ConfigMap"), ("", "ConfigMap")], lambda group, kind: True) is False
    assert waits_for_wake_up([("", "ConfigMap"), ("apps", "Deployment")], lambda group, kind: True) is True


WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"}}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"}}


@pytest.mark.parametrize(("waiting_on", "delay"), [
    (WEB, WATCHED_WAIT),
    (SERVICE, 0.05),  # the first step of the Processing backoff
], ids=["watched", "not-watched"])
def test_a_pass_waiting_only_for_watched_objects_sleeps_until_woken(
    fake_reconciler: FakeReconciler, waiting_on: dict[str, Any], delay: float
) -> None:
    fake_reconciler.done = False
    fake_reconciler.report = CallReport("waiting", wave=0, pending=(
        (item_of(waiting_on, Phase.CREATING, "InProgress"), "InProgress"),))
    env = pass_environment()
    env.watched = _deployments_only
    result = apply_pass(application(), Memory(), env)
    assert (result.outcome, result.delay) == ("progressing", delay)


def test_without_the_watch_a_waiting_pass_keeps_the_backoff(fake_reconciler: FakeReconciler) -> None:
    fake_reconciler.done = False
    fake_reconciler.report = CallReport("waiting", wave=0, pending=((item_of(WEB, Phase.CREATING, "InProgress"),
                                                                     "InProgress"),))
    result = apply_pass(application(), Memory(), pass_environment())
    assert result.delay == 0.05
