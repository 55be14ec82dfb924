"""Least privilege for a chart nobody on the project wrote (issue 37,
docs/operator.md#not-permitted-and-the-role-it-needs).

The CSI snapshot controller as its project ships it (``tests/e2e/data/external-snapshotter``):
six CRDs, a ClusterRole and ClusterRoleBinding, a Role and RoleBinding, a ServiceAccount and a
Deployment in ``kube-system``. As a ``manifests`` Application acting as its own ServiceAccount,
with cross-namespace and cluster-scoped objects allowed, the grant ``oam-operator rbac`` prints,
applied as printed, makes it Ready — its ClusterRole and bindings pass
RBAC's escalation check through ``escalate``/``bind`` (without them, the refusal names them),
``kube-system`` is read — and its deletion finishes, the deletion guard listing each CRD's instances cluster-wide with that identity.
Without that ``list`` the deletion says exactly what to grant and waits the error backoff
instead of retrying in a storm; granted again, it finishes.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml
from e2ekit import Kube, condition
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tools.devcluster import devcluster as dc
from tools.devcluster.pytest_plugin import default_wait, wait_until

DATA = Path(__file__).resolve().parent / "data" / "external-snapshotter" / "snapshot-controller.yaml"
NAME = "snapshots"
CRDS = [f"{plural}.{group}" for group, plurals in (
    ("groupsnapshot.storage.k8s.io", ("volumegroupsnapshotclasses", "volumegroupsnapshotcontents",
                                      "volumegroupsnapshots")),
    ("snapshot.storage.k8s.io", ("volumesnapshotclasses", "volumesnapshotcontents", "volumesnapshots")))
    for plural in plurals]
GUARDED_GROUPS = ("groupsnapshot.storage.k8s.io", "snapshot.storage.k8s.io")


def cli(kube: Kube, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_PROXY", "no_proxy")}
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return subprocess.run([str(Path(sys.executable).parent / "oam-operator"), *args, "--kubeconfig",
                           kube.cluster.kubeconfig], capture_output=True, text=True, timeout=120, check=False, env=env)


def kubectl_apply(kube: Kube, manifest: str) -> None:
    binary = dc.find_binaries().kubectl
    assert binary is not None
    subprocess.run([str(binary), "--kubeconfig", kube.cluster.kubeconfig, "apply", "-f", "-"], input=manifest,
                   text=True, check=True, capture_output=True, timeout=60)


def spec() -> dict[str, Any]:
    return {"serviceAccountName": "deployer",
            "components": [{"name": "snapshot-controller", "type": "manifests",
                            "properties": {"inline": DATA.read_text()}}]}


def _cleanup(kube: Kube) -> None:
    """Leave the shared cluster as it was when the test failed half-way: the CRDs carry the
    operator's finalizer, which nobody else removes."""
    ext = client.ApiextensionsV1Api(kube.api)
    rbac = client.RbacAuthorizationV1Api(kube.api)
    if kube.app_or_none(NAME) is not None:
        kube.custom.patch_namespaced_custom_object(
            "oam-operator.dev", "v1alpha1", kube.namespace, "applications", NAME,
            {"metadata": {"annotations": {"oam-operator.dev/abandon": "true"}}})
        kube.custom.delete_namespaced_custom_object("oam-operator.dev", "v1alpha1", kube.namespace, "applications",
                                                    NAME)
        wait_until(lambda: kube.app_or_none(NAME) is None, default_wait(kube.cluster), "the Application to go")
    calls = [*((lambda n=n: ext.patch_custom_resource_definition(n, {"metadata": {"finalizers": []}})) for n in CRDS),
             *((lambda n=n: ext.delete_custom_resource_definition(n)) for n in CRDS),
             lambda: rbac.delete_cluster_role("snapshot-controller-runner"),
             lambda: rbac.delete_cluster_role_binding("snapshot-controller-role"),
             lambda: rbac.delete_namespaced_role("snapshot-controller-leaderelection", "kube-system"),
             lambda: rbac.delete_namespaced_role_binding("snapshot-controller-leaderelection", "kube-system"),
             lambda: kube.apps.delete_namespaced_deployment("snapshot-controller", "kube-system"),
             lambda: kube.core.delete_namespaced_service_account("snapshot-controller", "kube-system")]
    for call in calls:
        with contextlib.suppress(ApiException):
            call()


def _passes(operator: Any, branch: str) -> list[dict[str, Any]]:
    return [e for e in operator.logs() if e.get("name") == NAME and e.get("branch") == branch
            and e.get("msg") in ("pass finished", "pass failed")]


