"""Lifecycle hooks on the full control plane (issue 40; docs/operator.md#lifecycle-hooks).

A full control plane of this module's own, with the audit log on (the shared one has none): the
Job controller and kwok run the hooks' Jobs to completion. Read from the audit log:

- the order: the PreApply Job is created, completes, and only then is the first object of the
  first wave written; the PostReady Job is created after the last wave's object, and the
  Application turns Ready only once it completed. Both Jobs are created suspended and let run
  by the test once the hold is seen in the status (``Waiting for … hooks to complete``);
- the crash: the operator is SIGKILLed as soon as the PreDelete Job exists, and started again.
  The Job is created suspended, so it cannot complete before the test lets it: the restarted
  operator waits for it (no delete of anything while it is suspended), creates no second one,
  and deletes the objects only after it completed.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from e2ekit import DOMAIN, GROUP, VERSION, Kube, OperatorProcess, Plane, audited_plane, condition, sleep_briefly
from kubernetes import client

from tools.devcluster.pytest_plugin import default_wait, wait_until

HELD = 5.0  # seconds the suspended PreDelete Job is left waiting: no delete may come meanwhile



@dataclass(frozen=True)
class Write:
    verb: str
    resource: str
    subresource: str
    name: str
    at: datetime
    by_operator: bool
    code: int

    @property
    def succeeded(self) -> bool:
        return 200 <= self.code < 300


@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    with audited_plane(tmp_path_factory.mktemp("hooks")) as started:
        yield started


@pytest.fixture
def start_operator(plane: Plane, tmp_path: Path, request: pytest.FixtureRequest
                   ) -> Iterator[Callable[[str], OperatorProcess]]:
    """Starts an operator of one namespace (again after a kill); all are stopped at the end."""
    started: list[OperatorProcess] = []

    def start(namespace: str) -> OperatorProcess:
        operator = OperatorProcess.start(
            tmp_path / f"operator-{len(started)}.log", kubeconfig=plane.handle.kubeconfig, namespaces=[namespace],
            operator_namespace=namespace,
            extra=["--use-operator-identity", "--default-interval", "30s", "--no-leader-election"])
        started.append(operator)
        operator.wait_serving(default_wait(plane.handle), leader_gauge=False)
        return operator

    try:
        yield start
    finally:
        for operator in started:
            if operator.alive():
                operator.stop()
        if getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed:
            for operator in started:
                sys.stderr.write(f"\n--- {operator.log_path.name} ---\n{operator.log_path.read_text()[-6000:]}\n")


def kube_in(plane: Plane, namespace: str) -> Kube:
    kube = Kube(plane.api, namespace, plane.handle)
    kube.core.create_namespace({"metadata": {"name": namespace}})
    return kube


def writes(plane: Plane, namespace: str) -> list[Write]:
    """The write requests of ``namespace`` the API server answered, refused ones too (a second
    create of a Job that exists is a 409: an attempt all the same); it flushes within a second."""
    time.sleep(1.0)
    found = []
    for line in plane.audit_log.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        ref = event.get("objectRef") or {}
        code = int((event.get("responseStatus") or {}).get("code", 0))
        if (event.get("stage") != "ResponseComplete" or ref.get("namespace") != namespace
                or event.get("verb") not in ("create", "update", "patch", "delete")):
            continue
        found.append(Write(event["verb"], ref.get("resource", ""), ref.get("subresource", ""), ref.get("name", ""),
                           datetime.fromisoformat(event["stageTimestamp"].replace("Z", "+00:00")),
                           str(event.get("userAgent") or "").startswith("oam-operator/"), code))
    return found


def first(found: list[Write], **match: Any) -> Write:
    """The first successful write that matches."""
    return next(w for w in found if w.succeeded and all(getattr(w, key) == value for key, value in match.items()))


def hook_job(name: str, phase: str, *, suspend: bool = False) -> dict[str, Any]:
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": name, "annotations": {f"{DOMAIN}/hook": phase,
                                                      f"{DOMAIN}/hook-delete-policy": "Never"}},
           "spec": {"suspend": suspend, "backoffLimit": 0, "template": {"spec": {
               "restartPolicy": "Never", "containers": [{"name": "main", "image": "registry.invalid/job:1"}]}}}}
    return {"name": name, "type": "passthrough", "properties": {"object": job}}


def config(name: str, wave: int) -> dict[str, Any]:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": name},
           "metadata": {"name": name, "annotations": {f"{DOMAIN}/apply-order": str(wave)}}}
    return {"name": name, "type": "passthrough", "properties": {"object": obj}}


def completed_at(kube: Kube, name: str) -> datetime:
    """When the Job's Complete condition turned True (whole seconds, as the API stores it)."""
    job = client.BatchV1Api(kube.api).read_namespaced_job(name, kube.namespace)
    [complete] = [c for c in job.status.conditions or [] if c.type == "Complete" and c.status == "True"]
    found: datetime = complete.last_transition_time
    return found


