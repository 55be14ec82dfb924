"""Fixtures of the chart tests: the helm and promtool binaries built by ``tools/devcluster/build.sh``
(a missing one skips these tests, or fails them with ``OAM_REQUIRE_CLUSTER=1`` as in ``make test``
and CI) and a ``render`` function over the chart."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tools.devcluster import BinariesMissing
from tools.devcluster.helm import render as render_chart
from tools.devcluster.helm import require_helm
from tools.devcluster.promtool import require_promtool
from tools.devcluster.pytest_plugin import require_cluster


@pytest.fixture(scope="session")
def helm() -> Path:
    try:
        return require_helm()
    except BinariesMissing as error:
        if require_cluster():
            pytest.fail(str(error), pytrace=False)
        pytest.skip(str(error))


@pytest.fixture(scope="session")
def promtool() -> Path:
    try:
        return require_promtool()
    except BinariesMissing as error:
        if require_cluster():
            pytest.fail(str(error), pytrace=False)
        pytest.skip(str(error))


@pytest.fixture(scope="session")
def helm_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("helm-home")


@pytest.fixture(scope="session")
def render(helm: Path, helm_home: Path) -> Callable[..., list[dict[str, Any]]]:
    """``render(values=None, release="oam", namespace="oam-system")`` → the rendered objects."""

    rendered: dict[str, list[dict[str, Any]]] = {}  # one helm run per distinct input, each test gets a copy

    def run(values: dict[str, Any] | None = None, **kwargs: Any) -> list[dict[str, Any]]:
        key = json.dumps([values, kwargs], sort_keys=True, default=str)
        if key not in rendered:
            rendered[key] = render_chart(helm, helm_home, values=values, **kwargs)
        return copy.deepcopy(rendered[key])

    return run
