"""Drift on the full control plane (docs/operator.md#drift, issue 23): a hand edit, a deleted object
and a removed label are corrected from the watch of owned objects (the e2e operator's interval is
30s and its reapply interval 60m, so nothing else would correct them while the test waits);
``spec.drift: Report`` leaves the change and names the field; an autoscaler's replicas are never
fought."""

from __future__ import annotations

import signal
from typing import Any

from e2ekit import Kube, condition, configmap_component, deployment_component, sleep_briefly

from tools.devcluster.pytest_plugin import CLUSTERS, default_wait, wait_until

IMAGE = "spec.template.spec.containers[name=main].image"


def test_drift_is_corrected_from_the_watch(start_operator: Any, kube: Kube) -> None:
    operator = start_operator(kube.namespace)
    config = configmap_component("settings")
    config["properties"]["object"]["metadata"]["labels"] = {"tier": "front"}
    kube.apply_app("shop", {"components": [deployment_component("web"), config]})
    kube.wait_ready("shop")
    wait = default_wait(kube.cluster)

    kube.set_image("web", "evil/web:6.6.6")
    wait_until(lambda: kube.image_of("web") == "registry.invalid/app:1", wait, "the image to be corrected")
    wait_until(lambda: kube.event_messages("shop", "DriftCorrected"), wait, "the DriftCorrected Event")
    assert kube.event_messages("shop", "DriftCorrected") == [f"Corrected drift: Deployment web ({IMAGE})"]

    kube.core.delete_namespaced_config_map("settings", kube.namespace)
    wait_until(lambda: kube.core.list_namespaced_config_map(kube.namespace, field_selector="metadata.name=settings")
               .items, wait, "the deleted ConfigMap to be created again")

    kube.core.patch_namespaced_config_map("settings", kube.namespace, [
        {"op": "remove", "path": "/metadata/labels/tier"}], field_manager="kubectl-label")

    def labelled() -> bool:
        labels = kube.core.read_namespaced_config_map("settings", kube.namespace).metadata.labels or {}
        return labels.get("tier") == "front"

    wait_until(labelled, wait, "the removed label to be put back")
    wait_until(lambda: len(kube.event_messages("shop", "DriftCorrected")) == 3, wait, "one Event per correction")
    assert sorted(kube.event_messages("shop", "DriftCorrected")) == sorted([
        f"Corrected drift: Deployment web ({IMAGE})",
        "Corrected drift: ConfigMap settings (deleted)",
        "Corrected drift: ConfigMap settings (metadata.labels.tier)",
    ])
    assert operator.metrics()[("oam_operator_drift_corrections_total", frozenset())] == 3
    app = kube.wait_ready("shop")
    assert "drift" not in app["status"] and condition(app, "Drifted") is None