def saying(kube: Kube, name: str, message: str) -> dict[str, Any] | None:
    app = kube.app(name)
    ready = condition(app, "Ready") or {}
    return app if ready.get("message") == message else None


def test_pre_apply_before_the_first_wave_and_post_ready_before_ready(
        plane: Plane, start_operator: Callable[[str], OperatorProcess]) -> None:
    """Both Jobs are created suspended, so the test decides when each completes: the holds are
    seen, not raced, and the audit log gives the order."""
    kube = kube_in(plane, "hooks-order")
    batch = client.BatchV1Api(kube.api)
    start_operator(kube.namespace)
    kube.apply_app("shop", {"components": [config("first", 0), config("second", 1),
                                           hook_job("migrate", "PreApply", suspend=True),
                                           hook_job("smoke", "PostReady", suspend=True)]})
    wait = default_wait(plane.handle)
    waiting = wait_until(lambda: saying(kube, "shop", "Waiting for PreApply hooks to complete: Job migrate"), wait,
                         "the PreApply hook to hold the apply")
    assert waiting["status"]["state"] == "Processing"
    assert kube.core.list_namespaced_config_map(kube.namespace, field_selector="metadata.name=first").items == []
    batch.patch_namespaced_job("migrate", kube.namespace, {"spec": {"suspend": False}})
    waiting = wait_until(lambda: saying(kube, "shop", "Waiting for PostReady hooks to complete: Job smoke"), wait,
                         "the PostReady hook to hold Ready")
    assert waiting["status"]["state"] == "Processing" and waiting["status"]["readyObjects"] == 2
    batch.patch_namespaced_job("smoke", kube.namespace, {"spec": {"suspend": False}})
    app = kube.wait_ready("shop")
    ready_at = datetime.fromisoformat(condition(app, "Ready")["lastTransitionTime"].replace("Z", "+00:00"))  # type: ignore[index]
    assert [(h["phase"], h["name"], h["run"], h["state"]) for h in app["status"]["hooks"]] == [
        ("PreApply", "migrate", "r1", "Succeeded"), ("PostReady", "smoke", "r1", "Succeeded")]

    found = writes(plane, kube.namespace)
    migrate = first(found, verb="create", resource="jobs", name="migrate")
    first_wave = first(found, resource="configmaps", name="first", by_operator=True)
    second_wave = first(found, resource="configmaps", name="second", by_operator=True)
    smoke = first(found, verb="create", resource="jobs", name="smoke")
    migrated, smoked = completed_at(kube, "migrate"), completed_at(kube, "smoke")
    print(f"migrate created {migrate.at}, completed {migrated}, first wave written {first_wave.at}; "
          f"smoke created {smoke.at}, completed {smoked}, Ready {ready_at}")
    assert migrate.by_operator and smoke.by_operator
    assert migrate.at.replace(microsecond=0) <= migrated <= first_wave.at  # created < completes < first write
    completing = [w for w in found if (w.resource, w.subresource, w.name) == ("jobs", "status", "migrate")
                  and not w.by_operator and w.succeeded]
    assert completing and completing[-1].at < first_wave.at  # the Job controller's last word came before it
    assert first_wave.at < second_wave.at < smoke.at  # PostReady after every wave
    assert smoked <= ready_at  # Ready only after PostReady completed
    assert [(w.name, w.code) for w in found if w.verb == "create" and w.resource == "jobs"] == [
        ("migrate", 201), ("smoke", 201)]


