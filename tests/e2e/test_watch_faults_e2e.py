"""Faults of the watches of owned objects on the full control plane
(docs/operator.md#watches-of-owned-objects, issue 23):

- a watch that resumes from a resourceVersion the API server no longer has gets a real
  ``410 Gone`` (an ERROR event ``410 Expired``), lists its kind again and still corrects a hand edit
  made while it could not follow;
- a kind the operator may not list or watch is given up once, in the log and in the
  ``oam_operator_watches`` gauge, while its Application still becomes Ready by per-call reads and
  the other kinds stay watched.

The e2e operator's interval is 30s and its reapply interval 60m: nothing but the watch corrects a
hand edit while these tests wait."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2ekit import Kube, OperatorProcess, configmap_component, deployment_component, install_crds, sleep_briefly
from kubernetes import client

from tools.devcluster import ClusterHandle, ControlPlane
from tools.devcluster.pytest_plugin import CLUSTERS, api_client, create_namespace_named, default_wait, wait_until

IMAGE = "spec.template.spec.containers[name=main].image"
NOT_WATCHING = "its drift is found at the reapply interval and waits for it use the backoff"
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
# These tests are about the watches: the operator is frozen (SIGSTOP) past its Lease, or runs as an
# identity granted only what the watch needs; what a leader does when it loses its Lease on the way
# is the election's part (docs/operator.md#leader-election, tested in test_leader_election_e2e.py).
NO_ELECTION = ("--no-leader-election",)


def watch_states(operator: OperatorProcess, group: str, kind: str) -> dict[str, float]:
    """The ``oam_operator_watches`` series of one kind: state -> value."""
    return {dict(labels)["state"]: value for (name, labels), value in operator.metrics().items()
            if name == "oam_operator_watches" and dict(labels)["group"] == group and dict(labels)["kind"] == kind}


def messages(operator: OperatorProcess, prefix: str) -> list[str]:
    return [str(entry["msg"]) for entry in operator.logs() if str(entry.get("msg", "")).startswith(prefix)]


# -- etcd, through its v3 HTTP gateway on the devcluster's client URL ------------------------


def etcd_url(plane: ControlPlane) -> str:
    return f"http://127.0.0.1:{next(c.port for c in plane.components if c.name == 'etcd')}"


def etcd(plane: ControlPlane, path: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(etcd_url(plane) + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with NO_PROXY.open(request, timeout=10) as response:
        result: dict[str, Any] = json.loads(response.read())
    return result


def compact_etcd(plane: ControlPlane) -> int:
    """Write a probe key straight to etcd and compact its history up to that write; its revision."""
    key = base64.b64encode(b"/registry/oam-e2e-compaction-probe").decode()
    revision = int(etcd(plane, "/v3/kv/put", {"key": key, "value": key})["header"]["revision"])
    etcd(plane, "/v3/kv/compaction", {"revision": revision, "physical": True})
    return revision


def etcd_healthy(plane: ControlPlane) -> bool:
    try:
        with NO_PROXY.open(etcd_url(plane) + "/health", timeout=2) as response:
            return bool(json.loads(response.read()).get("health") == "true")
    except OSError:
        return False


def api_server_ready(plane: ControlPlane) -> bool:
    try:
        return bool(plane.api().request("/readyz", anonymous=True)[0] == 200)
    except OSError:
        return False


def watch_answer(plane: ControlPlane, path: str, version: str) -> tuple[bool, str]:
    """Whether a watch of ``path`` from ``version`` is answered with 410 Expired (and not, say, 429
    while the API server's watch cache initializes again), and the answer, for a failure's message."""
    try:
        status, body = plane.api().request(f"{path}?watch=1&resourceVersion={version}&timeoutSeconds=1")
    except OSError as error:
        return False, f"{type(error).__name__}: {error}"
    expired = status == 200 and isinstance(body, dict) and body.get("type") == "ERROR" and \
        body["object"].get("code") == 410
    return expired, f"HTTP {status} {json.dumps(body)[:300]}"


def restart_watch_cache_past(plane: ControlPlane, kube: Kube, path: str, seen: str, attempts: int = 3) -> int:
    """Compact etcd past every revision the API server has seen and restart etcd while the API
    server is frozen (SIGSTOP), until its watch cache of Deployments starts again past ``seen`` (a
    watch from it is answered 410); the compacted revision. Frozen, the API server writes nothing
    and asks for no progress notification, so its watch of etcd cannot move past the compaction
    (another test's Deployment or a consistent read's progress request did, when it ran); thawed,
    it finds etcd's connection gone, resumes from a compacted revision and lists again. That relist
    can wait for a backoff of the API server's etcd client or reflector after the suite's earlier
    restarts (in CI, 20 s were not enough three times in a row), so each attempt waits the
    cluster's default wait for a watch from ``seen`` to be answered 410 before it tries again."""
    wait = default_wait(kube.cluster)
    apiserver = next(c for c in plane.components if c.name == "kube-apiserver")
    answer = "nothing"
    for _ in range(attempts):
        os.kill(apiserver.pid, signal.SIGSTOP)
        try:
            compacted = compact_etcd(plane)
            plane.restart("etcd")
            wait_until(lambda: etcd_healthy(plane), wait, "etcd")
        finally:
            os.kill(apiserver.pid, signal.SIGCONT)
        wait_until(lambda: api_server_ready(plane), wait, "the API server")
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            expired, answer = watch_answer(plane, path, seen)
            if expired:
                return compacted
            time.sleep(0.25)
    pytest.fail(f"the API server's watch cache of Deployments did not start again past {seen} in {attempts} "
                f"compactions and etcd restarts; the last watch from it was answered {answer}")


def own_cluster(handle: ClusterHandle, namespace: str) -> Kube:
    """The CRDs and a namespace (with its default ServiceAccount, for the Deployment's Pods) on
    the cluster behind ``handle``, and helpers over it."""
    install_crds(handle)
    create_namespace_named(handle, namespace)
    kube = Kube(api_client(handle), namespace, handle)

    def default_account() -> bool:
        try:
            kube.core.read_namespaced_service_account("default", namespace)
        except client.ApiException:
            return False
        return True

    wait_until(default_account, default_wait(handle), "the namespace's default ServiceAccount")
    return kube


def test_a_watch_that_gets_410_gone_lists_again_and_corrects_the_edit_made_in_the_gap(start_operator: Any) -> None:
    """A real 410 on a running API server: the operator is frozen (SIGSTOP) so its watch of
    Deployments cannot follow; with the API server frozen too, a write and a compaction put etcd's
    history past every resourceVersion either has seen, and etcd restarts. The API server's own watch of etcd
    then resumes from a compacted revision, so its watch cache starts again from a fresh LIST and
    ends every client's watch (cleanly: the bytes wait in the frozen operator's socket). The image is
    changed only then. Thawed, the operator reads the end of its watch and watches again from its
    last resourceVersion; the API server answers with an ERROR event 410 Expired (too old), the
    operator logs that it lists again, and the LIST finds the edit, which is corrected.

    (An API server restart does not give a 410 here: the old server's watches end without their
    last chunk, a connection error, after which the watch waits 5 s and lists again anyway.)

    It runs on a full control plane of its own: on the shared one, after the suite's earlier
    restarts, the API server's watch cache of Deployments kept resuming past the compaction and
    never started again (three CI runs; alone it starts again 1.3 s after the thaw)."""
    handle = CLUSTERS.get("full", key="watch-410")
    plane = CLUSTERS.plane(handle)
    kube = own_cluster(handle, f"watch-410-{os.getpid()}-{time.monotonic_ns() % 100000}")
    operator = start_operator(kube.namespace, *NO_ELECTION, kubeconfig=handle.kubeconfig)
    kube.apply_app("shop", {"components": [deployment_component("web")]})
    kube.wait_ready("shop")
    wait = default_wait(kube.cluster)
    wait_until(lambda: watch_states(operator, "apps", "Deployment").get("synced") == 1, wait,
               "the watch of Deployments to be synced")
    path = f"/apis/apps/v1/namespaces/{kube.namespace}/deployments"
    seen = kube.apps.read_namespaced_deployment("web", kube.namespace).metadata.resource_version
    assert messages(operator, f"relisting {path} ") == []

    os.kill(operator.process.pid, signal.SIGSTOP)
    try:
        compacted = restart_watch_cache_past(plane, kube, path, seen)

        kube.set_image_once_reachable("web", "evil/web:6.6.6")
    finally:
        os.kill(operator.process.pid, signal.SIGCONT)

    wait_until(lambda: kube.image_of("web") == "registry.invalid/app:1", wait,
               "the image to be corrected after the relist")
    wait_until(lambda: kube.event_messages("shop", "DriftCorrected"), wait, "the DriftCorrected Event")
    assert kube.event_messages("shop", "DriftCorrected") == [f"Corrected drift: Deployment web ({IMAGE})"]
    relists = messages(operator, f"relisting {path} ")
    assert len(relists) == 1, relists
    found = re.fullmatch(rf"relisting {re.escape(path)} after 410 Expired: too old resource version: (\d+) \((\d+)\)",
                         relists[0])
    assert found is not None, relists[0]
    assert int(found.group(1)) < compacted <= int(found.group(2)), (relists[0], compacted)
    log = [str(entry.get("msg")) + json.dumps(entry.get("operations", {})) for entry in operator.logs()]
    relisted = next(i for i, line in enumerate(log) if line.startswith(f"relisting {path} "))
    corrected = next(i for i, line in enumerate(log) if line.startswith("pass finished") and '"update"' in line)
    assert relisted < corrected, "the correcting pass came before the relist: the edit was seen some other way"
    assert watch_states(operator, "apps", "Deployment")["synced"] == 1


# -- a kind the operator may not watch ------------------------------------------------------


def restricted_operator_identity(kube: Kube, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A ServiceAccount with what the operator needs in the test namespace except ``list`` and
    ``watch`` of ConfigMaps (it may still get, create, patch, update and delete them), and a
    kubeconfig with a bound token of it."""
    namespace = kube.namespace
    rbac = client.RbacAuthorizationV1Api(kube.api)
    kube.core.create_namespaced_service_account(namespace, {"metadata": {"name": "oam-operator"}})
    subject = [{"kind": "ServiceAccount", "name": "oam-operator", "namespace": namespace}]
    rbac.create_namespaced_role(namespace, {"metadata": {"name": "oam-operator"}, "rules": [
        {"apiGroups": ["oam-operator.dev"], "resources": ["applications", "applications/status",
                                                          "applications/finalizers"], "verbs": ["*"]},
        {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["*"]},
        {"apiGroups": ["apps", "batch"], "resources": ["*"], "verbs": ["*"]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "create", "patch", "update", "delete"]},
    ]})
    rbac.create_namespaced_role_binding(namespace, {
        "metadata": {"name": "oam-operator"}, "subjects": subject,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "oam-operator"}})
    cluster_wide = f"{namespace}-oam-operator"  # kopf's observation, ClusterProfiles, the cluster id
    rbac.create_cluster_role({"metadata": {"name": cluster_wide}, "rules": [
        {"apiGroups": ["oam-operator.dev"], "resources": ["clusterprofiles"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"],
         "verbs": ["get", "list", "watch"]},
    ]})
    request.addfinalizer(lambda: rbac.delete_cluster_role(cluster_wide))
    rbac.create_cluster_role_binding({
        "metadata": {"name": cluster_wide}, "subjects": subject,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_wide}})
    request.addfinalizer(lambda: rbac.delete_cluster_role_binding(cluster_wide))
    token = kube.core.create_namespaced_service_account_token(
        "oam-operator", namespace, {"spec": {"expirationSeconds": 3600}}).status.token
    admin = yaml.safe_load(Path(kube.cluster.kubeconfig).read_text())
    cluster = admin["clusters"][0]
    path = tmp_path / "restricted.kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "clusters": [cluster],
        "users": [{"name": "oam-operator", "user": {"token": token}}],
        "contexts": [{"name": "oam-operator", "context": {"cluster": cluster["name"], "user": "oam-operator"}}],
        "current-context": "oam-operator"}))
    path.chmod(0o600)
    return path


def test_a_kind_the_operator_may_not_watch_is_given_up_once_and_read_per_call(
        start_operator: Any, kube: Kube, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    kubeconfig = restricted_operator_identity(kube, tmp_path, request)
    operator = start_operator(kube.namespace, "--kubeconfig", str(kubeconfig), *NO_ELECTION)  # the later flag wins
    components = [deployment_component("web"), configmap_component("settings"), configmap_component("extra")]
    kube.apply_app("shop", {"components": components})
    kube.wait_ready("shop")
    wait = default_wait(kube.cluster)
    wait_until(lambda: watch_states(operator, "", "ConfigMap").get("forbidden") == 1, wait,
               "the ConfigMap watch to be given up")

    # A second revision: its pass reads both ConfigMaps, which it may not LIST (batched reads fall
    # back to one GET each), and updates one.
    components[1] = configmap_component("settings", {"key": "second"})
    kube.apply_app("shop", {"components": components})
    kube.wait_ready("shop")
    assert kube.core.read_namespaced_config_map("settings", kube.namespace).data == {"key": "second"}

    # The Deployments are still watched with this identity: a hand edit is corrected from the watch.
    kube.set_image("web", "evil/web:6.6.6")
    wait_until(lambda: kube.image_of("web") == "registry.invalid/app:1", wait, "the image to be corrected")
    wait_until(lambda: kube.event_messages("shop", "DriftCorrected"), wait, "the DriftCorrected Event")
    assert kube.event_messages("shop", "DriftCorrected") == [f"Corrected drift: Deployment web ({IMAGE})"]

    sleep_briefly(6)  # longer than a failed watch's retry (5 s): a kind given up is not tried again
    user = f"system:serviceaccount:{kube.namespace}:oam-operator"
    assert messages(operator, "not watching ") == [
        f"not watching /api/v1/namespaces/{kube.namespace}/configmaps (403 Forbidden: configmaps is forbidden: "
        f'User "{user}" cannot list resource "configmaps" in API group "" in the namespace "{kube.namespace}"): '
        f"{NOT_WATCHING}"]
    assert watch_states(operator, "", "ConfigMap") == {"synced": 0, "down": 0, "forbidden": 1}
    assert watch_states(operator, "apps", "Deployment") == {"synced": 1, "down": 0, "forbidden": 0}