def test_report_leaves_the_change_and_names_the_field(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    kube.apply_app("shop", {"components": [deployment_component("web")], "drift": "Report"})
    kube.wait_ready("shop")
    kube.set_image("web", "evil/web:6.6.6")

    def reported() -> dict[str, Any] | None:
        """Reported, and Ready again: the edit rolls the Deployment out meanwhile (Processing)."""
        app = kube.app("shop")
        status = app.get("status") or {}
        return app if status.get("drift") and status.get("state") == "Ready" else None

    app = wait_until(reported, default_wait(kube.cluster), "the drift to be reported")
    message = f"Deployment web ({IMAGE}) changed by another field manager; left as it is (spec.drift: Report)"
    assert app["status"]["drift"] == [{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": kube.namespace,
                                       "name": "web", "fields": [IMAGE]}]
    drifted = condition(app, "Drifted")
    assert drifted is not None and (drifted["status"], drifted["reason"], drifted["message"]) == (
        "True", "DriftDetected", message)
    assert app["status"]["state"] == "Ready" and app["status"]["summary"].startswith("Drifted: Deployment web")
    wait_until(lambda: kube.event_messages("shop", "DriftDetected"), default_wait(kube.cluster), "the DriftDetected Event")
    sleep_briefly(5)  # a pass or two later: still left as it is
    assert kube.image_of("web") == "evil/web:6.6.6"
    assert kube.event_messages("shop", "DriftDetected") == [message]


def test_an_autoscalers_replicas_are_never_fought(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    web = {"name": "web", "type": "webservice", "properties": {"image": "registry.invalid/web:1", "port": 80},
           "traits": [{"type": "scaler", "properties": {"minReplicas": 1, "maxReplicas": 5}}]}
    kube.apply_app("shop", {"components": [web]})
    kube.wait_ready("shop")
    kube.apps.patch_namespaced_deployment_scale("web", kube.namespace, {"spec": {"replicas": 3}},
                                                field_manager="horizontal-pod-autoscaler")
    kube.set_image("web", "evil/web:6.6.6", container="web")  # a real drift next to it: a pass has run
    wait_until(lambda: kube.event_messages("shop", "DriftCorrected"), default_wait(kube.cluster), "the image correction")
    assert kube.event_messages("shop", "DriftCorrected") == [
        "Corrected drift: Deployment web (spec.template.spec.containers[name=web].image)"]
    assert kube.apps.read_namespaced_deployment("web", kube.namespace).spec.replicas == 3


def test_a_change_made_while_the_watch_is_down_is_corrected_after_an_api_server_restart(
        start_operator: Any, kube: Kube) -> None:
    """The watch ends with the API server and starts again 5 s after the failure; the image is
    changed as soon as the API server is back, so the change usually lands before the watch does
    and only the relist's comparison can find it (tests/unit/controller/test_ownedwatch.py shows
    that comparison on its own)."""
    plane = CLUSTERS.planes.get("full")
    assert plane is not None, "this test restarts the full control plane's kube-apiserver: it needs the local one"
    # The API server may be down past the renew deadline, which costs the Lease for a while
    # (docs/operator.md#leader-election, tested in test_leader_election_e2e.py): this test is about
    # the watch alone, so no election.
    start_operator(kube.namespace, "--no-leader-election")
    kube.apply_app("shop", {"components": [deployment_component("web")]})
    kube.wait_ready("shop")
    plane.restart("kube-apiserver")

    kube.set_image_once_reachable("web", "evil/web:6.6.6")
    wait_until(lambda: kube.image_of("web") == "registry.invalid/app:1", default_wait(kube.cluster),
               "the image to be corrected after the watch is back")
    wait_until(lambda: kube.event_messages("shop", "DriftCorrected"), default_wait(kube.cluster), "the Event")
    assert kube.event_messages("shop", "DriftCorrected") == [f"Corrected drift: Deployment web ({IMAGE})"]


def test_an_edit_made_while_no_operator_ran_is_corrected_by_the_next_one(start_operator: Any, kube: Kube) -> None:
    """Issue 36, point 3: the only witness of a hand edit dies before it corrects it; the next
    process's first sight is compared with the desired object (docs/operator.md#drift-seen-on-takeover)."""
    first = start_operator(kube.namespace)
    config = configmap_component("settings", data={"mode": "safe"})
    kube.apply_app("shop", {"components": [deployment_component("web"), config]})
    kube.wait_ready("shop")
    first.stop(signal.SIGKILL)
    kube.set_image("web", "evil/web:6.6.6")
    kube.core.patch_namespaced_config_map("settings", kube.namespace, {"data": {"mode": "unsafe"}},
                                          field_manager="kubectl-edit")
    start_operator(kube.namespace)
    wait = default_wait(kube.cluster)
    wait_until(lambda: kube.image_of("web") == "registry.invalid/app:1", wait, "the image to be corrected")
    wait_until(lambda: (kube.core.read_namespaced_config_map("settings", kube.namespace).data or {}).get("mode")
               == "safe", wait, "the ConfigMap's data to be corrected")
    wait_until(lambda: len(kube.event_messages("shop", "DriftCorrected")) >= 1, wait, "the DriftCorrected Event")
    assert sorted(kube.event_messages("shop", "DriftCorrected")) == [
        f"Corrected drift: Deployment web ({IMAGE}); ConfigMap settings (data)"]
    kube.wait_ready("shop")


def test_a_restart_with_nothing_edited_writes_no_object(start_operator: Any, kube: Kube) -> None:
    """The takeover compare is a no-op when nothing differs: the next process writes no object, and
    the Ready Application's first pass comes after the watches of owned objects listed their kinds."""
    first = start_operator(kube.namespace)
    kube.apply_app("shop", {"components": [deployment_component("web"), configmap_component("settings")]})
    kube.wait_ready("shop")
    first.stop(signal.SIGKILL)
    second = start_operator(kube.namespace)
    wait_until(lambda: any(entry.get("msg") == "pass finished" and entry.get("name") == "shop"
                           for entry in second.logs()), default_wait(kube.cluster), "the new operator's first pass")
    sleep_briefly(3)
    passes = [entry for entry in second.logs() if entry.get("msg") == "pass finished" and entry.get("name") == "shop"]
    writes = [(verb, count) for entry in passes for verb, count in (entry.get("operations") or {}).items()
              if verb in ("create", "update", "delete") and count]
    assert passes and writes == [], passes
    assert kube.event_messages("shop", "DriftCorrected") == []
    # The settled Application's first pass waited for the watches' first LISTs (docs/operator.md#a-quiet-restart).
    messages = [(entry.get("msg"), entry.get("name")) for entry in second.logs()]
    assert ("owned objects listed", None) in messages
    assert messages.index(("owned objects listed", None)) < messages.index(("pass finished", "shop")), messages


def test_a_confirmed_application_skips_its_interval_passes_and_still_corrects_drift_at_once(
        start_operator: Any, kube: Kube) -> None:
    """docs/operator.md#quiet-routine-passes: the interval's pass (30 s here) of a Ready Application
    that its last full pass confirmed from the watches is skipped, and a drift still wakes it."""
    operator = start_operator(kube.namespace)
    kube.apply_app("shop", {"components": [deployment_component("web"), configmap_component("settings")]})
    kube.wait_ready("shop")
    quiet = ("oam_operator_quiet_passes_total", frozenset())
    wait_until(lambda: operator.metrics().get(quiet, 0.0) >= 1, 120, "an interval's pass to be skipped")
    kube.set_image("web", "evil/web:6.6.6")
    wait_until(lambda: kube.image_of("web") == "registry.invalid/app:1", default_wait(kube.cluster),
               "the image to be corrected")
    # The Event is posted when the correcting pass ends, a moment after its write (a suite run read
    # the Events in between, after a conflict with kube-controller-manager's write made that pass read first).
    wait_until(lambda: kube.event_messages("shop", "DriftCorrected"), default_wait(kube.cluster), "the Event")
    assert kube.event_messages("shop", "DriftCorrected") == [f"Corrected drift: Deployment web ({IMAGE})"]
