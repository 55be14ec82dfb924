"""`helm install`, `upgrade` and `uninstall` of the chart on the full local control plane
(docs/chart.md#the-helm-chart, docs/image.md#the-container-image): into a namespace that
enforces the `restricted` Pod Security
Standard the operator's Pod is admitted and scheduled, running as UID 65532 with a read-only root
filesystem; an upgrade to leastPrivilege replaces the rules; uninstall keeps the CRDs. The values
are the defaults (no process binds the ports: kwok only simulates the Pod).

kwok reports the Pod Running without running a container (no image is pulled here), so the
liveness of the real process is covered by the operator tests that run it locally
(test_chart_rbac_*.py), not here. `--take-ownership`: the CRDs are shared with the other tests
of the session, which may have applied them first.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tools.devcluster import ClusterHandle
from tools.devcluster.helm import CHART, run_helm
from tools.devcluster.pytest_plugin import default_wait, wait_until


def test_install_upgrade_uninstall(helm: Path, full_cluster: ClusterHandle, full_namespace: str,
                                   full_kube_api: Any, tmp_path: Path) -> None:
    core, apps = client.CoreV1Api(full_kube_api), client.AppsV1Api(full_kube_api)
    rbac = client.RbacAuthorizationV1Api(full_kube_api)
    core.patch_namespace(full_namespace, {"metadata": {"labels": {
        "pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"}}})
    release = f"oam-{secrets.token_hex(3)}"
    fullname = f"{release}-oam-operator"
    timeout = f"{int(default_wait(full_cluster))}s"

    def helm_cmd(*args: str) -> str:
        result = run_helm(helm, [*args, "--namespace", full_namespace], tmp_path, kubeconfig=full_cluster.kubeconfig)
        return result.stdout

    try:
        notes = helm_cmd("install", release, str(CHART), "--take-ownership", "--wait", "--timeout", timeout)
        assert "delete every Application first" in notes and "kubectl get oapp -A" in notes

        deployment = apps.read_namespaced_deployment(fullname, full_namespace)
        assert deployment.status.available_replicas == 2  # one leads, one stands by (leader election)
        pods = core.list_namespaced_pod(full_namespace, label_selector=f"app.kubernetes.io/instance={release}").items
        assert len(pods) == 2 and {p.status.phase for p in pods} == {"Running"}
        pod = pods[0].spec
        assert (pod.security_context.run_as_user, pod.security_context.run_as_group) == (65532, 65532)
        assert pod.security_context.run_as_non_root is True
        assert pod.containers[0].security_context.read_only_root_filesystem is True
        assert pod.service_account_name == fullname
        assert rbac.read_cluster_role(fullname).rules[0].verbs == ["*"]

        helm_cmd("upgrade", release, str(CHART), "--reuse-values", "--set", "rbac.mode=leastPrivilege", "--wait",
                 "--timeout", timeout)
        args = apps.read_namespaced_deployment(fullname, full_namespace).spec.template.spec.containers[0].args
        assert "--require-service-account" in args
        rules = rbac.read_cluster_role(fullname).rules
        assert not any("*" in (r.verbs or []) + (r.resources or []) + (r.api_groups or []) for r in rules)
    finally:
        uninstalled = helm_cmd("uninstall", release, "--wait", "--timeout", timeout)
    assert "applications.oam-operator.dev" in uninstalled  # "kept due to the resource policy"

    def gone() -> bool:
        try:
            apps.read_namespaced_deployment(fullname, full_namespace)
        except ApiException as error:
            return error.status == 404
        return False

    wait_until(gone, default_wait(full_cluster), "the release's Deployment to be deleted")
    extensions = client.ApiextensionsV1Api(full_kube_api)
    for name in ("applications.oam-operator.dev", "clusterprofiles.oam-operator.dev"):
        crd = extensions.read_custom_resource_definition(name)
        assert crd.metadata.annotations["helm.sh/resource-policy"] == "keep"
    for read in (rbac.read_cluster_role, rbac.read_cluster_role_binding):
        try:
            read(fullname)
            raise AssertionError(f"{fullname} survived the uninstall")
        except ApiException as error:
            assert error.status == 404