def test_a_pre_delete_hook_survives_a_crash_and_holds_every_delete(
        plane: Plane, start_operator: Callable[[str], OperatorProcess]) -> None:
    kube = kube_in(plane, "hooks-crash")
    batch = client.BatchV1Api(kube.api)
    operator = start_operator(kube.namespace)
    kube.apply_app("shop", {"components": [config("data", 0), hook_job("backup", "PreDelete", suspend=True)]})
    kube.wait_ready("shop")
    kube.custom.delete_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications", "shop")

    def job_exists() -> bool:
        return any(j.metadata.name == "backup" for j in batch.list_namespaced_job(kube.namespace).items)

    wait_until(job_exists, default_wait(plane.handle), "the PreDelete Job to be created", step=0.02)
    operator.kill()
    start_operator(kube.namespace)
    kube.wait_state("shop", "Deleting", "DeletionProcessing")
    sleep_briefly(HELD)  # the Job is suspended: it cannot complete, so nothing may be deleted
    assert kube.core.read_namespaced_config_map("data", kube.namespace) is not None
    batch.patch_namespaced_job("backup", kube.namespace, {"spec": {"suspend": False}})
    wait_until(lambda: kube.app_or_none("shop") is None, default_wait(plane.handle), "the Application to be gone")

    found = writes(plane, kube.namespace)
    assert [(w.name, w.code) for w in found if w.verb == "create" and w.resource == "jobs"] == [("backup", 201)]
    done = completed_at(kube, "backup")  # delete policy Never: the Job is left for the test to read
    deletes = [w for w in found if w.verb == "delete" and w.by_operator and w.succeeded]
    print(f"backup completed {done}; the operator's deletes: {[(w.resource, w.name, str(w.at)) for w in deletes]}")
    assert [(w.resource, w.name) for w in deletes] == [("configmaps", "data")]
    assert all(w.at >= done for w in deletes)


def test_a_hook_is_created_with_the_applications_identity(
        plane: Plane, start_operator: Callable[[str], OperatorProcess]) -> None:
    """Tenancy (docs/operator.md#tenancy-and-impersonation): acting as the namespace's ``default``
    ServiceAccount, allowed ConfigMaps but not Jobs, the PreApply hook is ``NotPermitted`` naming
    Jobs and nothing is written; a grant of Jobs wakes it, and the Job is created as that account."""
    kube = kube_in(plane, "hooks-tenancy")
    ns = kube.namespace
    rbac = client.RbacAuthorizationV1Api(kube.api)
    verbs = ["get", "list", "watch", "create", "update", "patch", "delete"]

    def grant(name: str, group: str, resource: str) -> None:
        rbac.create_namespaced_role(ns, {"metadata": {"name": name}, "rules": [
            {"apiGroups": [group], "resources": [resource], "verbs": verbs}]})
        rbac.create_namespaced_role_binding(ns, {
            "metadata": {"name": name}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                                    "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": ns}]})

    grant("configmaps", "", "configmaps")
    operator = OperatorProcess.start(
        plane.audit_log.parent / "tenancy-operator.log", kubeconfig=plane.handle.kubeconfig, namespaces=[ns],
        operator_namespace=ns, extra=["--default-interval", "30s", "--no-leader-election"])
    try:
        operator.wait_serving(default_wait(plane.handle), leader_gauge=False)
        started = time.monotonic()
        kube.apply_app("shop", {"components": [config("data", 0), hook_job("migrate", "PreApply")]})
        app = kube.wait_state("shop", "Error", "NotPermitted")
        refused_after = time.monotonic() - started
        assert condition(app, "Ready")["message"] == (  # type: ignore[index]
            f"ServiceAccount {ns}/default may not get, list, create, update, patch, delete jobs.batch in namespace "
            f"{ns}; the Application's objects need it. `oam-operator rbac shop -n {ns}` prints a Role and "
            "RoleBinding that grant it")
        assert [w for w in writes(plane, ns) if w.by_operator and w.resource in ("jobs", "configmaps")] == []
        granted = time.monotonic()
        grant("jobs", "batch", "jobs")
        kube.wait_ready("shop")
        print(f"NotPermitted after {refused_after:.1f} s; Ready {time.monotonic() - granted:.1f} s after the grant")
    finally:
        operator.stop()
    created = [event for event in audit_events(plane, ns) if event.get("verb") == "create"
               and (event.get("objectRef") or {}).get("resource") == "jobs"
               and 200 <= int((event.get("responseStatus") or {}).get("code", 0)) < 300]
    assert [(e["objectRef"]["name"], (e.get("impersonatedUser") or {}).get("username")) for e in created] == [
        ("migrate", f"system:serviceaccount:{ns}:default")]


def audit_events(plane: Plane, namespace: str) -> list[dict[str, Any]]:
    """The raw ResponseComplete events of ``namespace`` (who sent them, as whom)."""
    time.sleep(1.0)
    found = []
    for line in plane.audit_log.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("stage") == "ResponseComplete" and (event.get("objectRef") or {}).get("namespace") == namespace:
            found.append(event)
    return found
