"""The CLI reaches the clusters of standard ClusterProfiles as the operator does
(docs/multicluster.md#the-standard-cluster-inventory, docs/multicluster.md#diff-against-the-remote-cluster):
``diff`` resolves a profile name across both kinds with ``--inventory-namespaces``, compares with
the spoke through the access provider's server and the token Secret (read with the user's
credentials), warns of an unhealthy control plane and still compares, refuses with the
operator's words; a fleet diff selects over both kinds.

``diff FILE`` needs no operator (nothing delivered yet: each comparison is a create); the
operator then delivers the Application, and ``diff NAME`` and ``status`` see it on the spoke.
The standard CRD, the spokes' tokens and the standard profiles are test_inventory_e2e.py's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2ekit import GROUP, VERSION, Kube, configmap_component
from kubernetes import client
from test_inventory_e2e import Inventory, accessed, healthy, profiles, spoke_cluster, spokes, standard_crd, tokens
from test_multicluster_e2e import Spoke, put_kubeconfig_secret, put_secret

__all__ = ["profiles", "spokes", "standard_crd", "tokens"]  # the fixtures this module uses


def cli(kube: Kube, *args: str, kubeconfig: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_PROXY", "no_proxy")}
    env["NO_PROXY"] = "127.0.0.1,localhost"
    for name in ("OAM_OPERATOR_OPERATOR_NAMESPACE", "OAM_OPERATOR_INVENTORY_NAMESPACES"):
        env.pop(name, None)  # the options say where the profiles and Secrets are
    return subprocess.run([str(Path(sys.executable).parent / "oam-operator"), *args, "-n", kube.namespace,
                           "--kubeconfig", kubeconfig or kube.cluster.kubeconfig], capture_output=True, text=True,
                          timeout=120, check=False, env=env)


def diff(kube: Kube, target: Path | str, *options: str, kubeconfig: str = "") -> subprocess.CompletedProcess[str]:
    return cli(kube, "diff", str(target), "--operator-namespace", kube.namespace, *options, kubeconfig=kubeconfig)


def application(tmp_path: Path, name: str, spec: dict[str, Any]) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application",
                                    "metadata": {"name": name}, "spec": spec}))
    return path


def reader_kubeconfig(kube: Kube, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A ServiceAccount that may read the profiles of both kinds, Applications and the hub's
    namespaces, but no Secret: a kubeconfig with its token."""
    ns, rbac = kube.namespace, client.RbacAuthorizationV1Api(kube.api)
    kube.core.create_namespaced_service_account(ns, {"metadata": {"name": "reader"}})
    subjects = [{"kind": "ServiceAccount", "name": "reader", "namespace": ns}]
    rbac.create_cluster_role({"metadata": {"name": f"{ns}-reader"}, "rules": [
        {"apiGroups": [GROUP], "resources": ["clusterprofiles", "applications"], "verbs": ["get", "list"]},
        {"apiGroups": ["multicluster.x-k8s.io"], "resources": ["clusterprofiles"], "verbs": ["get", "list"]},
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}]})
    request.addfinalizer(lambda: rbac.delete_cluster_role(f"{ns}-reader"))
    rbac.create_cluster_role_binding({"metadata": {"name": f"{ns}-reader"}, "subjects": subjects, "roleRef": {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{ns}-reader"}})
    request.addfinalizer(lambda: rbac.delete_cluster_role_binding(f"{ns}-reader"))
    token = kube.core.create_namespaced_service_account_token(
        "reader", ns, {"spec": {"expirationSeconds": 3600}}).status.token
    cluster = yaml.safe_load(Path(kube.cluster.kubeconfig).read_text())["clusters"][0]
    path = tmp_path / "reader.kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "clusters": [cluster],
        "users": [{"name": "reader", "user": {"token": token}}],
        "contexts": [{"name": "reader", "context": {"cluster": cluster["name"], "user": "reader"}}],
        "current-context": "reader"}))
    return str(path)


