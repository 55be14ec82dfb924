"""Every rendered object of every documented value combination is accepted by the API server
(server-side dry-run apply after the CRDs are applied for real): the manifests validate against
the Kubernetes schemas (docs/chart.md#the-helm-chart). The ServiceMonitor is left out: its CRD belongs to the
Prometheus Operator, which the local control plane does not have."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from tests.integration.integrationkit import apply, apply_crds, is_crd
from tools.devcluster import ClusterHandle
from tools.devcluster.helm import render
from tools.devcluster.pytest_plugin import RUN_ID, RUN_LABEL

MODES: dict[str, dict[str, Any]] = {
    "defaults": {},
    "least-privilege": {"rbac": {"mode": "leastPrivilege"}},
    "namespace-scoped": {"rbac": {"namespaced": True}},
    "namespace-scoped-least-privilege-peering": {"rbac": {"namespaced": True, "mode": "leastPrivilege"},
                                                 "peering": {"enabled": True}, "operator": {"clusterId": "c1"},
                                                 "replicas": 1},  # kopf peering: one instance
    "peering": {"peering": {"enabled": True}, "replicas": 1},
    "service-monitor": {"metrics": {"serviceMonitor": {"enabled": True}}},
}


@pytest.fixture
def other_namespace(full_kube_api: Any) -> Iterator[str]:
    core = client.CoreV1Api(full_kube_api)
    name = f"t-helm-other-{secrets.token_hex(3)}"
    core.create_namespace({"metadata": {"name": name, "labels": {RUN_LABEL: RUN_ID}}})
    yield name
    core.delete_namespace(name, propagation_policy="Background")


@pytest.mark.parametrize("mode", sorted(MODES))
def test_rendered_manifests_are_accepted(mode: str, helm: Path, full_cluster: ClusterHandle, full_namespace: str,
                                         other_namespace: str, full_kube_api: Any, tmp_path: Path) -> None:
    values = dict(MODES[mode])
    if mode.startswith("namespace-scoped"):
        values["operator"] = {**values.get("operator", {}), "watchNamespaces": [full_namespace, other_namespace]}
    objects = render(helm, tmp_path, release=f"dry-{secrets.token_hex(3)}", namespace=full_namespace, values=values)
    apply_crds(full_kube_api, full_cluster, objects)
    rest = [o for o in objects if not is_crd(o) and o["kind"] != "ServiceMonitor"]
    assert {"Deployment", "ServiceAccount"} <= {o["kind"] for o in rest}
    accepted = apply(full_kube_api, rest, dry_run=True)
    assert [(a["kind"], a["metadata"]["name"]) for a in accepted] == [(o["kind"], o["metadata"]["name"]) for o in rest]
    if mode.startswith("namespace-scoped"):
        roles = {(a["metadata"]["namespace"], a["kind"]) for a in accepted if a["kind"] in ("Role", "RoleBinding")}
        assert roles == {(ns, kind) for ns in (full_namespace, other_namespace) for kind in ("Role", "RoleBinding")}
