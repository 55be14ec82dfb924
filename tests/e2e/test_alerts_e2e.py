"""The chart's alerts fire on what the operator really exposes (docs/chart.md#alerts-and-dashboard).

The operator runs against the full control plane with three Applications that drive the
per-Application conditions — ``stuck`` never gets Ready (its Deployment's pod cannot be
scheduled) and passes its 10 s timeout, ``broken`` fails its transform on every change,
``drifted``'s ConfigMap is changed back three times by another writer, and ``rolled``'s second
revision adds such a Deployment, so its rollback policy returns it to its first — and a standby
instance next to it. Their ``/metrics`` scrapes become ``promtool test rules`` input series as Prometheus
stores them (``promseries.py``: the ServiceMonitor's target labels, the Application's namespace
as ``exported_namespace``, stale markers when a scrape fails), and promtool evaluates the
chart's rendered rules on them: each alert must fire for exactly the Applications (or the
Deployment) it names, with the exact description, and not fire where nothing is wrong.

OamOperatorWebhookErrors is built on the API server's own series: its test scrapes the local
kube-apiserver's ``/metrics`` while the webhook answers, then after the operator stopped while
creates are refused for want of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from e2ekit import Kube, OperatorProcess, configmap_component, deployment_component
from promseries import Timeline

from tools.devcluster.helm import render, require_helm
from tools.devcluster.promtool import require_promtool, run_promtool
from tools.devcluster.pytest_plugin import default_wait, wait_until
from tools.operatorprocess import free_port

RELEASE, RELEASE_NAMESPACE = "oam", "oam-system"
DEPLOYMENT = "oam-oam-operator"
BROKEN = {"name": "web", "type": "webservise", "properties": {"image": "nginx:1.27"}}


def _target(pod: str) -> dict[str, str]:
    """The labels the chart's ServiceMonitor's scrape gives one instance's series."""
    return {"namespace": RELEASE_NAMESPACE, "pod": pod, "job": f"{DEPLOYMENT}-metrics",
            "service": f"{DEPLOYMENT}-metrics", "endpoint": "metrics", "container": "operator",
            "instance": f"{pod}:8080"}


def _value(operator: OperatorProcess, metric: str, **labels: str) -> float:
    return next((value for (name, found), value in operator.metrics().items()
                 if name == metric and labels.items() <= dict(found).items()), 0.0)


def _rules(tmp_path: Path) -> Path:
    objects = render(require_helm(), tmp_path / "helm", release=RELEASE, namespace=RELEASE_NAMESPACE,
                     values={"metrics": {"prometheusRule": {"enabled": True}}})
    rule = next(o for o in objects if o["kind"] == "PrometheusRule")
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}, sort_keys=False))
    return path


def _application_alert(alert: str, namespace: str, name: str, description: str) -> dict[str, Any]:
    return {"exp_labels": {"severity": "warning", "namespace": RELEASE_NAMESPACE, "exported_namespace": namespace,
                           "name": name},
            "exp_annotations": {"summary": _SUMMARIES[alert].format(ns=namespace, name=name),
                                "description": description.format(ns=namespace, name=name)}}


_SUMMARIES = {
    "OamApplicationNotReady": "Application {ns}/{name} is not Ready for longer than its timeout",
    "OamApplicationReconcileErrors": "Passes of Application {ns}/{name} keep failing",
    "OamApplicationDriftFlapping": "Drift of Application {ns}/{name} is corrected again and again",
    "OamApplicationRolledBack": "Application {ns}/{name} was rolled back because its spec failed",
}
NOT_READY = ("Application {name} in namespace {ns} has not been Ready for longer than its timeout (spec.timeout, "
             "else the operator's --default-timeout); its Ready condition says what it waits for or why it failed. Look closer: "
             "`kubectl oam status {name} -n {ns} --tree`")
ERRORS = ("Application {name} in namespace {ns} had more than 3 failed passes in the last 15m; its Ready condition "
          "says why. Look closer: `kubectl oam status {name} -n {ns} --tree`")
DRIFT = ("The operator re-applied objects of Application {name} in namespace {ns} more than 2 times in the last 30m: "
         "another writer (a controller, a script, a person) keeps changing them back; `spec.drift: Report` would "
         "leave such changes in place. Look closer: `kubectl oam status {name} -n {ns} --tree` and its DriftCorrected "
         "Events, which name each object and field: `kubectl get events -n {ns} --field-selector "
         "involvedObject.name={name},reason=DriftCorrected`.")
