"""The chart's CRD templates render exactly the repository's crds/
(docs/chart.md#the-helm-chart, docs/operator.md#printer-columns).

files/crds/ holds byte-identical copies of crds/ (a chart cannot read files outside itself);
after `oam-operator crd --output-dir crds` regenerates the CRDs, refresh them with
`cp crds/*.yaml deploy/helm/oam-operator/files/crds/`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.unit.unitkit import of_kind
from tools.devcluster.helm import CHART

ROOT = Path(__file__).resolve().parents[3]
Render = Callable[..., list[dict[str, Any]]]


def repository_crds() -> dict[str, dict[str, Any]]:
    crds = {}
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                crds[doc["metadata"]["name"]] = doc
    return crds


def test_chart_files_are_byte_identical_copies_of_crds() -> None:
    chart_files = sorted(p.name for p in (CHART / "files" / "crds").glob("*.yaml"))
    assert chart_files == sorted(p.name for p in (ROOT / "crds").glob("*.yaml"))
    for name in chart_files:
        assert (CHART / "files" / "crds" / name).read_bytes() == (ROOT / "crds" / name).read_bytes(), (
            f"deploy/helm/oam-operator/files/crds/{name} differs from crds/{name}: "
            "cp crds/*.yaml deploy/helm/oam-operator/files/crds/")


def test_rendered_crds_equal_the_repository_crds_plus_chart_metadata(render: Render) -> None:
    rendered = {o["metadata"]["name"]: o for o in of_kind(render(), "CustomResourceDefinition")}
    expected = repository_crds()
    assert set(rendered) == set(expected) == {"applications.oam-operator.dev", "clusterprofiles.oam-operator.dev",
                                              "notifications.oam-operator.dev"}
    for name, crd in rendered.items():
        metadata = crd["metadata"]
        assert metadata["annotations"] == {"helm.sh/resource-policy": "keep"}
        assert metadata["labels"]["app.kubernetes.io/managed-by"] == "Helm"
        stripped = {**crd, "metadata": {k: v for k, v in metadata.items() if k not in ("labels", "annotations")}}
        assert stripped == expected[name], f"the rendered {name} differs from crds/"


def test_crds_install_and_keep_switches(render: Render) -> None:
    assert not of_kind(render({"crds": {"install": False}}), "CustomResourceDefinition")
    for crd in of_kind(render({"crds": {"keep": False}}), "CustomResourceDefinition"):
        assert "annotations" not in crd["metadata"]


def test_app_version_is_the_project_version() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    from oam_operator import __version__

    assert chart["apiVersion"] == "v2"
    assert chart["kubeVersion"] == ">=1.29.0-0"
    assert chart["appVersion"] == project == __version__