def test_a_third_party_chart_is_ready_with_the_printed_grant_and_its_deletion_finishes(
        start_operator: Any, kube: Kube, tmp_path: Path) -> None:
    ns = kube.namespace
    operator = start_operator(ns, "--no-use-operator-identity", "--allow-cross-namespace-objects",
                              "--allow-cluster-scoped-objects")
    kube.core.create_namespaced_service_account(ns, {"metadata": {"name": "deployer"}})
    app_file = tmp_path / "snapshots.yaml"
    app_file.write_text(yaml.safe_dump({"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
                                        "metadata": {"name": NAME, "namespace": ns}, "spec": spec()}))
    rbac = client.RbacAuthorizationV1Api(kube.api)
    try:
        printed = cli(kube, "rbac", str(app_file), "--allow-cross-namespace-objects")
        assert (printed.returncode, printed.stderr) == (0, "")

        # Without the escalate and bind rules, RBAC refuses the chart's roles and bindings; the
        # refusal names exactly those rules.
        documents = [d for d in yaml.safe_load_all(printed.stdout) if d]
        for document in documents:
            if document["kind"] in ("Role", "ClusterRole"):
                document["rules"] = [r for r in document["rules"] if not {"escalate", "bind"} & set(r["verbs"])]
        kubectl_apply(kube, yaml.safe_dump_all(documents))
        kube.apply_app(NAME, spec())
        refused = kube.wait_state(NAME, "Error", "NotPermitted")
        assert condition(refused, "Ready")["message"] == (
            f"ServiceAccount {ns}/deployer may not escalate, bind clusterroles.rbac.authorization.k8s.io "
            "snapshot-controller-runner (cluster-scoped); escalate, bind roles.rbac.authorization.k8s.io "
            "snapshot-controller-leaderelection in namespace kube-system; the Application's objects need it. "
            f"`oam-operator rbac {NAME} -n {ns}` prints a Role and RoleBinding that grant it")

        kubectl_apply(kube, printed.stdout)  # as printed, comments and all
        ready = kube.wait_ready(NAME, timeout=default_wait(kube.cluster) + 120)  # minReadySeconds: 35
        assert condition(ready, "Ready")["message"] == "Applied revision 1: 12 objects ready"
        deployment = kube.apps.read_namespaced_deployment("snapshot-controller", "kube-system")
        assert deployment.metadata.managed_fields[0].manager == "oam-operator.dev"
        assert rbac.read_cluster_role("snapshot-controller-runner").rules

        # The grant without the deletion guard's list: the deletion names it and backs off.
        role_name = f"oam-{ns}-{NAME}"
        cluster_role = rbac.read_cluster_role(role_name)
        kept = [r for r in cluster_role.rules if not set(r.api_groups) & set(GUARDED_GROUPS)]
        assert len(kept) == len(cluster_role.rules) - 2
        rbac.patch_cluster_role(role_name, {"rules": [rbac.api_client.sanitize_for_serialization(r) for r in kept]})
        kube.custom.delete_namespaced_custom_object("oam-operator.dev", "v1alpha1", ns, "applications", NAME)
        refused = kube.wait_state(NAME, "Error", "NotPermitted")
        listed = "; ".join(f"list {crd} in all namespaces" for crd in CRDS)
        assert condition(refused, "Ready")["message"] == (
            f"ServiceAccount {ns}/deployer may not {listed}; the Application's deletion needs it. "
            f"`oam-operator rbac {NAME} -n {ns}` prints a Role and RoleBinding that grant it")
        before, writes_before, started = len(_passes(operator, "delete")), operator.write_requests(), time.monotonic()
        time.sleep(40)
        passes, writes = len(_passes(operator, "delete")) - before, operator.write_requests() - writes_before
        print(f"blocked deletion: {passes} passes and {writes:.0f} writes (SelfSubjectAccessReviews included) "
              f"in {time.monotonic() - started:.0f} s")
        assert 1 <= passes <= 4  # the error backoff (5 s, 10 s, 20 s, 30 s: the interval), not a storm
        assert writes <= passes * 40  # per pass: one review per verb and type the deletion needs (34), no more
        assert {crd.metadata.name for crd in client.ApiextensionsV1Api(kube.api).list_custom_resource_definition(
            ).items} >= set(CRDS)  # nothing was deleted before the guard could look

        kubectl_apply(kube, printed.stdout)  # granted again: the next pass after the backoff finishes
        wait_until(lambda: kube.app_or_none(NAME) is None, default_wait(kube.cluster) + 120,
                   "the Application's deletion to finish")
        names = {crd.metadata.name for crd in client.ApiextensionsV1Api(kube.api).list_custom_resource_definition(
            ).items}
        assert not names & set(CRDS)
        assert "snapshot-controller-runner" not in {r.metadata.name for r in rbac.list_cluster_role().items}
    finally:
        _cleanup(kube)
        for delete in (rbac.delete_cluster_role, rbac.delete_cluster_role_binding):
            with contextlib.suppress(ApiException):
                delete(f"oam-{ns}-{NAME}")
