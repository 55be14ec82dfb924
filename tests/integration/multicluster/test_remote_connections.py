"""The connection per remote cluster against real control planes (docs/multicluster.md#connections,
docs/devcluster.md#hub-and-spokes): the hub (the minimal ``cluster``) holds the kubeconfig Secrets,
the spokes answer. The remote cluster's id is its own ``kube-system`` UID; a rotated Secret reaches
another cluster without a new ``RemoteClusters``, seen by the Secret's watch (which then reads
nothing from the hub per pass, profilesecrets.py); a stopped API server is a retryable error naming
the cluster, and the same connection works once it is back."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from kubernetes import client

from oam_operator.controller.reconcile.delivery import DeliveryRefused
from oam_operator.controller.reconcile.settings import Settings
from oam_operator.controller.service.remotes import RemoteClusters
from oam_operator.reconciler.client import ClusterClient
from oam_operator.reconciler.errors import TransientApiError
from tools.devcluster import ClusterHandle
from tools.devcluster.devcluster import kubeconfig_secret
from tools.devcluster.pytest_plugin import api_client, control_plane

PROFILE = {"spec": {"kubeConfig": {"secretRef": {"name": "spoke"}}}}
WAIT = 60.0  # seconds a watch event may take at most (a safety net, not a measured time)


def kube_system_uid(handle: ClusterHandle) -> str:
    api = api_client(handle)
    try:
        core: Any = client.CoreV1Api(api)
        return str(core.read_namespace("kube-system").metadata.uid)
    finally:
        api.close()


def put_secret(kube_api: Any, namespace: str, spoke: ClusterHandle) -> None:
    core: Any = client.CoreV1Api(kube_api)
    manifest = kubeconfig_secret(spoke.kubeconfig, "spoke", namespace)
    try:
        core.create_namespaced_secret(namespace, manifest)
    except client.ApiException as error:
        if error.status != 409:
            raise
        core.replace_namespaced_secret("spoke", namespace, manifest)


@pytest.fixture
def hub_client(cluster: ClusterHandle) -> Any:
    made = ClusterClient.from_kubeconfig(cluster.kubeconfig)
    yield made
    made.close()


def test_the_target_is_the_spoke_with_its_own_id_and_a_rotated_secret_reaches_the_other(
        cluster: ClusterHandle, hub_client: ClusterClient, kube_api: Any, namespace: str,
        spoke_clusters: list[ClusterHandle]) -> None:
    first, second = spoke_clusters
    changed = threading.Event()

    def on_secret_change(secret_namespace: str, name: str) -> None:
        if (secret_namespace, name) == (namespace, "spoke"):
            changed.set()

    remotes = RemoteClusters(hub_client, Settings(), namespace, on_secret_change=on_secret_change)
    try:
        with pytest.raises(DeliveryRefused) as caught:
            remotes.target("p", PROFILE, "team-a")
        assert str(caught.value) == f"ClusterProfile p: kubeconfig Secret {namespace}/spoke not found"

        for _ in range(int(WAIT * 10)):  # until the Secret's watch has listed it (absent)
            if remotes.secrets.watching() == 1:
                break
            changed.wait(0.1)
        assert remotes.secrets.watching() == 1
        put_secret(kube_api, namespace, first)
        assert changed.wait(WAIT)  # its creation wakes the users of the profile
        changed.clear()
        target = remotes.target("p", PROFILE, "team-a")
        assert target is not None
        assert (target.cluster_id, target.server) == (kube_system_uid(first), first.server)
        assert target.cluster_id != kube_system_uid(cluster)
        again = remotes.target("q", PROFILE, "team-b")
        assert again is not None and again.clients is target.clients  # one connection, shared
        before = hub_client.accounting.total
        for _ in range(3):
            assert remotes.target("p", PROFILE, "team-a") is not None
        assert hub_client.accounting.total == before  # a no-op pass reads nothing from the hub

        put_secret(kube_api, namespace, second)  # rotated: a new resourceVersion, another cluster
        assert changed.wait(WAIT)  # the watch saw it: the users of the profile are woken
        rotated = remotes.target("p", PROFILE, "team-a")
        assert rotated is not None and rotated.cluster_id == kube_system_uid(second)
        assert remotes.connections() == 1
        listed = rotated.clients.operator_client.request("list", "GET", "/api/v1/namespaces")
        assert "kube-system" in {item["metadata"]["name"] for item in listed["items"]}
    finally:
        remotes.close()


def test_a_stopped_api_server_is_retryable_and_names_the_cluster(
        hub_client: ClusterClient, kube_api: Any, namespace: str, spoke_clusters: list[ClusterHandle]) -> None:
    spoke = spoke_clusters[1]
    put_secret(kube_api, namespace, spoke)
    remotes = RemoteClusters(hub_client, Settings(), namespace)
    plane = control_plane(spoke)
    try:
        plane.stop_component("kube-apiserver")
        try:
            with pytest.raises(TransientApiError) as caught:
                remotes.target("p", PROFILE, "team-a")
            assert str(caught.value).startswith(f"cluster {spoke.server} (ClusterProfile p): connection error: ")
        finally:
            plane.start_component("kube-apiserver")
        target = remotes.target("p", PROFILE, "team-a")
        assert target is not None and target.cluster_id == kube_system_uid(spoke)
    finally:
        remotes.close()
