"""Finished Jobs are finished (docs/operator.md#finished-jobs, issue 37): a Job the watch saw
deleted after it completed — by its ``ttlSecondsAfterFinished``, by anyone — is ``Completed`` in
the pass's inventory, so ``apply()`` does not create it again; it is no drift (no Event, no
``status.drift``). The watch keeps that knowledge from the deletion event's last state, since
with a TTL of 0 the Job is gone before any pass reads it complete."""

from __future__ import annotations

from typing import Any

import pytest

from oam_operator.api.compact_inventory import decode
from oam_operator.controller.reconcile.digest import component_digest
from oam_operator.controller.reconcile.passes import apply_pass
from oam_operator.controller.reconcile.seams import Environment, Memory
from oam_operator.controller.service.ownedwatch import Drift, OwnedObjects, WatchedKind
from oam_operator.reconciler.inventory import Phase
from oam_operator.reconciler.objects import ObjectRef
from tests.unit import unitkit
from tests.unit.unitkit import DOMAIN, FakeReconciler, application, compact, fake_reconciler, item_of, pass_environment

__all__ = ["fake_reconciler"]

JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate", "namespace": "shop"},
       "spec": {"ttlSecondsAfterFinished": 0, "template": {"spec": {
           "restartPolicy": "Never", "containers": [{"name": "main", "image": "registry.invalid/job:1"}]}}}}
JOBS = WatchedKind("batch", "v1", "jobs", "Job")


def with_job(phase: Phase, status: str) -> dict[str, Any]:
    body = application(components=[{"name": "migrate", "type": "passthrough", "properties": {"object": JOB}}])
    digest = component_digest(DOMAIN, body["spec"], "", None)
    body["status"] = {"observedGeneration": 2, "processingDigest": digest, "lastProcessingDigest": digest,
                      "revision": 1, "state": "Processing", "appliedGeneration": 2, "profile": "",
                      "compactInventory": compact(item_of(JOB, phase, status))}
    return body


def environment(drift: Drift) -> Environment:
    env = pass_environment()
    env.drift = lambda group, kind, namespace, name: drift if (kind, name) == ("Job", "migrate") else None
    return env


def test_a_job_deleted_after_it_completed_is_completed_not_drift(fake_reconciler: FakeReconciler) -> None:
    """Created by the last pass (``Creating``): the watch saw it complete and deleted before any
    pass read it."""
    result = apply_pass(with_job(Phase.CREATING, "InProgress"), Memory(),
                        environment(Drift(deleted=True, completed=True)))
    [handed] = fake_reconciler.inventories[0]
    assert (handed.phase, handed.status) == (Phase.COMPLETED, "")
    assert fake_reconciler.holds == [set()]
    assert [(i["name"], i.get("phase")) for i in decode(result.status["compactInventory"])] == [
        ("migrate", "Completed")]
    assert result.events == [] and result.drift_corrections == 0
    assert "drift" not in result.status
    assert result.status["state"] == "Ready"


def test_a_job_ready_when_it_was_deleted_completed_even_without_its_last_state(
        fake_reconciler: FakeReconciler) -> None:
    """A relist's stub of a deletion carries no state: a Job item Ready and Current was complete."""
    result = apply_pass(with_job(Phase.READY, "Current"), Memory(), environment(Drift(deleted=True)))
    assert fake_reconciler.inventories[0][0].phase is Phase.COMPLETED
    assert result.events == []


def test_a_job_deleted_while_it_ran_is_created_again_as_drift(fake_reconciler: FakeReconciler) -> None:
    result = apply_pass(with_job(Phase.CREATING, "InProgress"), Memory(), environment(Drift(deleted=True)))
    [handed] = fake_reconciler.inventories[0]
    assert handed.phase is Phase.CREATING and handed.last_applied_at is None  # due: created again
    assert [(e.reason, e.message) for e in result.events] == [
        ("DriftCorrected", "Corrected drift: Job migrate (deleted)")]


def job_event(event: str, status: dict[str, Any]) -> dict[str, Any]:
    obj = {**JOB, "metadata": {**JOB["metadata"], "annotations": {f"{DOMAIN}/owner-id": "c/shop/web"},
                               "resourceVersion": "7"}, "status": status}
    return {"type": event, "object": obj}


def test_the_watch_keeps_whether_a_deleted_job_had_completed() -> None:
    owned = OwnedObjects(None, domain=DOMAIN, cluster_id="c", namespaces=("shop",),  # type: ignore[arg-type]
                         on_change=lambda *_: None)
    owned._register(JOBS)
    owned._mark(JOBS, "shop", True, "synced")
    complete = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
    owned.handle(job_event("ADDED", {"active": 1}))
    owned.handle(job_event("DELETED", complete))  # its TTL
    assert owned.drift("batch", "Job", "shop", "migrate") == Drift(deleted=True, completed=True)
    owned.handle(job_event("ADDED", {"active": 1}))
    owned.handle(job_event("DELETED", {"active": 1}))  # by hand, while it ran
    assert owned.drift("batch", "Job", "shop", "migrate") == Drift(deleted=True)


def test_a_relist_keeps_whether_a_job_gone_meanwhile_had_completed() -> None:
    class Pages:
        def __init__(self) -> None:
            self.items: list[dict[str, Any]] = []

        def request(self, *_: Any, **__: Any) -> dict[str, Any]:
            return {"items": self.items, "metadata": {"resourceVersion": "42"}}

    pages = Pages()
    owned = OwnedObjects(pages, domain=DOMAIN, cluster_id="c", namespaces=("shop",),  # type: ignore[arg-type]
                         on_change=lambda *_: None)
    owned._register(JOBS)
    pages.items = [job_event("ADDED", {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]})[
        "object"]]
    owned._list(JOBS, "shop", JOBS.path("shop"))
    pages.items = []  # completed, then deleted while the watch was down
    owned._list(JOBS, "shop", JOBS.path("shop"))
    owned._mark(JOBS, "shop", True, "synced")
    assert owned.drift("batch", "Job", "shop", "migrate") == Drift(deleted=True, completed=True)


def test_the_reconciler_asks_the_watch_before_it_creates_a_job_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A deletion between ``prepare_drift`` and the read that finds the Job gone is covered too:
    the reconciler's ``completed`` option asks the watch at that moment."""
    built: list[Any] = []

    def build(domain: str, client: Any, options: Any) -> FakeReconciler:
        built.append(options)
        return FakeReconciler()

    monkeypatch.setattr(unitkit, "_injected_reconciler", build)
    apply_pass(with_job(Phase.CREATING, "InProgress"), Memory(), environment(Drift(deleted=True, completed=True)))
    completed = built[0].completed
    assert completed(ObjectRef("batch", "v1", "Job", "shop", "migrate")) is True
    assert completed(ObjectRef("batch", "v1", "Job", "shop", "other")) is False
    apply_pass(with_job(Phase.CREATING, "InProgress"), Memory(), environment(Drift(deleted=True)))
    assert built[1].completed(ObjectRef("batch", "v1", "Job", "shop", "migrate")) is False
