"""Suspension, drift correction, profiles, timeouts, metrics and logs
(docs/operator.md#states-and-phases, docs/operator.md#the-clusterprofile-resource,
docs/operator.md#metrics, docs/operator.md#logging)."""

from __future__ import annotations

from typing import Any

from e2ekit import DOMAIN, Kube, condition, configmap_component, deployment_component, sleep_briefly
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tools.devcluster.pytest_plugin import default_wait, wait_until


def test_suspend_stops_reconciling_and_unsuspending_resumes(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    kube.apply_app("app", {"components": [configmap_component("cfg")]})
    kube.wait_ready("app")
    kube.apply_app("app", {"suspend": True, "components": [configmap_component("cfg", {"key": "changed"})]})
    app = kube.wait_state("app", "Pending", "Suspended")
    assert condition(app, "Ready")["message"] == "Reconciliation is suspended"
    assert app["status"]["summary"] == "Suspended"  # kubectl get oapp's STATUS column (issue 14)
    assert condition(app, "Reconciling") is None
    sleep_briefly(3)
    assert kube.core.read_namespaced_config_map("cfg", kube.namespace).data == {"key": "cfg"}
    kube.apply_app("app", {"suspend": False, "components": [configmap_component("cfg", {"key": "changed"})]})
    kube.wait_ready("app")
    assert kube.core.read_namespaced_config_map("cfg", kube.namespace).data == {"key": "changed"}


def test_a_reconcile_request_reverts_a_hand_edit_and_deleted_objects_come_back(
    start_operator: Any, kube: Kube
) -> None:
    start_operator(kube.namespace)
    # Report: the hand edit stays until the request (Correct would undo it from the watch,
    # tests/e2e/test_drift_e2e.py); a reconcile request re-applies in either mode.
    kube.apply_app("app", {"components": [configmap_component("cfg")], "drift": "Report"})
    kube.wait_ready("app")
    kube.core.patch_namespaced_config_map("cfg", kube.namespace, {"data": {"key": "edited"}})
    sleep_briefly(2)
    assert kube.core.read_namespaced_config_map("cfg", kube.namespace).data == {"key": "edited"}
    kube.custom.patch_namespaced_custom_object(
        "oam-operator.dev", "v1alpha1", kube.namespace, "applications", "app",
        {"metadata": {"annotations": {f"{DOMAIN}/requested-at": "2026-11-29T12:00:00Z"}}})
    wait_until(lambda: kube.core.read_namespaced_config_map("cfg", kube.namespace).data == {"key": "cfg"},
               default_wait(kube.cluster), "the hand edit to be reverted")
    wait_until(lambda: kube.app("app")["status"].get("lastHandledReconcileAt") == "2026-11-29T12:00:00Z",
               default_wait(kube.cluster), "lastHandledReconcileAt to echo the request")

    kube.core.delete_namespaced_config_map("cfg", kube.namespace)

    def recreated() -> bool:
        try:
            kube.core.read_namespaced_config_map("cfg", kube.namespace)
            return True
        except ApiException as error:
            if error.status != 404:
                raise
            return False

    wait_until(recreated, 45, "the deleted object to be re-created within one interval (30s)")


def test_a_missing_profile_is_an_error_until_it_is_created(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    profile = f"p-{kube.namespace}"
    kube.apply_app("app", {"profile": profile, "components": [configmap_component("cfg")]})
    app = kube.wait_state("app", "Error", "ProfileNotFound")
    assert condition(app, "Ready")["message"] == f"ClusterProfile {profile} not found"
    kube.custom.create_cluster_custom_object("oam-operator.dev", "v1alpha1", "clusterprofiles", {
        "apiVersion": "oam-operator.dev/v1alpha1", "kind": "ClusterProfile", "metadata": {"name": profile},
        "spec": {"gitopsEngine": "fluxcd"}})
    app = kube.wait_ready("app", timeout=20)
    assert app["status"]["profile"] == profile
    kube.custom.delete_cluster_custom_object("oam-operator.dev", "v1alpha1", "clusterprofiles", profile)


def test_a_workload_that_never_gets_ready_times_out_and_recovers(start_operator: Any, kube: Kube) -> None:
    start_operator(kube.namespace)
    stuck = deployment_component("web")
    stuck["properties"]["object"]["spec"]["template"]["spec"]["nodeSelector"] = {"no-such": "node"}
    kube.apply_app("app", {"timeout": "10s", "components": [stuck]})
    def waiting() -> dict[str, Any] | None:
        app = kube.app("app")
        message = (condition(app, "Ready") or {}).get("message", "")
        return app if message.startswith("Waiting for bundle") else None

    app = wait_until(waiting, default_wait(kube.cluster), "the Processing message naming the waiting bundle")
    assert app["status"]["state"] == "Processing"
    assert condition(app, "Ready")["message"].startswith("Waiting for bundle app (0/1 ready): Deployment web (")
    app = kube.wait_state("app", "Error", "Timeout", timeout=60)
    message = condition(app, "Ready")["message"]
    assert message.startswith("Reconciliation timed out after 10s: Waiting for bundle app (0/1 ready): Deployment web (")
    assert condition(app, "Stalled")["status"] == "True"
    kube.apply_app("app", {"timeout": "10s", "components": [deployment_component("web")]})
    kube.wait_ready("app")


def test_metrics_health_and_json_logs(start_operator: Any, kube: Kube) -> None:
    operator = start_operator(kube.namespace)
    kube.apply_app("app", {"components": [configmap_component("cfg")]})
    kube.wait_ready("app")

    def ready_pass_logged() -> bool:  # the pass writes the Ready status, then logs and counts itself
        return any(e.get("msg") == "pass finished" and e.get("state") == "Ready" for e in operator.logs())

    wait_until(ready_pass_logged, default_wait(kube.cluster), "the Ready pass to be logged")
    names = {name for name, _ in operator.metrics()}
    for expected in ("oam_operator_build_info", "oam_operator_reconcile_total", "oam_operator_reconcile_errors_total",
                     "oam_operator_reconcile_duration_seconds_bucket", "oam_operator_transform_duration_seconds_bucket",
                     "oam_operator_api_requests_total", "oam_operator_operations_total", "oam_operator_applications",
                     "oam_operator_dependents", "oam_operator_unready_dependents"):
        assert expected in names, expected
    values = operator.metrics()
    assert values[("oam_operator_dependents", frozenset({("namespace", kube.namespace), ("name", "app")}))] == 1
    assert values[("oam_operator_applications", frozenset({("state", "Ready")}))] == 1
    passes = [entry for entry in operator.logs() if entry.get("msg") == "pass finished"]
    assert passes, "no pass logged"
    last = passes[-1]
    assert {"ts", "level", "logger", "namespace", "name", "generation", "branch", "outcome", "state"} <= set(last)
    assert (last["namespace"], last["name"], last["branch"], last["state"]) == (kube.namespace, "app", "apply", "Ready")
    # A failed pass logs its reason and the error's text with the Application (issue 14).
    kube.apply_app("bad", {"components": [{"name": "web", "type": "websrvice"}]})
    bad = kube.wait_state("bad", "Error", "TransformFailed")
    message = condition(bad, "Ready")["message"]

    def failure_logged() -> bool:
        return any(entry.get("msg") == "pass failed" and entry.get("name") == "bad" for entry in operator.logs())

    wait_until(failure_logged, default_wait(kube.cluster), "the failed pass to be logged")
    failed = next(e for e in operator.logs() if e.get("msg") == "pass failed" and e.get("name") == "bad")
    assert (failed["level"], failed["namespace"], failed["reason"], failed["error"], failed["error_type"]) == (
        "error", kube.namespace, "TransformFailed", message, "transform")
    kube.custom.delete_namespaced_custom_object("oam-operator.dev", "v1alpha1", kube.namespace, "applications", "app")
    wait_until(lambda: kube.app_or_none("app") is None, default_wait(kube.cluster), "the Application to go")
    sleep_briefly(1)
    values = operator.metrics()
    assert ("oam_operator_dependents", frozenset({("namespace", kube.namespace), ("name", "app")})) not in values


def test_the_cluster_profile_feeds_capabilities_and_its_changes_restart_processing(
    start_operator: Any, kube: Kube
) -> None:
    start_operator(kube.namespace)
    profile = f"caps-{kube.namespace}"
    kube.custom.create_cluster_custom_object("oam-operator.dev", "v1alpha1", "clusterprofiles", {
        "apiVersion": "oam-operator.dev/v1alpha1", "kind": "ClusterProfile", "metadata": {"name": profile},
        "spec": {"capabilities": {"ingress": {"rendering": {"ingressClassName": "from-profile"}}}}})
    try:
        web = {"name": "web", "type": "webservice", "properties": {"image": "registry.invalid/web:1", "port": 8080},
               "traits": [{"type": "ingress", "properties": {"rules": [{"host": "web.example.com",
                                                                          "paths": [{"path": "/"}]}]}}]}
        kube.apply_app("app", {"profile": profile, "components": [web]})
        kube.wait_ready("app")
        ingresses = client.NetworkingV1Api(kube.api).list_namespaced_ingress(kube.namespace).items
        assert [i.spec.ingress_class_name for i in ingresses] == ["from-profile"]

        # A change of the profile restarts processing of the Applications that use it.
        kube.custom.patch_cluster_custom_object("oam-operator.dev", "v1alpha1", "clusterprofiles", profile, {
            "spec": {"capabilities": {"ingress": {"rendering": {"ingressClassName": "changed"}}}}})
        wait_until(lambda: [i.spec.ingress_class_name for i in client.NetworkingV1Api(kube.api)
                            .list_namespaced_ingress(kube.namespace).items] == ["changed"],
                   default_wait(kube.cluster), "the Ingress to follow the profile")
    finally:
        kube.custom.delete_cluster_custom_object("oam-operator.dev", "v1alpha1", "clusterprofiles", profile)


def watches_synced(operator: Any, kinds: tuple[tuple[str, str], ...]) -> bool:
    """Whether the operator's watches of these (group, kind) have synced (oam_operator_watches)."""
    metrics = operator.metrics()
    return all(metrics.get(("oam_operator_watches", frozenset({("group", group), ("kind", kind), ("state", "synced")})))
               == 1 for group, kind in kinds)


def passes_to_ready(operator: Any, kube: Kube, components: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """Apply Application ``app`` of ``components`` once the watches of ConfigMaps and Deployments
    (started with the operator) have synced, wait until Ready: (outcome, operations) of its passes."""
    wait_until(lambda: watches_synced(operator, (("", "ConfigMap"), ("apps", "Deployment"))),
               default_wait(kube.cluster), "the operator's watches to sync")
    kube.apply_app("app", {"components": components})
    kube.wait_ready("app")

    def passes() -> list[tuple[str, Any]]:
        return [(e["outcome"], e["operations"]) for e in operator.logs()
                if e.get("msg") == "pass finished" and e.get("name") == "app"]

    # The pass writes the Ready status before it logs "pass finished": wait for that line too.
    wait_until(lambda: any(outcome == "ready" for outcome, _ in passes()),
               default_wait(kube.cluster), "the Ready pass to be logged")
    return passes()


def test_a_new_application_is_recorded_and_created_in_one_pass(start_operator: Any, kube: Kube) -> None:
    """docs/operator.md#the-apply-branch: the first pass writes the inventory checkpoint from within
    the reconciler's call and creates the objects; the second finds them Ready. Neither reads:
    the watch answers (docs/operator.md#reads-from-the-watch)."""
    operator = start_operator(kube.namespace)
    passes = passes_to_ready(operator, kube, [configmap_component("a"), configmap_component("b")])
    assert passes == [("progressing", {"create": 2}), ("ready", {})]


def test_a_deployment_becoming_available_wakes_its_application(start_operator: Any, kube: Kube) -> None:
    """docs/operator.md#readiness-wake-ups: no polling pass between the pass that creates a
    Deployment and the one that finds it Available: the readiness watch wakes the Application."""
    operator = start_operator(kube.namespace)
    passes = passes_to_ready(operator, kube, [configmap_component("cfg"), deployment_component("web")])
    assert passes == [("progressing", {"create": 2}), ("ready", {})]
    assert operator.metrics()[("oam_operator_readiness_wakeups_total", frozenset())] >= 1
