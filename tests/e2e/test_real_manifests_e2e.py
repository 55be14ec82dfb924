"""Real manifests nobody on the project wrote (issue 37): ingress-nginx's official static manifest
(``data/ingress-nginx/deploy.yaml``, pinned; see its README) as a ``manifests`` Application.

Its two admission Jobs have ``ttlSecondsAfterFinished: 0``: the TTL controller deletes each as
soon as it completes. The operator used to create them again at once, for ever (602 creates in
5 minutes, the Application flapping between Ready and Processing). Finished Jobs are finished
(docs/operator.md#finished-jobs): the Application reaches Ready once and stays Ready, and the
API server's audit log shows each Job created exactly once (and deleted once, by the TTL
controller, so it did complete) over 2 minutes. A reconcile request then re-applies every
object, which the API server finds unchanged: ``oam-operator reconcile --wait`` never shows
Processing (docs/reconciler.md#a-no-op-write) and creates no Job; nor does a restarted operator,
which knows from the inventory alone. Another object deleted by hand is created again, as before.

A full control plane of this module's own, with the audit log on (the shared one has none): the
Job controller and kwok run the Jobs' Pods to Succeeded, the TTL controller deletes the Jobs. The
operator watches every namespace, with the cluster-scoped and cross-namespace objects the
manifest needs allowed, as an installation for such a manifest would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2ekit import DOMAIN, Kube, OperatorProcess, Plane, audited_plane, condition, inventory

from tools.devcluster.pytest_plugin import default_wait, wait_until

MANIFEST = Path(__file__).resolve().parent / "data" / "ingress-nginx" / "deploy.yaml"
TARGET = "ingress-nginx"  # the manifest's namespace
JOBS = ("ingress-nginx-admission-create", "ingress-nginx-admission-patch")
WINDOW = 120.0  # seconds the Application is watched after it is Ready



@pytest.fixture(scope="module")
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plane]:
    with audited_plane(tmp_path_factory.mktemp("real-manifests")) as started:
        yield started


@pytest.fixture
def start_operator(plane: Plane, tmp_path: Path, request: pytest.FixtureRequest
                   ) -> Iterator[Callable[[], OperatorProcess]]:
    """Starts an operator of every namespace (again after a restart); all are stopped at the end."""
    started: list[OperatorProcess] = []

    def start() -> OperatorProcess:
        operator = OperatorProcess.start(
            tmp_path / f"operator-{len(started)}.log", kubeconfig=plane.handle.kubeconfig, operator_namespace="apps",
            extra=["--use-operator-identity", "--default-interval", "30s", "--allow-cluster-scoped-objects",
                   "--allow-cross-namespace-objects"])
        started.append(operator)
        operator.wait_serving(default_wait(plane.handle), leader_gauge=False)  # the liveness endpoint
        return operator

    try:
        yield start
    finally:
        for operator in started:
            operator.stop()
        if getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed:
            for operator in started:
                sys.stderr.write(f"\n--- {operator.log_path.name} ---\n{operator.log_path.read_text()[-6000:]}\n")


def audit_events(plane: Plane) -> list[dict[str, Any]]:
    """The completed requests the API server recorded (it flushes its buffer within a second)."""
    time.sleep(1.0)
    events = []
    for line in plane.audit_log.read_text(errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("stage") == "ResponseComplete":
            events.append(event)
    return events


def test_ingress_nginx_is_ready_once_and_its_jobs_run_once(
        plane: Plane, start_operator: Callable[[], OperatorProcess], tmp_path: Path) -> None:
    operator = start_operator()
    kube = Kube(plane.api, "apps", plane.handle)
    kube.core.create_namespace({"metadata": {"name": "apps"}})
    kube.apply_app("ingress-nginx", {"components": [
        {"name": "ingress-nginx", "type": "manifests", "properties": {"inline": MANIFEST.read_text()}}]})
    app = kube.wait_ready("ingress-nginx", timeout=default_wait(plane.handle) * 2)
    ready_since = condition(app, "Ready")["lastTransitionTime"]  # type: ignore[index]

    def jobs_done() -> bool:
        phases = {i["name"]: i.get("phase") for i in inventory(kube.app("ingress-nginx")) if i["kind"] == "Job"}
        return phases == dict.fromkeys(JOBS, "Completed")

    wait_until(jobs_done, default_wait(plane.handle), "both Jobs to be Completed in the inventory")

    # Two minutes of watching: the state never leaves Ready, no Job is created again.
    seen: list[tuple[str, str]] = []
    end = time.monotonic() + WINDOW
    while time.monotonic() < end:
        status = kube.app("ingress-nginx").get("status") or {}
        ready = next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), {})
        observed = (str(status.get("state")), str(ready.get("lastTransitionTime")))
        if not seen or seen[-1] != observed:
            seen.append(observed)
        time.sleep(0.25)
    assert seen == [("Ready", ready_since)]

    creates, deletes = job_creates(plane), job_deletes(plane)
    assert creates == dict.fromkeys(JOBS, 1), creates
    assert deletes == {name: ["ttl"] for name in JOBS}, deletes  # they completed: the TTL deleted them
    assert kube.event_messages("ingress-nginx", "Ready") == [condition(kube.app("ingress-nginx"), "Ready")["message"]]
    assert "drift" not in kube.app("ingress-nginx")["status"]
    passes = sum(v for (name, labels), v in operator.metrics().items()
                 if name == "oam_operator_reconcile_total" and dict(labels).get("branch") == "apply")
    sys.stdout.write(f"\nfigures: {passes:.0f} passes in all, Ready since {ready_since}, "
                     f"operator CPU {_cpu_seconds(operator):.1f} s\n")

    # A reconcile request re-applies every object; unchanged, each keeps its readiness.
    started = time.monotonic()
    result = subprocess.run(
        [str(Path(sys.executable).parent / "oam-operator"), "reconcile", "ingress-nginx", "-n", "apps", "--wait",
         "--timeout", "2m", "--kubeconfig", plane.handle.kubeconfig],
        capture_output=True, text=True, check=False, cwd=tmp_path)
    took = time.monotonic() - started
    sys.stdout.write(f"figures: reconcile --wait took {took:.2f} s; progress: {result.stderr!r}\n")
    assert result.returncode == 0, result.stderr
    assert "Processing" not in result.stderr
    assert all(line.startswith("Ready  19/19 ready") for line in result.stderr.splitlines()), result.stderr
    app = kube.app("ingress-nginx")
    assert app["status"]["lastHandledReconcileAt"] == app["metadata"]["annotations"][f"{DOMAIN}/requested-at"]
    assert condition(app, "Ready")["lastTransitionTime"] == ready_since  # type: ignore[index]
    assert job_creates(plane) == dict.fromkeys(JOBS, 1)

    # A restart: the new process knows the Jobs finished from the inventory alone.
    operator.stop()
    again = start_operator()

    def passed_ready() -> bool:
        return any(e.get("msg") == "pass finished" and e.get("name") == "ingress-nginx" and e.get("state") == "Ready"
                   for e in again.logs())

    wait_until(passed_ready, default_wait(plane.handle), "a pass of the restarted operator")
    assert job_creates(plane) == dict.fromkeys(JOBS, 1)
    assert condition(kube.app("ingress-nginx"), "Ready")["lastTransitionTime"] == ready_since  # type: ignore[index]

    # Any other object deleted by hand is created again, as before.
    kube.core.delete_namespaced_config_map("ingress-nginx-controller", TARGET)
    wait_until(lambda: kube.core.list_namespaced_config_map(
        TARGET, field_selector="metadata.name=ingress-nginx-controller").items, default_wait(plane.handle),
        "the ConfigMap deleted by hand to be created again")
    assert job_creates(plane) == dict.fromkeys(JOBS, 1)


def job_creates(plane: Plane) -> dict[str, int]:
    """Creations of the manifest's Jobs, by name: a POST that succeeded, or a server-side apply
    (``patch``, the operator's default update policy) answered ``201 Created``. The audit event
    names the object even at the Metadata level (the API server completes ``objectRef`` from the
    request's object)."""
    found: Counter[str] = Counter()
    for event in audit_events(plane):
        ref = event.get("objectRef") or {}
        code = (event.get("responseStatus") or {}).get("code", 0)
        created = (event.get("verb") == "create" and 200 <= code < 300) or (event.get("verb") == "patch"
                                                                            and code == 201)
        if created and ref.get("resource") == "jobs" and ref.get("namespace") == TARGET and not ref.get("subresource"):
            found[str(ref.get("name") or "<unnamed>")] += 1
    return dict(found)


def job_deletes(plane: Plane) -> dict[str, list[str]]:
    """Successful deletions of the manifest's Jobs, by name: ``ttl`` when the TTL controller made
    it (kube-controller-manager's user agent), else the user agent."""
    found: dict[str, list[str]] = {}
    for event in audit_events(plane):
        ref = event.get("objectRef") or {}
        code = (event.get("responseStatus") or {}).get("code", 0)
        if (event.get("verb") == "delete" and ref.get("resource") == "jobs" and ref.get("namespace") == TARGET
                and 200 <= code < 300):
            agent = str(event.get("userAgent") or "")
            who = "ttl" if "ttl-after-finished" in agent or agent.startswith("kube-controller-manager") else agent
            found.setdefault(str(ref.get("name")), []).append(who)
    return found


def _cpu_seconds(operator: OperatorProcess) -> float:
    """The operator process's user and system CPU time so far (Linux /proc)."""
    fields = Path(f"/proc/{operator.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks
