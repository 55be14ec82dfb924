"""Fixtures of the chart's cluster tests (full control plane, so Deployments become Available).

``helm``: the binary built by ``tools/devcluster/build.sh`` (missing → skip, or fail with
``OAM_REQUIRE_CLUSTER=1``). ``chart_install``: renders the chart for a unique release into the
test's namespace, applies every object but the Deployment (which needs the image) and removes
its cluster-scoped RBAC afterwards. ``chart_operator``: runs the operator locally with the
rendered Deployment's arguments, authenticated with a TokenRequest token of the chart's
ServiceAccount, so it has exactly the rights the chart grants.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration.integrationkit import (
    ChartOperator,
    Obj,
    apply,
    apply_crds,
    delete_cluster_scoped,
    is_crd,
    is_hook,
    service_account_token,
    start_chart_operator,
    token_kubeconfig,
)
from tools.devcluster import BinariesMissing, ClusterHandle
from tools.devcluster.helm import render, require_helm
from tools.devcluster.pytest_plugin import default_wait, require_cluster, wait_until
from tools.operatorprocess import free_port


@pytest.fixture(scope="session")
def helm() -> Path:
    try:
        return require_helm()
    except BinariesMissing as error:
        if require_cluster():
            pytest.fail(str(error), pytrace=False)
        pytest.skip(str(error))


@pytest.fixture(scope="session")
def operator_image() -> str:
    """The tag of the image ``make image`` built (missing → skip, or fail with ``OAM_REQUIRE_CLUSTER=1``)."""
    from tests.integration.integrationkit import image_missing, image_tag

    why = image_missing()
    if why is not None:
        if require_cluster():
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    return image_tag()


@dataclass
class Release:
    name: str
    namespace: str
    objects: list[Obj]

    @property
    def service_account(self) -> str:
        deployment = next(o for o in self.objects if o["kind"] == "Deployment")
        name: str = deployment["spec"]["template"]["spec"]["serviceAccountName"]
        return name


@pytest.fixture
def chart_install(helm: Path, full_cluster: ClusterHandle, full_namespace: str, full_kube_api: Any,
                  tmp_path: Path) -> Iterator[Callable[[dict[str, Any]], Release]]:
    """``chart_install(values)`` → the applied release (ports are free local ports)."""
    applied: list[Obj] = []

    def install(values: dict[str, Any]) -> Release:
        values = {**values, "metrics": {**values.get("metrics", {}), "port": free_port()},
                  "health": {"port": free_port()}}
        name = f"oam-{secrets.token_hex(3)}"
        objects = render(helm, tmp_path / "helm", release=name, namespace=full_namespace, values=values)
        apply_crds(full_kube_api, full_cluster, objects)
        rest = [o for o in objects if not is_crd(o) and o["kind"] != "Deployment"]
        applied.extend(rest)
        apply(full_kube_api, [o for o in rest if not is_hook(o)])
        apply(full_kube_api, [o for o in rest if is_hook(o)])
        return Release(name, full_namespace, objects)

    yield install
    delete_cluster_scoped(full_kube_api, applied)


@pytest.fixture
def chart_operator(full_cluster: ClusterHandle, full_kube_api: Any, tmp_path: Path,
                   request: pytest.FixtureRequest) -> Iterator[Callable[[Release], ChartOperator]]:
    started: list[ChartOperator] = []

    def start(release: Release) -> ChartOperator:
        token = service_account_token(full_kube_api, release.namespace, release.service_account)
        kubeconfig = token_kubeconfig(full_cluster.kubeconfig, token, tmp_path / f"{release.name}.kubeconfig",
                                      f"system:serviceaccount:{release.namespace}:{release.service_account}")
        operator = start_chart_operator(release.objects, kubeconfig, tmp_path / f"{release.name}-operator.log")
        started.append(operator)
        wait_until(operator.healthy, default_wait(full_cluster), "the operator's liveness endpoint")
        return operator

    yield start
    for operator in started:
        operator.stop()
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        for operator in started:
            sys.stderr.write(f"\n--- operator log {operator.log_path} ---\n{operator.log()}\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
