"""Replicas and leader election in the chart (docs/chart.md#replicas-and-leader-election): two
instances per Deployment (each shard's too), rolled one at a time, a PodDisruptionBudget each, the
Lease rights in the release namespace, the Lease settings as flags, and the alert on no leader."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.unit.helm.test_chart_deployment import settings_of
from tests.unit.unitkit import args, of_kind, one

Render = Callable[..., list[dict[str, Any]]]
NAME = "oam-oam-operator"
ROLLING = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}


def _args(deployment: dict[str, Any]) -> list[str]:
    result: list[str] = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    return result


def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A label selector's verdict on ``labels`` (matchLabels and the DoesNotExist/In expressions used here)."""
    if not selector.get("matchLabels", {}).items() <= labels.items():
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator = expression["key"], expression["operator"]
        if operator == "DoesNotExist" and key in labels:
            return False
        if operator == "In" and labels.get(key) not in expression["values"]:
            return False
    return True


def test_two_instances_per_deployment_with_leader_election_by_default(render: Render) -> None:
    objects = render({"sharding": {"shards": ["eu"]}})
    for deployment, lease in zip(of_kind(objects, "Deployment"), (NAME, f"{NAME}-shard-eu"), strict=True):
        assert deployment["spec"]["replicas"] == 2 and deployment["spec"]["strategy"] == ROLLING
        settings = settings_of(_args(deployment))
        assert settings.leader_election and settings.lease_name == lease
        assert settings.lease_timings == (15.0, 10.0, 2.0)
        # What the Pod sees: its namespace from the downward API holds the Lease; the settings can start.
        assert settings.lease_namespace({"POD_NAMESPACE": "oam-system"}, Path("/nonexistent")) == "oam-system"
        assert settings.combination_error({"POD_NAMESPACE": "oam-system"}, Path("/nonexistent")) is None


def test_the_lease_settings_reach_their_flags_and_a_bad_combination_is_refused_at_start(render: Render) -> None:
    objects = render({"leaderElection": {"leaseDuration": "30s", "renewDeadline": "20s", "retryPeriod": "5s"}})
    assert settings_of(args(objects)).lease_timings == (30.0, 20.0, 5.0)
    bad = settings_of(args(render({"leaderElection": {"renewDeadline": "15s"}})))
    error = bad.combination_error({"POD_NAMESPACE": "oam-system"})
    assert error is not None and str(error).startswith(
        "--leader-election-renew-deadline (15s) must be less than --leader-election-lease-duration (15s)")


def test_the_lease_rights_in_the_release_namespace(render: Render) -> None:
    for values in ({}, {"rbac": {"mode": "leastPrivilege"}},
                   {"rbac": {"namespaced": True}, "operator": {"watchNamespaces": ["team-a"]}}):
        objects = render({**values, "sharding": {"shards": ["eu"]}})
        role = one(objects, "Role", f"{NAME}-leader-election", "oam-system")
        assert role["rules"] == [
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["list", "watch", "create"]},
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
             "resourceNames": [NAME, f"{NAME}-shard-eu"], "verbs": ["get", "update"]},
        ]
        binding = one(objects, "RoleBinding", f"{NAME}-leader-election", "oam-system")
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                      "name": f"{NAME}-leader-election"}
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": NAME, "namespace": "oam-system"}]


def test_one_disruption_budget_per_deployment_selecting_exactly_its_pods(render: Render) -> None:
    objects = render({"sharding": {"shards": ["eu", "us"]}})
    budgets = {b["metadata"]["name"]: b for b in of_kind(objects, "PodDisruptionBudget")}
    deployments = {d["metadata"]["name"]: d for d in of_kind(objects, "Deployment")}
    assert set(budgets) == set(deployments) == {NAME, f"{NAME}-eu", f"{NAME}-us"}
    for name, budget in budgets.items():
        assert budget["spec"]["minAvailable"] == 1
        selected = {other for other, deployment in deployments.items()
                    if _selects(budget["spec"]["selector"], deployment["spec"]["template"]["metadata"]["labels"])}
        assert selected == {name}
    assert not of_kind(render({"podDisruptionBudget": {"enabled": False}}), "PodDisruptionBudget")


def test_the_alert_when_no_instance_leads(render: Render) -> None:
    assert not of_kind(render(), "PrometheusRule")
    objects = render({"sharding": {"shards": ["eu"]}, "metrics": {"prometheusRule": {"enabled": True,
                                                                                     "labels": {"team": "ops"}}}})
    rule = one(objects, "PrometheusRule", NAME, "oam-system")
    assert rule["metadata"]["labels"]["team"] == "ops"
    alerts = [alert for alert in rule["spec"]["groups"][0]["rules"] if alert["alert"] == "OamOperatorNoLeader"]
    assert [(a["alert"], a["expr"], a["for"], a["labels"]) for a in alerts] == [
        ("OamOperatorNoLeader", 'absent(oam_operator_leader{namespace="oam-system", shard=""} == 1)', "1m",
         {"severity": "critical", "namespace": "oam-system", "shard": ""}),
        ("OamOperatorNoLeader", 'absent(oam_operator_leader{namespace="oam-system", shard="eu"} == 1)', "1m",
         {"severity": "critical", "namespace": "oam-system", "shard": "eu"}),
    ]


def test_without_leader_election_one_instance_recreated(render: Render) -> None:
    objects = render({"leaderElection": {"enabled": False}, "replicas": 1})
    deployment = one(objects, "Deployment")
    assert deployment["spec"]["replicas"] == 1 and deployment["spec"]["strategy"] == {"type": "Recreate"}
    assert "--no-leader-election" in args(objects) and not settings_of(args(objects)).leader_election
    assert not [r for r in of_kind(objects, "Role") if r["metadata"]["name"].endswith("-leader-election")]


@pytest.mark.parametrize(("values", "message"), [
    ({"leaderElection": {"enabled": False}},
     "replicas > 1 needs leaderElection.enabled=true: without leader election every instance reconciles the same "
     "Applications"),
    ({"peering": {"enabled": True}},
     "peering.enabled=true with replicas > 1: kopf peering pauses every instance of equal priority; leader "
     "election (leaderElection.enabled) chooses the instance that reconciles"),
])
def test_combinations_that_cannot_work_fail_with_a_message(helm: Path, helm_home: Path, values: dict[str, Any],
                                                           message: str) -> None:
    from tools.devcluster.helm import HelmError, template

    with pytest.raises(HelmError) as error:
        template(helm, helm_home, values=values)
    assert message in str(error.value)
