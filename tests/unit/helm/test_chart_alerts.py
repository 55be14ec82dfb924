"""The chart's alert rules and Grafana dashboard (docs/chart.md#alerts-and-dashboard): promtool
accepts the rendered rules and every panel's query; the dashboard is valid JSON in a ConfigMap
the Grafana sidecar loads. Whether each alert fires on the operator's real series is
tests/e2e/test_alerts_e2e.py's question."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.unit.unitkit import of_kind, one
from tools.devcluster.promtool import run_promtool

Render = Callable[..., list[dict[str, Any]]]
NAME = "oam-oam-operator"
EVERYTHING = {"metrics": {"prometheusRule": {"enabled": True}, "dashboard": {"enabled": True}},
              "admission": {"enabled": True}, "sharding": {"shards": ["eu"]}}
PER_DEPLOYMENT = ["OamOperatorDown", "OamOperatorNoLeader"]
PER_APPLICATION = ["OamApplicationNotReady", "OamApplicationReconcileErrors", "OamApplicationDriftFlapping",
                   "OamApplicationRolledBack"]
# What a dashboard's variables stand for when its queries are checked as PromQL.
VARIABLES = {"$namespace": "oam-system", "$shard": ".*", "$__rate_interval": "5m"}


def _rules(render: Render, values: dict[str, Any]) -> list[dict[str, Any]]:
    rule = one(render(values), "PrometheusRule", NAME, "oam-system")
    return list(rule["spec"]["groups"][0]["rules"])


def _check_rules(promtool: Path, tmp_path: Path, groups: list[dict[str, Any]]) -> str:
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    result = run_promtool(promtool, ["check", "rules", str(path)])
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_promtool_accepts_the_rendered_rules(render: Render, promtool: Path, tmp_path: Path) -> None:
    rule = one(render(EVERYTHING), "PrometheusRule", NAME, "oam-system")
    out = _check_rules(promtool, tmp_path, rule["spec"]["groups"])
    assert out.strip().endswith("SUCCESS: 9 rules found")


def test_one_alert_per_deployment_and_per_application_condition(render: Render) -> None:
    names = [alert["alert"] for alert in _rules(render, EVERYTHING)]
    assert names == [*PER_DEPLOYMENT, *PER_DEPLOYMENT, *PER_APPLICATION, "OamOperatorWebhookErrors"]
    without_admission = [alert["alert"] for alert in _rules(render, {"metrics": {"prometheusRule": {"enabled": True}}})]
    assert without_admission == [*PER_DEPLOYMENT, *PER_APPLICATION]
    assert not of_kind(render(), "PrometheusRule") and not of_kind(render(), "ConfigMap")


def test_every_alert_says_what_to_run_and_has_a_severity(render: Render) -> None:
    for alert in _rules(render, EVERYTHING):
        assert alert["labels"]["severity"] in ("critical", "warning"), alert["alert"]
        assert set(alert["annotations"]) == {"summary", "description"}, alert["alert"]
        assert "Look closer: `kubectl" in alert["annotations"]["description"], alert["alert"]
    for alert in _rules(render, EVERYTHING):
        if alert["alert"] in PER_APPLICATION:
            description = alert["annotations"]["description"]
            assert "`kubectl oam status {{ $labels.name }} -n {{ $labels.exported_namespace }} --tree`" in description
            assert alert["labels"]["severity"] == "warning"


def test_thresholds_and_windows_come_from_the_values(render: Render) -> None:
    values = {"metrics": {"prometheusRule": {"enabled": True, "applicationSeverity": "page",
                                             "reconcileErrors": {"threshold": 7, "window": "1h"},
                                             "driftCorrections": {"threshold": 9, "window": "2h"}}}}
    alerts = {alert["alert"]: alert for alert in _rules(render, values)}
    assert alerts["OamApplicationReconcileErrors"]["expr"] == (
        "sum by (namespace, exported_namespace, name) "
        '(increase(oam_operator_application_errors_total{namespace="oam-system"}[1h])) > 7')
    assert alerts["OamApplicationDriftFlapping"]["expr"] == (
        "sum by (namespace, exported_namespace, name) "
        '(increase(oam_operator_application_drift_corrections_total{namespace="oam-system"}[2h])) > 9')
    assert alerts["OamApplicationNotReady"]["expr"] == (
        'max by (namespace, exported_namespace, name) (oam_operator_application_not_ready_seconds{namespace="oam-system"})'
        " > on (namespace, exported_namespace, name) "
        'max by (namespace, exported_namespace, name) (oam_operator_application_timeout_seconds{namespace="oam-system"})'
        " unless on (namespace, exported_namespace, name) "
        'max by (namespace, exported_namespace, name) (oam_operator_application_rolled_back{namespace="oam-system"}) > 0')
    assert alerts["OamApplicationRolledBack"]["expr"] == (
        'max by (namespace, exported_namespace, name) (oam_operator_application_rolled_back{namespace="oam-system"}) > 0')
    assert {alerts[name]["labels"]["severity"] for name in PER_APPLICATION} == {"page"}


def _dashboard(render: Render, values: dict[str, Any] = EVERYTHING) -> tuple[dict[str, Any], dict[str, Any]]:
    config_map = one(render(values), "ConfigMap", f"{NAME}-dashboard")
    return config_map, json.loads(config_map["data"]["oam-operator.json"])


def test_the_dashboard_is_a_configmap_for_the_grafana_sidecar(render: Render) -> None:
    config_map, dashboard = _dashboard(render)
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert config_map["metadata"]["namespace"] == "oam-system"
    elsewhere, _ = _dashboard(render, {"metrics": {"dashboard": {
        "enabled": True, "namespace": "monitoring", "annotations": {"grafana_folder": "Operators"}}}})
    assert elsewhere["metadata"]["namespace"] == "monitoring"
    assert elsewhere["metadata"]["annotations"] == {"grafana_folder": "Operators"}
    assert (dashboard["uid"], dashboard["title"]) == ("oam-operator", "oam-operator")
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    titles = [panel["title"] for panel in dashboard["panels"]]
    for wanted in ("Applications by state", "Pass latency (apply)", "API requests by verb", "Queue depth and concurrency"):
        assert wanted in titles


def test_every_panel_query_is_promql_promtool_accepts(render: Render, promtool: Path, tmp_path: Path) -> None:
    _, dashboard = _dashboard(render)
    defined = {variable["name"] for variable in dashboard["templating"]["list"]}
    queries = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    queries += [variable["query"]["query"] for variable in dashboard["templating"]["list"] if variable["type"] == "query"]
    rules = []
    for number, query in enumerate(queries):
        used = set(re.findall(r"\$(\w+)", query)) - {"__rate_interval"}
        assert used <= defined, query
        for variable, value in VARIABLES.items():
            query = query.replace(variable, value)
        if query.startswith("label_values("):  # Grafana's function: check its series selector
            query = query.removeprefix("label_values(").rsplit(",", 1)[0]
        rules.append({"record": f"dashboard:query_{number}", "expr": query})
    out = _check_rules(promtool, tmp_path, [{"name": "dashboard", "rules": rules}])
    assert out.strip().endswith(f"SUCCESS: {len(rules)} rules found")
    every = " ".join(target["expr"] for panel in dashboard["panels"] for target in panel["targets"])
    for metric in ("oam_operator_applications", "oam_operator_reconcile_duration_seconds_bucket",
                   "oam_operator_api_requests_total", "oam_operator_pass_queue_depth"):
        assert metric in every
    per_shard = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]
                 if "shard" not in target["expr"]]
    assert per_shard == []
