"""`helm lint --strict` passes for every documented value combination (docs/chart.md#the-helm-chart)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.devcluster.helm import CHART, run_helm

COMBINATIONS = {
    "defaults": [],
    "least-privilege": ["--set", "rbac.mode=leastPrivilege"],
    "namespace-scoped": ["--set", "rbac.namespaced=true", "--set", "operator.watchNamespaces={team-a,team-b}"],
    "namespace-scoped-least-privilege": ["--set", "rbac.mode=leastPrivilege", "--set", "rbac.namespaced=true",
                                         "--set", "operator.watchNamespaces={team-a}", "--set", "operator.clusterId=c1"],
    "least-privilege-cluster-scoped": ["--set", "rbac.mode=leastPrivilege",
                                       "--set", "operator.allowClusterScopedObjects=true"],
    "least-privilege-no-cache": ["--set", "rbac.mode=leastPrivilege", "--set", "cache.enabled=false"],
    "service-monitor": ["--set", "metrics.serviceMonitor.enabled=true"],
    "alerts-and-dashboard": ["--set", "metrics.prometheusRule.enabled=true", "--set", "metrics.dashboard.enabled=true",
                             "--set", "admission.enabled=true", "--set", "sharding.shards={eu}"],
    "peering": ["--set", "peering.enabled=true"],
    "no-crds-no-rbac": ["--set", "crds.install=false", "--set", "rbac.create=false",
                        "--set", "serviceAccount.create=false", "--set", "serviceAccount.name=ops"],
    "metrics-off": ["--set", "metrics.enabled=false"],
}


@pytest.mark.parametrize("name", sorted(COMBINATIONS))
def test_helm_lint_strict(helm: Path, helm_home: Path, name: str) -> None:
    result = run_helm(helm, ["lint", "--strict", str(CHART), *COMBINATIONS[name]], helm_home)
    assert "1 chart(s) linted, 0 chart(s) failed" in result.stdout


def test_helm_lint_rejects_an_unknown_top_level_value(helm: Path, helm_home: Path) -> None:
    result = run_helm(helm, ["lint", str(CHART), "--set", "replicaCount=2"], helm_home, check=False)
    assert result.returncode != 0
    assert "additional properties 'replicaCount' not allowed" in result.stdout + result.stderr
