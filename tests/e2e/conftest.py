"""End-to-end harness: the operator as a real process (``oam-operator run``) against the full
control plane (docs/operator.md#the-operator).

Each test gets its own namespace and its own operator process watching only that namespace
(``--namespace``), so operators with different settings never reconcile each other's
Applications. CRDs come from ``crds/``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2ekit import Kube, OperatorProcess, install_crds

from tools.devcluster import ClusterHandle
from tools.devcluster.pytest_plugin import default_wait


@pytest.fixture(scope="session")
def crds_installed(full_cluster: ClusterHandle) -> None:
    install_crds(full_cluster)


@pytest.fixture
def start_operator(
    full_cluster: ClusterHandle, crds_installed: None, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[..., OperatorProcess]]:
    started: list[OperatorProcess] = []

    def start(namespace: str, *extra: str, kubeconfig: str | None = None) -> OperatorProcess:
        """An operator of ``namespace`` on the full cluster (``kubeconfig``: another one's)."""
        operator = OperatorProcess.start(
            tmp_path / f"operator-{len(started)}.log", kubeconfig=kubeconfig or full_cluster.kubeconfig,
            namespaces=[namespace],
            # Leader election is on by default; outside a Pod its Lease needs a namespace: the test's.
            operator_namespace=namespace,
            # Most tests deploy with the operator's own identity, an explicit opt-in since
            # least privilege became the default; a test passes --no-use-operator-identity
            # (the later flag wins) to see the default.
            extra=["--default-interval", "30s", "--use-operator-identity", *extra])
        started.append(operator)
        operator.wait_serving(default_wait(full_cluster), leader_gauge=False)  # the liveness endpoint
        return operator

    yield start
    for operator in started:
        operator.stop()
    if getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed:
        for operator in started:
            sys.stderr.write(f"\n--- operator log {operator.log_path} ---\n{operator.log_path.read_text()[-5000:]}\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture
def kube(full_cluster: ClusterHandle, full_namespace: str, full_kube_api: Any) -> Kube:
    return Kube(full_kube_api, full_namespace, full_cluster)


