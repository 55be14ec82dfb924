"""The image delivers to a remote cluster (docs/multicluster.md): the operator runs from its
image with the chart's settings as it ships (least privilege, the Role on the one kubeconfig
Secret from ``clusterProfiles.kubeconfigSecrets``), a ClusterProfile names that Secret holding a
spoke control plane's kubeconfig, and an Application using the profile becomes Ready with its
objects on the spoke and none on the hub, then deletes them there.

The container runs on the host network (tests/integration/integrationkit.py
``start_container_operator``), as it reaches the hub: the spoke's API server on 127.0.0.1 is
reachable from it with the kubeconfig's own address, so the Secret holds the kubeconfig
unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tests.integration.integrationkit import (
    GROUP,
    VERSION,
    apply_application,
    delete_application,
    grant_tenant,
    service_account_token,
    start_container_operator,
    wait_state,
)
from tools.devcluster import ClusterHandle
from tools.devcluster.devcluster import kubeconfig_secret
from tools.devcluster.pytest_plugin import CLUSTERS, api_client, create_namespace_named, default_wait, wait_until

# The chart fixes the operator's health and metrics ports: these modules never run at once.
pytestmark = pytest.mark.exclusive("chart-ports")

OWNER_ID = "oam-operator.dev/owner-id"


@pytest.fixture(scope="session")
def spoke() -> ClusterHandle:
    """One spoke (the first of ``spoke_clusters``; the second is not started for this test)."""
    return CLUSTERS.get("minimal", key="spoke-a")


def owned_configmaps(api: Any, namespace: str) -> list[str]:
    core: Any = client.CoreV1Api(api)
    items = core.list_namespaced_config_map(namespace).items
    return sorted(cm.metadata.name for cm in items if OWNER_ID in (cm.metadata.annotations or {}))


def test_the_image_delivers_to_a_remote_cluster(
    operator_image: str, chart_install: Any, full_cluster: ClusterHandle, full_namespace: str,
    full_kube_api: Any, spoke: ClusterHandle, tmp_path: Path,
) -> None:
    repository, tag = operator_image.rsplit(":", 1)
    release = chart_install({
        "image": {"repository": repository, "tag": tag, "pullPolicy": "Never"},
        "rbac": {"mode": "leastPrivilege"},
        "clusterProfiles": {"kubeconfigSecrets": ["spoke-a"]},
        "operator": {"watchNamespaces": [full_namespace], "defaultInterval": "30s"},
    })
    hub_core: Any = client.CoreV1Api(full_kube_api)
    hub_core.create_namespaced_secret(
        full_namespace, kubeconfig_secret(spoke.kubeconfig, "spoke-a", full_namespace))
    custom = client.CustomObjectsApi(full_kube_api)
    profile = f"{full_namespace}-spoke"
    custom.create_cluster_custom_object(GROUP, VERSION, "clusterprofiles", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterProfile", "metadata": {"name": profile},
        "spec": {"kubeConfig": {"secretRef": {"name": "spoke-a"}}}})
    create_namespace_named(spoke, full_namespace)
    spoke_api = api_client(spoke)
    spoke_core: Any = client.CoreV1Api(spoke_api)
    token = service_account_token(full_kube_api, full_namespace, release.service_account)
    operator = start_container_operator(release.objects, full_cluster.kubeconfig, token, full_namespace,
                                        tmp_path / "container")
    try:
        grant_tenant(spoke_api, full_namespace, "deployer")
        wait_until(operator.healthy, default_wait(full_cluster), "the container's liveness endpoint")
        apply_application(full_kube_api, full_namespace, "remote", {
            "serviceAccountName": "deployer", "profile": profile,
            "components": [{"name": "settings", "type": "passthrough", "properties": {"object": {
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                "data": {"delivered": "to the spoke"}}}}],
        })

        app = wait_state(full_kube_api, full_cluster, full_namespace, "remote", "Ready", "Ready")
        spoke_id = spoke_core.read_namespace("kube-system").metadata.uid
        assert app["status"]["cluster"] == spoke_id
        assert owned_configmaps(spoke_api, full_namespace) == ["settings"]
        settings = spoke_core.read_namespaced_config_map("settings", full_namespace)
        assert settings.data == {"delivered": "to the spoke"}
        hub_id = client.CoreV1Api(full_kube_api).read_namespace("kube-system").metadata.uid
        assert settings.metadata.annotations[OWNER_ID] == f"{spoke_id}@{hub_id}/{full_namespace}/remote"
        assert owned_configmaps(full_kube_api, full_namespace) == []  # nothing on the hub

        delete_application(full_kube_api, full_cluster, full_namespace, "remote")
        assert owned_configmaps(spoke_api, full_namespace) == []
        assert operator.running()
    except BaseException:
        print(f"--- operator container log ---\n{operator.log()}")
        raise
    finally:
        operator.stop()
        spoke_api.close()
        try:
            custom.delete_cluster_custom_object(GROUP, VERSION, "clusterprofiles", profile)
        except ApiException as error:
            if error.status != 404:
                raise
