"""The plural both ClusterProfile kinds share, with the real kubectl and both CRDs installed
(docs/multicluster.md#the-two-kinds-with-kubectl).

``clusterprofiles`` is the plural of the operator's cluster-scoped kind and of SIG-Multicluster's
namespaced one (KEP-4322): the full resource name, and the operator's short names, must each list
the right kind. The standard CRD is the tests' own minimal one (tests/e2e/data/cluster-inventory),
deleted again at the end so that the session's other tests see the operator's CRDs alone.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from tests.integration.api.test_crds import GROUP, VERSION, _established, crds, kubectl
from tools.devcluster import ClusterHandle
from tools.devcluster.pytest_plugin import default_wait, wait_until

__all__ = ["crds"]  # the fixture, imported so that pytest finds it here

STANDARD_CRD = Path(__file__).resolve().parents[2] / "e2e/data/cluster-inventory/multicluster.x-k8s.io_clusterprofiles.yaml"
STANDARD = "clusterprofiles.multicluster.x-k8s.io"


@pytest.fixture
def standard_crd(cluster: ClusterHandle, kube_api: Any, crds: None) -> Iterator[None]:
    kubectl(cluster, "apply", "--server-side", "-f", str(STANDARD_CRD))
    wait_until(partial(_established, kube_api, STANDARD), default_wait(cluster), f"CRD {STANDARD} Established")
    yield
    kubectl(cluster, "delete", "crd", STANDARD, "--wait=true")


def test_each_name_lists_its_own_kind(cluster: ClusterHandle, kube_api: Any, standard_crd: None,
                                      namespace: str) -> None:
    custom = client.CustomObjectsApi(kube_api)
    own, theirs = f"own-{secrets.token_hex(3)}", f"std-{secrets.token_hex(3)}"
    custom.create_cluster_custom_object(GROUP, VERSION, "clusterprofiles", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterProfile", "metadata": {"name": own}, "spec": {}})
    try:
        custom.create_namespaced_custom_object("multicluster.x-k8s.io", "v1alpha1", namespace, "clusterprofiles", {
            "apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ClusterProfile",
            "metadata": {"name": theirs, "namespace": namespace}, "spec": {"clusterManager": {"name": "test"}}})

        def names(*args: str) -> list[str]:
            return sorted(kubectl(cluster, "get", *args, "-o", "name").stdout.split())

        ours = [f"clusterprofile.oam-operator.dev/{own}"]
        assert own_only(names("clusterprofiles.oam-operator.dev"), ours)
        assert own_only(names("oamprofile"), ours)
        assert own_only(names("oamprofiles"), ours)
        assert names(STANDARD, "-n", namespace) == [f"clusterprofile.multicluster.x-k8s.io/{theirs}"]
        explained = kubectl(cluster, "explain", "clusterprofiles.spec", "--api-version", f"{GROUP}/{VERSION}").stdout
        assert "gitopsEngine" in explained
    finally:
        custom.delete_cluster_custom_object(GROUP, VERSION, "clusterprofiles", own)


def own_only(listed: list[str], ours: list[str]) -> bool:
    """Ours is listed, and nothing of the standard kind (other tests' profiles of ours may be there)."""
    return set(ours) <= set(listed) and all(name.startswith("clusterprofile.oam-operator.dev/") for name in listed)
