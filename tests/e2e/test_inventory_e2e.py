"""The standard cluster inventory (docs/multicluster.md#the-standard-cluster-inventory): the operator
on the hub (the full control plane) reads SIG-Multicluster's namespaced ClusterProfiles of the
test's namespace (``--inventory-namespaces``) beside its own kind and delivers to the spokes
(minimal control planes) they describe.

The standard CRD is the tests' own minimal one (tests/e2e/data/cluster-inventory), installed on
the hub once and left there. The spokes' admin kubeconfigs carry client certificates, not tokens,
so each test makes a ServiceAccount bound to cluster-admin on its spoke and mints its token with
the TokenRequest API: the bearer token the secretreader convention keeps in the Secret
``<operator namespace>/<clusterName>`` (the operator's namespace is the test's). The test writes
each standard profile's status itself, as a cluster manager would.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2ekit import GROUP, VERSION, Kube, configmap_component
from kubernetes import client, dynamic
from kubernetes.client.exceptions import ApiException
from test_multicluster_e2e import Spoke, message, profiles, put_kubeconfig_secret, put_secret, spokes, wait_message

from tools.devcluster.pytest_plugin import api_client, default_wait, wait_until

__all__ = ["profiles", "spokes"]  # the fixtures this module uses from the multicluster tests

DOMAIN = "oam-operator.dev"
STANDARD_GROUP, STANDARD_VERSION = "multicluster.x-k8s.io", "v1alpha1"
CRD = Path(__file__).resolve().parent / "data/cluster-inventory/multicluster.x-k8s.io_clusterprofiles.yaml"
EXEC = "client.authentication.k8s.io/exec"


@pytest.fixture
def standard_crd(kube: Kube) -> None:
    """The standard ClusterProfile CRD on the hub (idempotent), Established."""
    api = api_client(kube.cluster)
    try:
        resources = dynamic.DynamicClient(api).resources.get(api_version="apiextensions.k8s.io/v1",
                                                              kind="CustomResourceDefinition")
        resources.server_side_apply(body=yaml.safe_load(CRD.read_text()), field_manager="oam-e2e",
                                    force_conflicts=True)
        extensions = client.ApiextensionsV1Api(api)

        def established() -> bool:
            crd = extensions.read_custom_resource_definition(f"clusterprofiles.{STANDARD_GROUP}")
            return any(c.type == "Established" and c.status == "True" for c in crd.status.conditions or [])

        wait_until(established, default_wait(kube.cluster), "the standard ClusterProfile CRD to be Established")
    finally:
        api.close()


@pytest.fixture
def tokens(spokes: list[Spoke]) -> Iterator[list[str]]:
    """A bearer token of cluster-admin on each spoke (a ServiceAccount of the test's namespace there)."""
    minted, bindings = [], []
    for spoke in spokes:
        name = "oam-hub"
        spoke.core.create_namespaced_service_account(spoke.namespace, {"metadata": {"name": name}})
        binding = f"{spoke.namespace}-oam-hub"
        client.RbacAuthorizationV1Api(spoke.api).create_cluster_role_binding({
            "metadata": {"name": binding},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": spoke.namespace}]})
        bindings.append((spoke, binding))
        request = spoke.core.create_namespaced_service_account_token(
            name, spoke.namespace, {"spec": {"expirationSeconds": 3600}})
        minted.append(str(request.status.token))
    yield minted
    for spoke, binding in bindings:
        try:
            client.RbacAuthorizationV1Api(spoke.api).delete_cluster_role_binding(binding)
        except ApiException as error:
            if error.status != 404:
                raise


def spoke_cluster(spoke: Spoke) -> dict[str, Any]:
    """The kubeconfig ``cluster`` of the spoke (server and CA, no credentials)."""
    config = yaml.safe_load(Path(spoke.handle.kubeconfig).read_text())
    return dict(config["clusters"][0]["cluster"])


def accessed(spoke: Spoke, cluster_name: str, provider: str = "secretreader") -> list[dict[str, Any]]:
    """``status.accessProviders`` reaching ``spoke`` through ``provider`` with the token Secret ``cluster_name``."""
    cluster = {**spoke_cluster(spoke), "extensions": [{"name": EXEC, "extension": {"clusterName": cluster_name}}]}
    return [{"name": provider, "cluster": cluster}]


def healthy(status: str = "True", text: str = "the control plane answers") -> list[dict[str, Any]]:
    return [{"type": "ControlPlaneHealthy", "status": status, "reason": "Checked", "message": text,
             "lastTransitionTime": "2026-12-06T10:00:00Z"}]


class Inventory:
    """The standard ClusterProfiles of the test's namespace, written as a cluster manager would."""

    def __init__(self, kube: Kube) -> None:
        self.kube = kube
        self.namespace = kube.namespace

    def create(self, suffix: str, providers: list[dict[str, Any]], conditions: list[dict[str, Any]],
               **labels: str) -> str:
        name = f"{self.namespace}-{suffix}"
        self.kube.custom.create_namespaced_custom_object(STANDARD_GROUP, STANDARD_VERSION, self.namespace,
                                                         "clusterprofiles", {
            "apiVersion": f"{STANDARD_GROUP}/{STANDARD_VERSION}", "kind": "ClusterProfile",
            "metadata": {"name": name, "namespace": self.namespace, "labels": labels},
            "spec": {"clusterManager": {"name": "e2e"}}})
        self.set_status(name, providers, conditions)
        return name

    def set_status(self, name: str, providers: list[dict[str, Any]], conditions: list[dict[str, Any]]) -> None:
        self.kube.custom.patch_namespaced_custom_object_status(
            STANDARD_GROUP, STANDARD_VERSION, self.namespace, "clusterprofiles", name,
            {"status": {"accessProviders": providers, "conditions": conditions}})

    def relabel(self, name: str, **labels: str) -> None:
        self.kube.custom.patch_namespaced_custom_object(STANDARD_GROUP, STANDARD_VERSION, self.namespace,
                                                        "clusterprofiles", name, {"metadata": {"labels": labels}})

    def written_by_others(self) -> list[str]:
        """Managers other than the test's that wrote a standard profile (the operator must not)."""
        listed: Any = self.kube.custom.list_namespaced_custom_object(STANDARD_GROUP, STANDARD_VERSION, self.namespace,
                                                                     "clusterprofiles")
        return sorted({entry.get("manager", "") for item in listed["items"]
                       for entry in item["metadata"].get("managedFields") or []} - {"OpenAPI-Generator"})


def test_a_standard_profile_delivers_through_the_secretreader_token(
        start_operator: Any, kube: Kube, spokes: list[Spoke], tokens: list[str], standard_crd: None,
        profiles: list[str]) -> None:
    spoke, ns = spokes[0], kube.namespace
    inventory = Inventory(kube)
    std = inventory.create("std", accessed(spoke, "std-token"), healthy())
    operator = start_operator(ns, "--inventory-namespaces", ns)
    kube.apply_app("shop", {"profile": std, "components": [configmap_component("settings")]})
    where = f"ClusterProfile {ns}/{std} (multicluster.x-k8s.io)"

    # The refusals, word for word, each let through by the fix without a restart (the Secret's watch).
    refused = wait_message(kube, "shop", f'{where}: token Secret {ns}/std-token of access provider "secretreader" '
                                         "not found")
    assert refused["status"]["state"] == "Error"
    put_secret(kube, "std-token", {"value": b"not a token"})
    wait_message(kube, "shop", f'{where}: Secret {ns}/std-token has no key "token" (its keys: value)')
    put_secret(kube, "std-token", {"token": tokens[0].encode()})
    app = kube.wait_ready("shop")
    assert app["status"]["cluster"] == spoke.cluster_id
    assert spoke.configmaps() == {"settings": {"key": "settings"}}
    assert not [name for kind, name in kube.owned() if kind == "ConfigMap"]  # nothing on the hub

    # A rotated token connects anew without a restart: a refused one is retried naming the cluster.
    server = spoke_cluster(spoke)["server"]
    put_secret(kube, "std-token", {"token": b"not-a-valid-token"})
    refused = wait_message(kube, "shop", f"Cluster {server} (ClusterProfile {std}): 401", prefix=True)
    assert refused["status"]["state"] == "Pending"
    put_secret(kube, "std-token", {"token": tokens[0].encode()})
    kube.wait_ready("shop")

    # ControlPlaneHealthy False: Pending with the condition's message, nothing deleted there.
    before = spoke.core.read_namespaced_config_map("settings", spoke.namespace).metadata.resource_version
    inventory.set_status(std, accessed(spoke, "std-token"), healthy("False", "etcd is down"))
    waiting = wait_message(kube, "shop", f"{where}: ControlPlaneHealthy is False: etcd is down; the operator "
                                         "connects once it is True")
    assert (waiting["status"]["state"], waiting["status"]["cluster"]) == ("Pending", spoke.cluster_id)
    assert spoke.core.read_namespaced_config_map("settings", spoke.namespace).metadata.resource_version == before

    # No access provider of the configured name.
    inventory.set_status(std, accessed(spoke, "std-token", provider="kubeconfig"), healthy())
    wait_message(kube, "shop", f'{where}: no access provider "secretreader" in status.accessProviders or '
                               "status.credentialProviders (it has: kubeconfig)")
    inventory.set_status(std, accessed(spoke, "std-token"), healthy())
    kube.wait_ready("shop")
    assert spoke.core.read_namespaced_config_map("settings", spoke.namespace).metadata.resource_version == before
    assert inventory.written_by_others() == []  # the operator never wrote the standard kind

    # A profile of the operator's own kind of the same name wins; the standard one is logged as ignored.
    shadow = f"{ns}-shadowed"
    inventory.create("shadowed", accessed(spoke, "std-token"), healthy())
    kube.custom.create_cluster_custom_object(GROUP, VERSION, "clusterprofiles", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterProfile", "metadata": {"name": shadow}, "spec": {}})
    profiles.append(shadow)
    line = (f"clusterprofiles.multicluster.x-k8s.io {ns}/{shadow} is ignored: clusterprofiles.oam-operator.dev "
            f"{shadow} has the same name, and the operator's own kind wins")
    wait_until(lambda: [e for e in operator.logs() if e.get("msg") == line and e.get("level") == "warning"],
               default_wait(kube.cluster), "the warning of the ignored standard profile")
    kube.apply_app("local", {"profile": shadow, "components": [configmap_component("local")]})
    local = kube.wait_ready("local")
    assert "cluster" not in local["status"]  # the own kind's, which names no kubeconfig: the hub
    assert "local" not in spoke.configmaps()

    # Deleting the Application deletes its objects on the spoke.
    kube.custom.delete_namespaced_custom_object(GROUP, VERSION, ns, "applications", "shop")
    wait_until(lambda: kube.app_or_none("shop") is None, default_wait(kube.cluster), "the Application to go")
    assert spoke.configmaps() == {}


def test_a_topology_selects_by_label_across_both_kinds(
        start_operator: Any, kube: Kube, spokes: list[Spoke], tokens: list[str], standard_crd: None,
        profiles: list[str]) -> None:
    first, second = spokes
    ns = kube.namespace
    put_kubeconfig_secret(kube, "spoke-1", first)
    own = f"{ns}-own"
    kube.custom.create_cluster_custom_object(GROUP, VERSION, "clusterprofiles", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterProfile", "metadata": {"name": own, "labels": {"env": "inv"}},
        "spec": {"kubeConfig": {"secretRef": {"name": "spoke-1"}}}})
    profiles.append(own)
    inventory = Inventory(kube)
    put_secret(kube, f"{ns}-std", {"token": tokens[1].encode()})
    std = inventory.create("std", accessed(second, f"{ns}-std"), healthy(), env="inv")
    # Of the own kind's name and selected too: ignored, no third cluster.
    inventory.create("own", accessed(second, f"{ns}-std"), healthy(), env="inv")
    start_operator(ns, "--inventory-namespaces", ns)
    spec = {"components": [configmap_component("settings")], "policies": [
        {"name": "fleet", "type": "topology", "properties": {"clusterSelector": {"matchLabels": {"env": "inv"}}}}]}
    kube.apply_app("shop", spec)

    def clusters(summary: str) -> dict[str, Any] | None:
        app = kube.app_or_none("shop")
        status = (app or {}).get("status") or {}
        return app if status.get("clusterSummary") == summary and status.get("state") == "Ready" else None

    app = wait_until(lambda: clusters("2/2"), default_wait(kube.cluster), "shop to be Ready on 2/2 clusters")
    assert sorted(line["name"] for line in app["status"]["clusters"]) == sorted([own, std])
    assert first.configmaps() == {"settings": {"key": "settings"}}
    assert second.configmaps() == {"settings": {"key": "settings"}}
    assert message(app) == "Applied revision 1: 2 clusters ready"

    # The standard profile labelled out: its cluster Application goes, and its objects there.
    inventory.relabel(std, env="out")
    wait_until(lambda: clusters("1/1"), default_wait(kube.cluster), "shop to be Ready on 1/1 clusters")
    wait_until(lambda: second.configmaps() == {}, default_wait(kube.cluster), "the second cluster's objects to go")
    assert first.configmaps() == {"settings": {"key": "settings"}}


def test_a_rollout_counts_an_unhealthy_standard_cluster_failed_at_its_timeout(
        start_operator: Any, kube: Kube, spokes: list[Spoke], tokens: list[str], standard_crd: None,
        profiles: list[str]) -> None:
    first, second = spokes
    ns = kube.namespace
    put_kubeconfig_secret(kube, "spoke-1", first)
    own = f"{ns}-own"
    kube.custom.create_cluster_custom_object(GROUP, VERSION, "clusterprofiles", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterProfile",
        "metadata": {"name": own, "labels": {"fleet": "inv", "ring": "1"}},
        "spec": {"kubeConfig": {"secretRef": {"name": "spoke-1"}}}})
    profiles.append(own)
    put_secret(kube, f"{ns}-std", {"token": tokens[1].encode()})
    std = Inventory(kube).create("std", accessed(second, f"{ns}-std"), healthy("Unknown", "no heartbeat"),
                                 fleet="inv", ring="2")
    start_operator(ns, "--inventory-namespaces", ns)
    kube.apply_app("shop", {"timeout": "10s", "components": [configmap_component("settings")], "policies": [
        {"name": "fleet", "type": "topology", "properties": {"clusterSelector": {"matchLabels": {"fleet": "inv"}}}},
        {"name": "slowly", "type": "rollout", "properties": {"maxConcurrent": 1, "orderBy": "ring",
                                                             "onFailure": "halt"}}]})

    halted = wait_message(kube, "shop", f"Rollout of revision 1 halted: cluster {std} failed: ", prefix=True)
    assert (halted["status"]["state"], halted["status"]["rollout"]["halted"]) == ("Error", std)
    child = kube.app(f"shop-{std}")
    ready = next(c for c in child["status"]["conditions"] if c["type"] == "Ready")
    assert (child["status"]["state"], ready["reason"]) == ("Pending", "Timeout")
    assert ready["message"] == (f"ClusterProfile {ns}/{std} (multicluster.x-k8s.io): ControlPlaneHealthy is Unknown: "
                                "no heartbeat; the operator connects once it is True")
    assert first.configmaps() == {"settings": {"key": "settings"}} and second.configmaps() == {}