ROLLED_BACK = ("A revision of Application {name} in namespace {ns} failed, and its rollback policy returned it to the "
               "last Ready revision; the failed spec is not applied again until it changes. Its RolledBack condition "
               "names the revision and the object that blocked it. Look closer: `kubectl oam status {name} -n {ns} "
               "--tree` and `kubectl oam history {name} -n {ns}`.")
ROLLBACK = {"name": "undo", "type": "rollback", "properties": {"onFailure": True}}
DOWN = {"exp_labels": {"severity": "critical", "namespace": RELEASE_NAMESPACE},
        "exp_annotations": {
            "summary": f"No oam-operator instance is running in {RELEASE_NAMESPACE}",
            "description": f"Prometheus has scraped no instance of {DEPLOYMENT} for 1m: its Applications are not "
                           "reconciled and, with admission enabled, not validated. Look closer: "
                           f"`kubectl -n {RELEASE_NAMESPACE} get deployment,pods -l app.kubernetes.io/instance={RELEASE}` "
                           f"and `kubectl -n {RELEASE_NAMESPACE} describe deployment {DEPLOYMENT}`."}}
NO_LEADER = {"exp_labels": {"severity": "critical", "namespace": RELEASE_NAMESPACE},
             "exp_annotations": {
                 "summary": f"No oam-operator instance leads in {RELEASE_NAMESPACE}",
                 "description": f"No instance of {DEPLOYMENT} has held its Lease for 1m: its Applications are not "
                                "reconciled. Every instance is standing by (check its /healthz and log for the Lease "
                                "error), paused, or not running. Look closer: "
                                f"`kubectl -n {RELEASE_NAMESPACE} logs deployment/{DEPLOYMENT}`."}}


def _case(name: str, timelines: list[Timeline], eval_time: str, expected: dict[str, list[dict[str, Any]]]
          ) -> dict[str, Any]:
    series = [entry for timeline in timelines for entry in timeline.input_series()]
    return {"name": name, "interval": "1m", "input_series": series,
            "alert_rule_test": [{"eval_time": eval_time, "alertname": alert, "exp_alerts": alerts}
                                for alert, alerts in expected.items()]}


