"""`helm install` on a cluster whose CRDs were applied by hand, as `make demo` does
(`kubectl apply --server-side -f crds/`): plain `helm install` refuses to import them (helm's
ownership check), `--take-ownership` adopts them into the release, and `--set crds.install=false`
leaves them as they are (docs/chart.md "CRDs applied by hand"). Sequential within one test: the
CRDs are shared by the whole session.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, dynamic
from kubernetes.client.exceptions import ApiException

from tools.devcluster import ClusterHandle
from tools.devcluster.helm import CHART, run_helm

ROOT = Path(__file__).resolve().parents[3]
CRDS = ("applications.oam-operator.dev", "clusterprofiles.oam-operator.dev")
HELM_KEYS = ("meta.helm.sh/release-name", "meta.helm.sh/release-namespace", "helm.sh/resource-policy")


def apply_crds_by_hand(api: Any) -> None:
    """What `make demo` does: server-side apply of crds/ with kubectl's field manager, no Helm metadata."""
    extensions = client.ApiextensionsV1Api(api)
    for name in CRDS:
        try:
            crd = extensions.read_custom_resource_definition(name)
        except ApiException as error:
            if error.status == 404:
                continue  # not there yet: applied below
            raise
        labels = crd.metadata.labels or {}
        annotations = crd.metadata.annotations or {}
        patch = {"metadata": {
            "labels": {k: None for k in labels if k == "app.kubernetes.io/managed-by" or k.startswith("helm.sh/")},
            "annotations": {k: None for k in annotations if k in HELM_KEYS}}}
        extensions.patch_custom_resource_definition(name, patch)
    resources = dynamic.DynamicClient(api).resources.get(api_version="apiextensions.k8s.io/v1",
                                                          kind="CustomResourceDefinition")
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        resources.server_side_apply(body=yaml.safe_load(path.read_text()), field_manager="kubectl",
                                    force_conflicts=True)


def test_helm_install_over_crds_applied_by_hand(helm: Path, full_cluster: ClusterHandle, full_namespace: str,
                                                full_kube_api: Any, tmp_path: Path) -> None:
    extensions = client.ApiextensionsV1Api(full_kube_api)

    def helm_cmd(*args: str, check: bool = True) -> Any:
        return run_helm(helm, [*args, "--namespace", full_namespace], tmp_path, kubeconfig=full_cluster.kubeconfig,
                        check=check)

    apply_crds_by_hand(full_kube_api)
    plain = f"oam-{secrets.token_hex(3)}"
    refused = helm_cmd("install", plain, str(CHART), check=False)
    assert refused.returncode == 1
    assert ('CustomResourceDefinition "applications.oam-operator.dev" in namespace "" exists and cannot be '
            "imported into the current release") in refused.stderr
    helm_cmd("uninstall", plain, check=False)

    apply_crds_by_hand(full_kube_api)
    kept = f"oam-{secrets.token_hex(3)}"
    helm_cmd("install", kept, str(CHART), "--set", "crds.install=false")
    crd = extensions.read_custom_resource_definition(CRDS[0])
    assert "meta.helm.sh/release-name" not in (crd.metadata.annotations or {})  # left as applied
    helm_cmd("uninstall", kept)

    adopting = f"oam-{secrets.token_hex(3)}"
    helm_cmd("install", adopting, str(CHART), "--take-ownership")
    for name in CRDS:
        crd = extensions.read_custom_resource_definition(name)
        assert crd.metadata.annotations["meta.helm.sh/release-name"] == adopting
        assert crd.metadata.labels["app.kubernetes.io/managed-by"] == "Helm"
    uninstalled = helm_cmd("uninstall", adopting).stdout
    assert "applications.oam-operator.dev" in uninstalled  # kept: helm.sh/resource-policy keep
    assert extensions.read_custom_resource_definition(CRDS[0]).metadata.name == CRDS[0]


def test_a_plain_helm_install_adopts_the_crds_make_demo_applies(helm: Path, full_cluster: ClusterHandle,
                                                                full_namespace: str, full_kube_api: Any,
                                                                tmp_path: Path) -> None:
    """`make demo` applies the CRDs with the Helm ownership metadata of the README's release
    (tools/demo.py ``demo_crds``): the README's plain `helm install` of that release then adopts
    them. Here the release is the test's own, in its namespace."""
    from tools.demo import demo_crds

    release = f"oam-{secrets.token_hex(3)}"
    apply_crds_by_hand(full_kube_api)  # as an earlier run left them: no Helm metadata
    resources = dynamic.DynamicClient(full_kube_api).resources.get(api_version="apiextensions.k8s.io/v1",
                                                                    kind="CustomResourceDefinition")
    for crd in demo_crds(release, full_namespace)["items"]:
        resources.server_side_apply(body=crd, field_manager="kubectl", force_conflicts=True)
    installed = run_helm(helm, ["install", release, str(CHART), "--namespace", full_namespace], tmp_path,
                         kubeconfig=full_cluster.kubeconfig)
    assert "Identity: Applications act as their spec.serviceAccountName, else the ServiceAccount" in installed.stdout
    extensions = client.ApiextensionsV1Api(full_kube_api)
    for name in CRDS:
        crd = extensions.read_custom_resource_definition(name)
        assert crd.metadata.annotations["meta.helm.sh/release-name"] == release
        assert crd.metadata.annotations["helm.sh/resource-policy"] == "keep"  # the chart's own, now applied
    run_helm(helm, ["uninstall", release, "--namespace", full_namespace], tmp_path, kubeconfig=full_cluster.kubeconfig)