def test_diff_reaches_standard_profiles_and_a_fleet_across_both_kinds(
        start_operator: Any, kube: Kube, spokes: list[Spoke], tokens: list[str], standard_crd: None,
        profiles: list[str], tmp_path: Path, request: pytest.FixtureRequest) -> None:
    first, second = spokes
    ns = kube.namespace
    put_kubeconfig_secret(kube, "spoke-1", first)
    own = f"{ns}-own"
    kube.custom.create_cluster_custom_object(GROUP, VERSION, "clusterprofiles", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterProfile", "metadata": {"name": own, "labels": {"env": "cli"}},
        "spec": {"kubeConfig": {"secretRef": {"name": "spoke-1"}}}})
    profiles.append(own)
    inventory = Inventory(kube)
    put_secret(kube, "std-token", {"token": tokens[1].encode()})
    std = inventory.create("std", accessed(second, "std-token"), healthy(), env="cli")
    where = f"ClusterProfile {ns}/{std} (multicluster.x-k8s.io)"
    server = spoke_cluster(second)["server"]
    shop = application(tmp_path, "shop", {"profile": std, "components": [configmap_component("settings")]})

    # Without the inventory namespaces the name is unknown, in the operator's words.
    result = diff(kube, shop)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"Error: ClusterProfile {std} not found\n")

    # With them: compared with the spoke, through the access provider and the token Secret.
    result = diff(kube, shop, "--inventory-namespaces", ns)
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout.splitlines() == [
        f"Compared with cluster {server} (ClusterProfile {ns}/{std} (multicluster.x-k8s.io))",
        "Wave shop:", f"  create ConfigMap {ns}/settings"]

    # A fleet across both kinds: one section per selected cluster, in name order.
    fleet = application(tmp_path, "fleet", {"components": [configmap_component("settings")], "policies": [
        {"name": "everywhere", "type": "topology", "properties": {"clusterSelector": {"matchLabels": {"env": "cli"}}}}]})
    result = diff(kube, fleet, "--inventory-namespaces", ns)
    assert (result.returncode, result.stderr) == (1, "")
    lines = result.stdout.splitlines()
    headings = [line for line in lines if line.startswith(("Cluster ", "  Compared with "))]
    assert headings == [
        f"Cluster {own} (Application {ns}/fleet-{own}):",
        f"  Compared with cluster {spoke_cluster(first)['server']} (ClusterProfile {own})",
        f"Cluster {std} (Application {ns}/fleet-{std}):",
        f"  Compared with cluster {server} (ClusterProfile {ns}/{std} (multicluster.x-k8s.io))",
        "Cluster Applications on the hub:",
    ]
    assert lines[-2:] == [f"  create Application {ns}/fleet-{own}", f"  create Application {ns}/fleet-{std}"]

    # Delivered by the operator: the live Application is in sync there, and status names the cluster.
    start_operator(ns, "--inventory-namespaces", ns)
    kube.apply_app("shop", {"profile": std, "components": [configmap_component("settings")]})
    kube.wait_ready("shop")
    result = diff(kube, "shop", "--inventory-namespaces", ns)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (f"Compared with cluster {server} (ClusterProfile {ns}/{std} (multicluster.x-k8s.io))\n"
                             "no changes\n")
    status = cli(kube, "status", "shop")
    assert f"Cluster: {second.cluster_id} (ClusterProfile {std})" in status.stdout.splitlines()

    # ControlPlaneHealthy False: a warning, and compared with all the same.
    inventory.set_status(std, accessed(second, "std-token"), healthy("False", "etcd is down"))
    result = diff(kube, shop, "--inventory-namespaces", ns)
    assert result.returncode == 0  # the operator delivered it before
    assert result.stderr == (f"warning: {where}: ControlPlaneHealthy is False: etcd is down; the operator connects "
                             "once it is True\n")
    assert result.stdout == (f"Compared with cluster {server} (ClusterProfile {ns}/{std} (multicluster.x-k8s.io))\n"
                             "no changes\n")

    # A user who may not read the token Secret.
    result = diff(kube, shop, "--inventory-namespaces", ns, kubeconfig=reader_kubeconfig(kube, tmp_path, request))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"Error: {where} delivers to the cluster with the token in the Secret {ns}/std-token, "
                             "which you may not read: the diff needs get on it\n")

    # The token Secret gone: the operator's refusal.
    kube.core.delete_namespaced_secret("std-token", ns)
    result = diff(kube, shop, "--inventory-namespaces", ns)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f'Error: {where}: token Secret {ns}/std-token of access provider "secretreader" not found\n'