def test_each_alert_fires_on_the_series_the_operator_exposes(start_operator: Any, kube: Kube, tmp_path: Path) -> None:
    promtool, rules = require_promtool(), _rules(tmp_path)
    ns, wait = kube.namespace, default_wait(kube.cluster)
    leader = start_operator(ns)
    stuck = deployment_component("web")
    stuck["properties"]["object"]["spec"]["template"]["spec"]["nodeSelector"] = {"no-such": "node"}
    kube.apply_app("stuck", {"timeout": "10s", "components": [stuck]})
    kube.apply_app("broken", {"components": [BROKEN]})
    kube.apply_app("drifted", {"components": [configmap_component("settings")]})
    kube.apply_app("rolled", {"timeout": "10s", "policies": [ROLLBACK], "components": [configmap_component("flags")]})
    kube.wait_ready("drifted")
    kube.wait_ready("rolled")
    unschedulable = deployment_component("batch")
    unschedulable["properties"]["object"]["spec"]["template"]["spec"]["nodeSelector"] = {"no-such": "node"}
    kube.apply_app("rolled", {"timeout": "10s", "policies": [ROLLBACK],
                              "components": [configmap_component("flags"), unschedulable]})
    kube.wait_state("stuck", "Error", "Timeout", timeout=60)
    kube.wait_state("broken", "Error", "TransformFailed")
    kube.wait_state("rolled", "Error", "RolledBack", timeout=60)
    wait_until(lambda: _value(leader, "oam_operator_application_rolled_back", name="rolled") == 1, wait,
               "rolled to be counted rolled back")
    wait_until(lambda: _value(leader, "oam_operator_application_errors_total", name="broken") >= 1, wait,
               "broken's first error to be counted")
    wait_until(lambda: _value(leader, "oam_operator_application_not_ready_seconds", name="stuck") > 10, wait,
               "stuck to be not Ready for longer than its 10s")
    standby = start_operator(ns)  # the Lease is held: it stands by
    assert _value(standby, "oam_operator_leader") == 0 and _value(leader, "oam_operator_leader") == 1

    on_leader, on_standby = Timeline(_target(f"{DEPLOYMENT}-a")), Timeline(_target(f"{DEPLOYMENT}-b"))
    first = leader.metrics_text()
    on_leader.scrape(first)
    on_standby.scrape(standby.metrics_text())
    errors = {app: _value(leader, "oam_operator_application_errors_total", name=app) for app in ("stuck", "broken")}

    for attempt in range(1, 5):  # someone tries to fix it, four times, and fails each time
        kube.apply_app("broken", {"components": [{**BROKEN, "properties": {"image": f"nginx:1.{attempt}"}}]})
        wait_until(lambda n=attempt: _value(leader, "oam_operator_application_errors_total", name="broken")
                   >= errors["broken"] + n, wait, f"broken's failed pass {attempt}")
    for attempt in range(1, 4):  # another writer changes the ConfigMap back, three times
        kube.core.patch_namespaced_config_map("settings", ns, {"data": {"key": f"mine-{attempt}"}},
                                              field_manager="kubectl-edit")
        wait_until(lambda n=attempt: _value(leader, "oam_operator_application_drift_corrections_total",
                                            name="drifted") == n, wait, f"drift correction {attempt}")
    wait_until(lambda: _value(leader, "oam_operator_application_errors_total", name="stuck") >= errors["stuck"] + 4,
               wait, "stuck's timed-out passes to go on failing")
    on_leader.scrape(leader.metrics_text())
    on_standby.scrape(standby.metrics_text())
    assert _value(leader, "oam_operator_application_errors_total", name="drifted") == 0
    assert _value(leader, "oam_operator_application_not_ready_seconds", name="drifted") == 0

    running = _case("the leader's series", [on_leader, on_standby], "1m", {
        "OamApplicationNotReady": [_application_alert("OamApplicationNotReady", ns, "stuck", NOT_READY)],
        "OamApplicationReconcileErrors": [_application_alert("OamApplicationReconcileErrors", ns, app, ERRORS)
                                          for app in ("broken", "stuck")],
        "OamApplicationDriftFlapping": [_application_alert("OamApplicationDriftFlapping", ns, "drifted", DRIFT)],
        "OamApplicationRolledBack": [_application_alert("OamApplicationRolledBack", ns, "rolled", ROLLED_BACK)],
        "OamOperatorNoLeader": [], "OamOperatorDown": [],
    })
    standing_by = _case("only a standby", [on_standby], "1m", {
        "OamOperatorNoLeader": [NO_LEADER], "OamOperatorDown": [], "OamApplicationNotReady": [],
    })
    leader.stop()
    standby.stop()
    on_leader.failed()
    on_standby.failed()
    stopped = _case("every instance stopped", [on_leader, on_standby], "3m", {
        "OamOperatorDown": [DOWN], "OamOperatorNoLeader": [NO_LEADER],
        # instant values are stale once the scrape fails; increase() still counts the samples of its window
        "OamApplicationNotReady": [], "OamApplicationRolledBack": [],
        "OamApplicationReconcileErrors": [_application_alert("OamApplicationReconcileErrors", ns, app, ERRORS)
                                          for app in ("broken", "stuck")],
        "OamApplicationDriftFlapping": [_application_alert("OamApplicationDriftFlapping", ns, "drifted", DRIFT)],
    })
    tests = tmp_path / "alerts-test.yaml"
    tests.write_text(yaml.safe_dump({"rule_files": [rules.name], "evaluation_interval": "1m",
                                     "tests": [running, standing_by, stopped]}, sort_keys=False))
    result = run_promtool(promtool, ["test", "rules", str(tests)], cwd=tmp_path)
    assert result.returncode == 0, f"{result.stdout}{result.stderr}\n--- first scrape ---\n{first[:3000]}"
    assert result.stdout.strip().endswith("SUCCESS"), result.stdout


