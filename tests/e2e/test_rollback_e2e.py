"""Automatic rollback on the full control plane (issue 40; docs/operator.md#automatic-rollback).

Revision 1, a Deployment, is Ready. Revision 2 gives it ``progressDeadlineSeconds: 10`` and a
node selector no node has, with ``timeout: 30s``: within 40 s the live Deployment's pod template
is revision 1's again, the Application says ``Error``/``RolledBack`` naming revision 2 and the
Deployment, and revision 3 is recorded restoring 1. Then no write carries revision 2's template:
for the issue's 5 minutes, with a reconcile requested every 5 s (``<domain>/requested-at``: 60
passes, each re-applying every object, forced), the Deployment's ``metadata.generation`` (which
every write of its spec moves, so any write of revision 2's template would) stays as it was and
every sample of its template is revision 1's. The CRD's shortest interval is 30 s, so requests
stand in for a short interval. The five minutes are a wait, not work: under make test's parallel
workers the other modules run meanwhile.
"""

from __future__ import annotations

import copy
import time
from typing import Any

from e2ekit import DOMAIN, GROUP, VERSION, Kube, condition, deployment_component

from tools.devcluster.pytest_plugin import default_wait, wait_until

ROLLBACK = {"name": "undo", "type": "rollback", "properties": {"onFailure": True}}
OBSERVE = 300.0  # the five minutes
FAILED = ("Revision 2 failed: Deployment web: Progress deadline exceeded, not Ready within 30s; rolled back to "
          "revision 1")


def spec_of(component: dict[str, Any]) -> dict[str, Any]:
    return {"timeout": "30s", "policies": [ROLLBACK], "components": [component]}


def template(kube: Kube) -> dict[str, Any]:
    live = kube.apps.read_namespaced_deployment("web", kube.namespace)
    found: dict[str, Any] = kube.api.sanitize_for_serialization(live.spec.template)
    return found


def restores_of(kube: Kube, app: dict[str, Any]) -> dict[int, Any]:
    found = kube.apps.list_namespaced_controller_revision(
        kube.namespace, label_selector=f"{DOMAIN}/application-uid={app['metadata']['uid']}")
    return {item.revision: (item.data or {}).get("restores") for item in found.items}


def test_a_failed_revision_is_rolled_back_and_never_written_again(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    good = deployment_component("web")
    kube.apply_app("web", spec_of(good))
    kube.wait_ready("web")
    wait_until(lambda: restores_of(kube, kube.app("web")) == {1: None} and _outcome(kube, 1) == "Ready",
               default_wait(kube.cluster), "revision 1 to be recorded Ready")
    first = template(kube)

    bad = copy.deepcopy(good)
    obj = bad["properties"]["object"]
    obj["spec"]["progressDeadlineSeconds"] = 10
    obj["spec"]["template"]["spec"]["nodeSelector"] = {"no-such": "node"}
    started = time.monotonic()
    kube.apply_app("web", spec_of(bad))
    wait_until(lambda: template(kube)["spec"].get("nodeSelector") == {"no-such": "node"}, 20.0,
               "revision 2 to be applied")
    wait_until(lambda: template(kube) == first, 40.0 - (time.monotonic() - started),
               "the Deployment to be back at revision 1")
    restored_after = time.monotonic() - started
    app = kube.wait_state("web", "Error", "RolledBack", timeout=20.0)
    rolled = condition(app, "RolledBack")
    assert rolled is not None and rolled["status"] == "True"
    message = rolled["message"]
    print(f"restored after {restored_after:.1f} s: {message}")
    assert message == FAILED
    assert condition(app, "Ready")["message"] == message  # type: ignore[index]
    assert app["status"]["rolledBack"]["revision"] == 2 and app["status"]["rolledBack"]["object"] == "Deployment web"
    wait_until(lambda: restores_of(kube, kube.app("web")).get(3) == 1, default_wait(kube.cluster),
               "revision 3 to be recorded restoring 1")

    generation = kube.apps.read_namespaced_deployment("web", kube.namespace).metadata.generation
    samples, handled, deadline = 0, 0, time.monotonic() + OBSERVE
    while time.monotonic() < deadline:
        asked = f"rollback-e2e-{samples}"
        kube.custom.patch_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications", "web", {
            "metadata": {"annotations": {f"{DOMAIN}/requested-at": asked}}})
        time.sleep(5.0)
        assert template(kube) == first
        handled += kube.app("web")["status"].get("lastHandledReconcileAt") == asked
        samples += 1
    after = kube.apps.read_namespaced_deployment("web", kube.namespace).metadata.generation
    app = kube.app("web")
    print(f"observed {OBSERVE:.0f} s, {samples} reconcile requests ({handled} handled within 5 s): generation {generation} -> {after}, "
          f"revision {app['status']['revision']}, state {app['status']['state']}")
    assert after == generation and app["status"]["revision"] == 3 and handled >= 50
    assert kube.event_messages("web", "RolledBack") == [FAILED]  # one Event


def _outcome(kube: Kube, number: int) -> str | None:
    found = kube.apps.list_namespaced_controller_revision(
        kube.namespace, label_selector=f"{DOMAIN}/application-uid={kube.app('web')['metadata']['uid']}")
    for item in found.items:
        if item.revision == number:
            return str((item.metadata.annotations or {}).get(f"{DOMAIN}/outcome"))
    return None
