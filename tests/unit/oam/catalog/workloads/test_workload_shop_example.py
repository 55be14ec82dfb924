"""examples/shop.yaml: the workload types together, ordered by placement and dependency policies
(docs/transform.md#ordering-components-into-groups, docs/transform.md#workload-components)."""

from __future__ import annotations

from typing import Any

import yaml
from click.testing import CliRunner
from oamkit import REPO_ROOT

from oam_operator.cli import main

EXAMPLE = REPO_ROOT / "examples" / "shop.yaml"


def build(*args: str) -> str:
    result = CliRunner().invoke(main, ["build", str(EXAMPLE), *args])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def owners(bundle: dict[str, Any]) -> list[str]:
    """The components of a bundle, in order (trait sub-applications belong to their component)."""
    seen: list[str] = []
    for app in bundle["applications"]:
        if app["owner"] not in seen:
            seen.append(app["owner"])
    return seen


def test_three_ordered_groups() -> None:
    tree = yaml.safe_load(build("--tree"))
    root = tree["bundle"]
    assert (tree["node"], root["name"], root["applications"]) == ("shop", "shop", [])
    groups = [(g["name"], g["dependsOn"], owners(g)) for g in root["children"]]
    assert groups == [
        ("shop-infra", [], ["db"]),
        ("shop-services", ["shop-infra"], ["api", "worker"]),
        ("shop-apps", ["shop-services"], ["web", "nightly"]),
    ]
    first = root["children"][0]["applications"][0]
    assert first["objects"] == [
        "apps/v1 StatefulSet default/db",
        "v1 Service default/db",
        "v1 ServiceAccount default/db",
    ]


def test_objects_are_labelled_and_the_database_has_no_claim() -> None:
    objects = list(yaml.safe_load_all(build()))
    kinds = {o["kind"] for o in objects}
    assert {"StatefulSet", "Deployment", "CronJob", "Service", "ServiceAccount"} <= kinds
    assert "PersistentVolumeClaim" not in kinds  # kwok fake nodes provision no volumes
    for obj in objects:
        assert obj["metadata"]["namespace"] == "default"
        assert "oam-operator.dev/component" in obj["metadata"]["labels"]
    statefulset = next(o for o in objects if o["kind"] == "StatefulSet")
    assert "volumeClaimTemplates" not in statefulset["spec"]
