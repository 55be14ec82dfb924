"""NotPermitted and the Role it needs (docs/operator.md#not-permitted-and-the-role-it-needs).

With the least-privilege default an Application acts as its namespace's ``default``
ServiceAccount, which may do nothing: the refusal names the account, every verb and resource its
objects need and the command printing the Role. A partial grant (the README's old example Role,
without serviceaccounts) wakes the Application and the message then names only what is still
missing. The command's output applied as it is makes the Application Ready; its error retries
run every 10 minutes (a reconciliation policy's ``retryInterval``), so Ready within the test's
wait, far below that, is the grant's wake-up, not the backoff.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from e2ekit import Kube, condition
from kubernetes import client

from tools.devcluster import devcluster as dc
from tools.devcluster.pytest_plugin import default_wait, wait_until

VERBS = "get, list, create, update, patch, delete"
RETRY = {"name": "slow-retries", "type": "reconciliation", "properties": {"retryInterval": "10m"}}
WEB = {"name": "web", "type": "webservice", "properties": {"image": "registry.invalid/web:1", "port": 8080}}


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


def ready_message(kube: Kube, name: str) -> str:
    return str((condition(kube.app(name), "Ready") or {}).get("message", ""))


def test_not_permitted_names_everything_missing_and_a_grant_wakes_it(start_operator: Any, kube: Kube) -> None:
    ns = kube.namespace
    start_operator(ns, "--no-use-operator-identity")  # the default: act as the namespace's `default`
    kube.apply_app("web", {"components": [WEB], "policies": [RETRY]})
    app = kube.wait_state("web", "Error", "NotPermitted")
    command = f"`oam-operator rbac web -n {ns}` prints a Role and RoleBinding that grant it"
    assert condition(app, "Ready")["message"] == (
        f"ServiceAccount {ns}/default may not {VERBS} serviceaccounts in namespace {ns}; "
        f"{VERBS} services in namespace {ns}; {VERBS} deployments.apps in namespace {ns}; "
        f"the Application's objects need it. {command}")
    assert app["status"]["summary"].startswith("Not permitted; see: oam-operator rbac web")

    # The README's old example: everything but serviceaccounts.
    rbac = client.RbacAuthorizationV1Api(kube.api)
    rbac.create_namespaced_role(ns, {"metadata": {"name": "old-example"}, "rules": [{
        "apiGroups": ["", "apps"], "resources": ["configmaps", "secrets", "services", "deployments", "statefulsets"],
        "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}]})
    rbac.create_namespaced_role_binding(ns, {
        "metadata": {"name": "old-example"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "old-example"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": ns}]})
    still = (f"ServiceAccount {ns}/default may not {VERBS} serviceaccounts in namespace {ns}; "
             f"the Application's objects need it. {command}")
    wait_until(lambda: ready_message(kube, "web") == still, default_wait(kube.cluster),
               "the message to name only serviceaccounts after the partial grant")

    printed = cli(kube, "rbac", "web", "-n", ns)
    assert (printed.returncode, printed.stderr) == (0, "")
    kubectl_apply(kube, printed.stdout)
    ready = kube.wait_ready("web", timeout=min(default_wait(kube.cluster), 300.0))  # retries: every 600 s
    assert condition(ready, "Ready")["message"].endswith("objects ready")
    assert kube.apps.read_namespaced_deployment("web", ns).metadata.managed_fields[0].manager == "oam-operator.dev"
