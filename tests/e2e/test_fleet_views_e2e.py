"""The per-cluster views of a fleet Application against real control planes
(docs/multicluster.md#the-clusters-in-status-and-diff, docs/multicluster.md#one-cluster-offline):
``status --tree`` lists each cluster with its cluster Application's items, ``diff`` has one
section per selected cluster compared with that cluster plus the hub's cluster Applications
created or pruned, and ``build --profile`` of a profile as the cluster holds it prints what its
cluster Application applies. One test, step by step, to keep the suite's time low.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from e2ekit import GROUP, VERSION, Kube, configmap_component
from test_fleet_e2e import labelled_profile, topology, wait_clusters
from test_multicluster_e2e import Spoke, profiles, put_kubeconfig_secret, spokes
from test_ui_e2e import browser, page, start_ui

from tools.devcluster.pytest_plugin import default_wait

__all__ = ["browser", "page", "profiles", "spokes", "start_ui"]  # fixtures of the multicluster and UI tests


def cli(kube: Kube, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_PROXY", "no_proxy", "OAM_OPERATOR_OPERATOR_NAMESPACE")}
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return subprocess.run([str(Path(sys.executable).parent / "oam-operator"), *args],
                          capture_output=True, text=True, timeout=120, check=False, env=env)


def diff(kube: Kube, target: str) -> subprocess.CompletedProcess[str]:
    return cli(kube, "diff", target, "-n", kube.namespace, "--kubeconfig", kube.cluster.kubeconfig,
               "--operator-namespace", kube.namespace)


def document(kube: Kube, spec: dict[str, Any], path: Path) -> str:
    path.write_text(yaml.safe_dump({"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application",
                                    "metadata": {"name": "shop", "namespace": kube.namespace}, "spec": spec}))
    return str(path)


def test_status_diff_build_and_the_ui_show_each_cluster(
        start_operator: Any, kube: Kube, spokes: list[Spoke], profiles: list[str], tmp_path: Path,
        start_ui: Callable[..., str], page: Any) -> None:
    first, second = spokes
    put_kubeconfig_secret(kube, "spoke-1", first)
    put_kubeconfig_secret(kube, "spoke-2", second)
    one = labelled_profile(kube, profiles, "one", "spoke-1", env="prod")
    two = labelled_profile(kube, profiles, "two", "spoke-2", env="test")
    start_operator(kube.namespace)
    override = {"name": "second", "type": "override", "properties": {"clusters": [two], "components": [
        {"name": "settings", "properties": {"object": {"data": {"key": "second"}}}}]}}
    spec = {"components": [configmap_component("settings")],
            "policies": [topology({"matchLabels": {"env": "prod"}}), override]}
    kube.apply_app("shop", spec)
    wait_clusters(kube, "shop", "1/1")
    ns = kube.namespace
    heading_one = f"Cluster {one} (Application {ns}/shop-{one}):"
    compared_one = f"  Compared with cluster {first.handle.server} (ClusterProfile {one})"
    compared_two = f"  Compared with cluster {second.handle.server} (ClusterProfile {two})"

    # status --tree: the cluster, its cluster Application's bundle and items under it.
    status = cli(kube, "status", "shop", "-n", ns, "--tree", "--kubeconfig", kube.cluster.kubeconfig)
    assert (status.returncode, status.stderr) == (0, "")
    lines = status.stdout.splitlines()
    at = lines.index(f"Cluster {one} (Application shop-{one})  State: Ready  Objects: 1/1 ready")
    assert lines[at + 1].split() == [f"shop-{one}", "Ready", "1/1"]  # its bundle, named after it
    assert lines[at + 2].split()[:3] == ["└──", "ConfigMap", "settings"]
    waited = cli(kube, "status", "shop", "-n", ns, "--tree", "--wait", "--timeout", "30s",
                 "--kubeconfig", kube.cluster.kubeconfig)
    assert (waited.returncode, waited.stdout) == (0, status.stdout)  # --wait ends with the same tree

    # The UI: the list's CLUSTERS, the detail's clusters, each a link to its cluster Application.
    url = start_ui("--kubeconfig", kube.cluster.kubeconfig, "-n", ns)
    wait = default_wait(kube.cluster) * 1000
    page.goto(url)
    page.wait_for_selector(f"tr[data-app='{ns}/shop'] td[data-col=clusters]:text-is('1/1')", timeout=wait)
    page.goto(f"{url}#/app/{ns}/shop")
    row = page.locator(f"tr[data-cluster='{one}']")
    row.wait_for(timeout=wait)
    assert page.locator("#cluster-summary").inner_text() == "1/1 ready"
    assert row.locator("td").all_inner_texts()[:4] == [one, "Ready", "r1", "1/1"]
    # Its diff is the CLI's, one section per cluster: the UI, started without the operator's
    # namespace in its environment, cannot find the profile's Secret, and says so in that section.
    page.get_by_role("button", name="Show diff").click()
    page.wait_for_function("() => !document.getElementById('diff').textContent.startsWith('computing')",
                           timeout=wait)
    assert page.locator("#diff").inner_text().splitlines() == [
        f"Cluster {one} (Application {ns}/shop-{one}):",
        f"  Error: ClusterProfile {one}: its kubeconfig Secret spoke-1 is in the operator's namespace: name it "
        "with --operator-namespace (OAM_OPERATOR_OPERATOR_NAMESPACE)"]
    row.locator("a").click()
    page.wait_for_selector(f".root-node:text-is('Application {ns}/shop-{one}')", timeout=wait)
    assert page.locator("#app-state").inner_text() == "Ready"

    # diff NAME: in sync on the one selected cluster.
    result = diff(kube, "shop")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "\n".join([heading_one, compared_one, "  no changes"]) + "\n"

    # diff FILE selecting both: the second cluster's section creates its override's ConfigMap,
    # and its cluster Application would be created on the hub.
    both = document(kube, {**spec, "policies": [
        topology({"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "test"]}]}), override]},
        tmp_path / "both.yaml")
    result = diff(kube, both)
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout.splitlines() == [
        heading_one, compared_one, "  no changes",
        f"Cluster {two} (Application {ns}/shop-{two}):", compared_two, f"  Wave shop-{two}:",
        f"    create ConfigMap {ns}/settings",
        "Cluster Applications on the hub:", f"  create Application {ns}/shop-{two}"]
    assert second.configmaps() == {}  # a dry run only

    # diff FILE changing a component: the cluster's object and its cluster Application's spec.
    edited = document(kube, {**spec, "components": [configmap_component("settings", {"key": "edited"})]},
                      tmp_path / "edited.yaml")
    result = diff(kube, edited)
    assert (result.returncode, result.stderr) == (1, "")
    lines = result.stdout.splitlines()
    assert lines[:4] == [heading_one, compared_one, f"  Wave shop-{one}:", f"    change ConfigMap {ns}/settings"]
    hub = lines.index("Cluster Applications on the hub:")
    assert lines[hub + 1] == f"  change Application {ns}/shop-{one}"
    assert "    -          key: settings" in lines[hub:] and "    +          key: edited" in lines[hub:]

    # diff FILE moving to the second cluster: the first's cluster Application would be pruned.
    moved = document(kube, {**spec, "policies": [topology({"matchLabels": {"env": "test"}}), override]},
                     tmp_path / "moved.yaml")
    result = diff(kube, moved)
    assert result.returncode == 1 and result.stdout.splitlines()[-2:] == [
        f"  create Application {ns}/shop-{two}",
        f"  prune Application {ns}/shop-{one} (ClusterProfile {one} is no longer selected; onRemoval: delete)"]

    # One cluster that cannot be compared is its section's error; the others are still shown.
    kube.core.delete_namespaced_secret("spoke-2", ns)
    result = diff(kube, both)
    assert result.returncode == 2
    assert result.stdout.splitlines()[:5] == [
        heading_one, compared_one, "  no changes", f"Cluster {two} (Application {ns}/shop-{two}):",
        f"  Error: ClusterProfile {two}: kubeconfig Secret {ns}/spoke-2 not found"]

    # build --profile of the profile as the cluster holds it: its override merged, or refused.
    for name in (one, two):
        held = kube.custom.get_cluster_custom_object(GROUP, VERSION, "clusterprofiles", name)
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(held))
    built = cli(kube, "build", both, "--profile", str(tmp_path / f"{two}.yaml"))
    assert (built.returncode, built.stderr) == (0, "")
    assert yaml.safe_load(built.stdout)["data"] == {"key": "second"}
    refused = cli(kube, "build", moved, "--profile", str(tmp_path / f"{one}.yaml"))
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == (f"Error: ClusterProfile {one} (labels: env=prod) is not selected by the topology "
                              'policy "fleet": the Application delivers nothing to it\n')
