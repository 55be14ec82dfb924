"""Lifecycle hooks in the pass, step by step (docs/operator.md#lifecycle-hooks): a run is recorded
in ``status.hooks`` before its object is created; after a crash a created hook is neither created
again nor skipped; PreApply comes before the reconciler's first write, PostReady before Ready,
PreDelete before any delete; a failed hook is ``Error``/``HookFailed`` and runs OnFailure once."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest

from oam_operator.api.compact_inventory import decode
from oam_operator.controller.reconcile.passes import apply_pass, delete_pass
from oam_operator.controller.reconcile.permissions import guess_resource
from oam_operator.controller.reconcile.seams import Memory, PassResult
from oam_operator.controller.reconcile.statuswriter import remember
from oam_operator.controller.reconcile.tenancy import TenantClients
from oam_operator.reconciler.discovery import ApiResource
from oam_operator.reconciler.identity import split_api_version
from tests.unit.unitkit import (
    DOMAIN,
    Clock,
    FakeReconciler,
    application,
    configmap_component,
    fake_reconciler,
    outcome,
    pass_environment,
)

__all__ = ["fake_reconciler"]

COMPLETE = {"conditions": [{"type": "Complete", "status": "True"}]}
FAILED = {"conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                          "message": "Job has reached the specified backoff limit"}]}


def hook_job(name: str, phase: str, **annotations: str) -> dict[str, Any]:
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": name, "annotations": {f"{DOMAIN}/hook": phase, **annotations}},
           "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "m", "image": "x"}]}}}}
    return {"name": name, "type": "passthrough", "properties": {"object": job}}


@dataclass
class Cluster:
    """The hooks' objects as the API server holds them, and every write in one log shared with
    the reconciler's calls and the checkpoints."""

    log: list[str]
    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    impersonated_user: str | None = None

    def resource_for(self, api_version: str, kind: str) -> ApiResource:
        guessed = guess_resource(api_version, kind)
        group, version = split_api_version(api_version)
        return ApiResource(group, version, kind, guessed.plural, guessed.namespaced, ())

    def get(self, resource: ApiResource, namespace: str, name: str) -> dict[str, Any] | None:
        found = self.objects.get(name)
        return copy.deepcopy(found) if found is not None else None

    def create(self, resource: ApiResource, namespace: str, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        name = body["metadata"]["name"]
        self.log.append(f"create {name} ({body['metadata']['annotations'][f'{DOMAIN}/hook-run']})")
        self.objects[name] = copy.deepcopy(body)
        return body

    def delete(self, resource: ApiResource, namespace: str, name: str, **_: Any) -> bool:
        self.log.append(f"delete {name}")
        return self.objects.pop(name, None) is not None

    def finish(self, name: str, status: dict[str, Any]) -> None:
        self.objects[name]["status"] = status


@dataclass
class Checkpoints:
    log: list[str]
    written: list[dict[str, Any]] = field(default_factory=list)

    def checkpoint(self, status: dict[str, Any]) -> None:
        self.log.append("checkpoint " + ",".join(f"{h['phase']}:{h['name']}:{h['state']}"
                                                 for h in status.get("hooks") or []))
        self.written.append(copy.deepcopy(status))


@pytest.fixture
def world(fake_reconciler: FakeReconciler) -> tuple[FakeReconciler, Cluster, Checkpoints]:
    log: list[str] = []
    cluster = Cluster(log)
    fake_reconciler.client = cluster  # type: ignore[assignment]
    original = fake_reconciler.apply

    def apply(*args: Any, **kwargs: Any) -> bool:
        log.append("apply")
        return original(*args, **kwargs)

    fake_reconciler.apply = apply  # type: ignore[method-assign]
    return fake_reconciler, cluster, Checkpoints(log)


def step(body: dict[str, Any], memory: Memory, clock: Clock, checkpoints: Checkpoints | None,
         deleting: bool = False) -> PassResult:
    """One pass; the body takes the status it wrote, as the next pass reads it."""
    env = pass_environment(clock=clock)
    run = delete_pass if deleting else apply_pass
    result = run(body, memory, env, checkpoints)
    remember(memory, result)
    body["status"] = copy.deepcopy(result.status)
    return result


def hooks_of(result: PassResult) -> list[tuple[str, str, str, str]]:
    return [(h["phase"], h["name"], h["run"], h["state"]) for h in result.status.get("hooks") or []]


def test_pre_apply_is_recorded_then_created_and_completes_before_the_first_write(world: Any) -> None:
    _, cluster, checkpoints = world
    body = application(components=[configmap_component(), hook_job("migrate", "PreApply")])
    memory, clock = Memory(), Clock()
    result = step(body, memory, clock, checkpoints)
    assert cluster.log == ["checkpoint PreApply:migrate:Recorded", "create migrate (PreApply r1)"]
    assert outcome(result.status) == ("Processing", "Processing",
                                      "Waiting for PreApply hooks to complete: Job migrate")
    assert hooks_of(result) == [("PreApply", "migrate", "r1", "Running")]
    step(body, memory, clock, checkpoints)
    assert cluster.log[2:] == []  # still running: looked at, nothing written
    cluster.finish("migrate", COMPLETE)
    result = step(body, memory, clock, checkpoints)
    assert cluster.log[2:4] == ["apply", "checkpoint PreApply:migrate:Succeeded"]  # the inventory's checkpoint
    assert [(i["kind"], i["name"]) for i in decode(result.status["compactInventory"])] == [
        ("ConfigMap", "web-config")]  # the hook is no inventory item: never re-applied, pruned or corrected
    assert result.status["state"] == "Ready"
    assert hooks_of(result) == [("PreApply", "migrate", "r1", "Succeeded")]
    step(body, memory, clock, checkpoints)  # Ready again: the hook is not run again
    assert [line for line in cluster.log if line.startswith("create")] == ["create migrate (PreApply r1)"]


def test_a_hook_created_before_a_crash_is_not_created_again(world: Any) -> None:
    """The record says ``Recorded`` (the crash came before the pass's end); the object carries its run."""
    _, cluster, checkpoints = world
    body = application(components=[hook_job("migrate", "PreApply")])
    memory, clock = Memory(), Clock()
    step(body, memory, clock, checkpoints)
    step(body, memory, clock, checkpoints)
    crashed = application(components=[hook_job("migrate", "PreApply")], status=checkpoints.written[-1])
    result = step(crashed, Memory(), clock, checkpoints)
    assert [line for line in cluster.log if line.startswith("create")] == ["create migrate (PreApply r1)"]
    assert hooks_of(result) == [("PreApply", "migrate", "r1", "Running")]


def test_a_hook_recorded_but_not_created_before_a_crash_is_created(world: Any) -> None:
    _, cluster, checkpoints = world
    body = application(components=[hook_job("migrate", "PreApply")])
    memory, clock = Memory(), Clock()
    step(body, memory, clock, checkpoints)
    step(body, memory, clock, checkpoints)
    cluster.objects.clear()  # as if the create never reached the API server
    crashed = application(components=[hook_job("migrate", "PreApply")], status=checkpoints.written[-1])
    step(crashed, Memory(), clock, checkpoints)
    assert [line for line in cluster.log if line.startswith("create")] == ["create migrate (PreApply r1)"] * 2


def test_without_a_checkpoint_writer_the_record_ends_the_pass(world: Any) -> None:
    _, cluster, _ = world
    body = application(components=[hook_job("migrate", "PreApply")])
    memory, clock = Memory(), Clock()
    result = step(body, memory, clock, None)
    assert cluster.log == []
    assert hooks_of(result) == [("PreApply", "migrate", "r1", "Recorded")]
    step(body, memory, clock, None)
    assert cluster.log == ["create migrate (PreApply r1)"]


def test_a_failed_hook_is_hook_failed_and_runs_on_failure_once(world: Any) -> None:
    _, cluster, checkpoints = world
    body = application(components=[hook_job("migrate", "PreApply"), hook_job("alert", "OnFailure")])
    memory, clock = Memory(), Clock()
    step(body, memory, clock, checkpoints)
    step(body, memory, clock, checkpoints)
    cluster.finish("migrate", FAILED)
    result = step(body, memory, clock, checkpoints)
    assert outcome(result.status) == ("Error", "HookFailed", "PreApply hook Job migrate failed: Job has reached "
                                                             "the specified backoff limit")
    assert "apply" not in cluster.log
    step(body, memory, clock, checkpoints)
    assert [line for line in cluster.log if line.startswith("create")] == ["create migrate (PreApply r1)",
                                                                            "create alert (OnFailure r1)"]


def test_a_hook_that_does_not_finish_in_its_timeout_fails(world: Any) -> None:
    _, _, checkpoints = world
    body = application(components=[hook_job("migrate", "PreApply", **{f"{DOMAIN}/hook-timeout": "1m"})])
    memory, clock = Memory(), Clock()
    step(body, memory, clock, checkpoints)
    step(body, memory, clock, checkpoints)
    clock.advance(timedelta(seconds=61))
    result = step(body, memory, clock, checkpoints)
    assert outcome(result.status) == ("Error", "HookFailed", "PreApply hook Job migrate failed: not finished "
                                                             "within 1m")


def test_post_ready_runs_after_the_waves_and_ready_waits_for_it(world: Any) -> None:
    _, cluster, checkpoints = world
    body = application(components=[configmap_component(), hook_job("smoke", "PostReady",
                                                                   **{f"{DOMAIN}/hook-delete-policy": "OnSuccess"})])
    memory, clock = Memory(), Clock()
    step(body, memory, clock, checkpoints)
    result = step(body, memory, clock, checkpoints)
    assert cluster.log[0] == "apply" and "create smoke (PostReady r1)" in cluster.log
    assert cluster.log.index("create smoke (PostReady r1)") > cluster.log.index("apply")
    assert outcome(result.status) == ("Processing", "Processing", "Waiting for PostReady hooks to complete: Job smoke")
    cluster.finish("smoke", COMPLETE)
    result = step(body, memory, clock, checkpoints)
    assert outcome(result.status) == ("Ready", "Ready", "Applied revision 1: 1 objects ready")
    assert cluster.log[-1] == "delete smoke"  # its delete policy: OnSuccess


def test_pre_delete_completes_before_any_delete(world: Any) -> None:
    reconciler, cluster, checkpoints = world
    reconciler.deleted = True
    components = [configmap_component(), hook_job("backup", "PreDelete")]
    body = application(components=components)
    memory, clock = Memory(), Clock()
    step(body, memory, clock, checkpoints)
    step(body, memory, clock, checkpoints)
    deleting = application(components=components, status=body["status"], deleting=True)
    cluster.log.clear()
    result = step(deleting, memory, clock, checkpoints, deleting=True)
    assert cluster.log == ["checkpoint PreDelete:backup:Recorded", "create backup (PreDelete delete)"]
    assert outcome(result.status) == ("Deleting", "DeletionProcessing",
                                      "Waiting for PreDelete hooks to complete: Job backup")
    assert "delete" not in reconciler.calls
    cluster.finish("backup", COMPLETE)
    result = step(deleting, memory, clock, checkpoints, deleting=True)
    assert reconciler.calls[-1] == "delete" and result.finished
    assert cluster.log[-1] == "delete backup"  # BeforeNextRun: no next run after the deletion


def test_pre_delete_created_before_a_crash_is_not_created_again(world: Any) -> None:
    reconciler, cluster, checkpoints = world
    components = [configmap_component(), hook_job("backup", "PreDelete")]
    body = application(components=components)
    memory, clock = Memory(), Clock()
    step(body, memory, clock, checkpoints)
    step(body, memory, clock, checkpoints)
    deleting = application(components=components, status=body["status"], deleting=True)
    step(deleting, memory, clock, checkpoints, deleting=True)
    crashed = application(components=components, status=checkpoints.written[-1], deleting=True)
    result = step(crashed, Memory(), clock, checkpoints, deleting=True)
    assert [line for line in cluster.log if line.startswith("create")] == ["create backup (PreDelete delete)"]
    assert "delete" not in reconciler.calls
    assert hooks_of(result) == [("PreDelete", "backup", "delete", "Running")]


def test_one_object_of_two_phases_runs_once_for_each(world: Any) -> None:
    """PreDelete then PostDelete: the PreDelete run's object is no PostDelete run; it is deleted
    (BeforeNextRun) and created again."""
    reconciler, cluster, checkpoints = world
    reconciler.deleted = True
    components = [configmap_component(), hook_job("notify", "PreDelete,PostDelete")]
    body = application(components=components)
    memory, clock = Memory(), Clock()
    step(body, memory, clock, checkpoints)
    deleting = application(components=components, status=body["status"], deleting=True)
    cluster.log.clear()
    step(deleting, memory, clock, checkpoints, deleting=True)
    cluster.finish("notify", COMPLETE)
    step(deleting, memory, clock, checkpoints, deleting=True)  # deletes; PostDelete clears the way
    step(deleting, memory, clock, checkpoints, deleting=True)  # PostDelete created
    cluster.finish("notify", COMPLETE)
    result = step(deleting, memory, clock, checkpoints, deleting=True)
    assert [line for line in cluster.log if not line.startswith("checkpoint")] == [
        "create notify (PreDelete delete)", "delete notify", "create notify (PostDelete delete)", "delete notify"]
    assert result.finished


def test_on_failure_runs_for_a_revision_that_ran_out_of_time(world: Any) -> None:
    reconciler, cluster, checkpoints = world
    reconciler.done = False  # never Ready
    body = application(components=[configmap_component(), hook_job("alert", "OnFailure")], timeout="30s")
    memory, clock = Memory(), Clock()
    step(body, memory, clock, checkpoints)
    assert cluster.log.count("create alert (OnFailure r1)") == 0
    clock.advance(timedelta(seconds=31))
    result = step(body, memory, clock, checkpoints)
    assert outcome(result.status)[:2] == ("Error", "Timeout")
    step(body, memory, clock, checkpoints)
    assert [line for line in cluster.log if line.startswith("create")] == ["create alert (OnFailure r1)"]


def test_a_rollback_runs_pre_apply_again_before_the_restored_objects(world: Any) -> None:
    """docs/operator.md#automatic-rollback: the restore is a new revision, so its PreApply runs
    (the failed revision's Job is deleted first, BeforeNextRun) before the restored spec is applied."""
    from tests.unit.controller.test_change_window_pass import component, steady
    from tests.unit.controller.test_rollback_pass import ROLLBACK, History, settle

    reconciler, cluster, _ = world
    applied: list[str] = []
    recording = reconciler.apply

    def apply(inventory: Any, objects: list[dict[str, Any]], *args: Any, **kwargs: Any) -> bool:
        applied.extend(o["data"]["k"] for o in objects)
        return recording(inventory, objects, *args, **kwargs)

    reconciler.apply = apply
    clock, history = Clock(), History()
    env = pass_environment(clock=clock)
    env.clients = TenantClients(history)  # type: ignore[arg-type]
    good = steady(ROLLBACK, timeout="30s")
    good["spec"]["components"].append(hook_job("migrate", "PreApply"))
    good["status"]["hooks"] = [{"phase": "PreApply", "apiVersion": "batch/v1", "kind": "Job", "namespace": "shop",
                                "name": "migrate", "run": "r1", "state": "Succeeded", "deletePolicy": "BeforeNextRun",
                                "timeout": "30s"}]
    history.add(1, good["spec"], "Ready")
    body = application(components=[component("w"), hook_job("migrate", "PreApply")], generation=3,
                       policies=[ROLLBACK], timeout="30s")
    body["status"] = good["status"]
    history.add(2, body["spec"], "Processing")
    memory = Memory()
    settle(body, memory, env)
    assert cluster.log == ["create migrate (PreApply r2)"] and applied == []
    cluster.finish("migrate", COMPLETE)
    reconciler.done = False
    settle(body, memory, env)
    assert applied == ["w"]
    clock.advance(timedelta(seconds=31))
    rolled = settle(body, memory, env)  # timed out, rolled back; the restore's PreApply clears the way first
    assert rolled.status["rolledBack"]["restores"] == 1
    written = [line for line in cluster.log if line != "apply"]
    assert written == ["create migrate (PreApply r2)", "delete migrate"] and applied == ["w", "w"]
    settle(body, memory, env)
    written = [line for line in cluster.log if line != "apply"]
    assert written[2:] == ["create migrate (PreApply r3)"] and applied == ["w", "w"]
    cluster.finish("migrate", COMPLETE)
    reconciler.done = True
    restored = settle(body, memory, env)
    assert applied[-1] == "v" and outcome(restored.status)[:2] == ("Error", "RolledBack")