WEBHOOK = "validate.applications.oam-operator.dev"
WEBHOOK_SERIES = "apiserver_admission_webhook_"
GOOD = {"name": "cm", "type": "passthrough",
        "properties": {"object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}}}


def _apiserver_metrics(kube: Kube) -> str:
    """The API server's own /metrics, only its admission webhook families (the rule's series)."""
    # The client's own connection pool: its TLS client certificate is the admin's, who may read /metrics.
    response = kube.api.rest_client.pool_manager.request("GET", f"{kube.api.configuration.host}/metrics")
    assert response.status == 200, response.status
    text = response.data.decode()
    return "".join(line + "\n" for line in text.splitlines()
                   if line.startswith((WEBHOOK_SERIES, f"# HELP {WEBHOOK_SERIES}", f"# TYPE {WEBHOOK_SERIES}")))


def _dry_run_create(kube: Kube, name: str) -> str:
    """A server-side dry-run create of a valid Application; the API server's message when it fails."""
    from e2ekit import GROUP, VERSION
    from kubernetes.client.rest import ApiException

    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application",
            "metadata": {"name": name, "namespace": kube.namespace}, "spec": {"components": [GOOD]}}
    try:
        kube.custom.create_namespaced_custom_object(GROUP, VERSION, kube.namespace, "applications", body,
                                                    dry_run="All")
    except ApiException as error:
        return str(error.body or error.reason)
    return ""


def test_the_webhook_alert_fires_when_the_api_server_cannot_call_the_operator(
        start_operator: Any, kube: Kube, tmp_path: Path) -> None:
    from kubernetes import client
    from test_admission_e2e import TYPO, Chart, _app, _refused_by_webhook

    promtool = require_promtool()
    objects = render(require_helm(), tmp_path / "helm", release=RELEASE, namespace=RELEASE_NAMESPACE,
                     values={"metrics": {"prometheusRule": {"enabled": True}}, "admission": {"enabled": True}})
    rule = next(o for o in objects if o["kind"] == "PrometheusRule")
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}, sort_keys=False))
    chart = Chart(kube.namespace, free_port(), tmp_path / "helm-admission")
    admission = client.AdmissionregistrationV1Api(kube.api)
    operator = start_operator(kube.namespace, "--admission-address=127.0.0.1", *chart.flags)
    admission.create_validating_webhook_configuration(chart.configuration)
    try:
        wait_until(lambda: _refused_by_webhook(kube, _app("probe", kube.namespace, TYPO)), default_wait(kube.cluster),
                   "the API server to call the webhook")
        on_apiserver = Timeline({"job": "apiserver", "namespace": "default", "service": "kubernetes",
                                 "endpoint": "https", "instance": kube.cluster.server.removeprefix("https://")},
                                prefixes=(WEBHOOK_SERIES,))
        on_apiserver.scrape(_apiserver_metrics(kube))
        for attempt in (1, 2):  # answered and admitted: no call fails
            assert _dry_run_create(kube, f"fine-{attempt}") == ""
        on_apiserver.scrape(_apiserver_metrics(kube))
        operator.stop()  # the webhook no longer answers: with failurePolicy Fail nothing is admitted
        for step in (2, 3):
            for attempt in (1, 2):
                refused = _dry_run_create(kube, f"try-{step}-{attempt}")
                assert f'failed calling webhook \\"{WEBHOOK}\\"' in refused, refused
            on_apiserver.scrape(_apiserver_metrics(kube))
    finally:
        admission.delete_validating_webhook_configuration(chart.name)
    firing = {"exp_labels": {"severity": "critical", "name": WEBHOOK, "error_type": "calling_webhook_error"},
              "exp_annotations": {
                  "summary": f"The API server cannot call the oam-operator admission webhook of {RELEASE_NAMESPACE}",
                  "description": f"The API server could not call the admission webhook {WEBHOOK} in the last 10m: "
                                 "with failurePolicy Fail, no Application can be created or changed. Look closer: "
                                 f"`kubectl -n {RELEASE_NAMESPACE} get endpoints {DEPLOYMENT}-webhook`, "
                                 f"`kubectl get validatingwebhookconfiguration {DEPLOYMENT}-admission -o yaml` "
                                 "(its CA bundle) and the operator's log."}}
    cases = [_case("the webhook answering", [on_apiserver], "1m", {"OamOperatorWebhookErrors": []}),
             _case("the webhook gone", [on_apiserver], "3m", {"OamOperatorWebhookErrors": [firing]})]
    tests = tmp_path / "webhook-test.yaml"
    tests.write_text(yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": cases},
                                    sort_keys=False))
    result = run_promtool(promtool, ["test", "rules", str(tests)], cwd=tmp_path)
    assert result.returncode == 0, f"{result.stdout}{result.stderr}\n{on_apiserver.input_series()}"
