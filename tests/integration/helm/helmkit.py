"""Helpers of the chart's cluster tests: apply rendered objects, a ServiceAccount token
(TokenRequest API) turned into a kubeconfig, and the operator run locally with the chart's
container arguments under that identity."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, dynamic
from kubernetes.client.exceptions import ApiException

from tools.devcluster import ClusterHandle
from tools.devcluster.pytest_plugin import default_wait, wait_until

ROOT = Path(__file__).resolve().parents[3]
FIELD_MANAGER = "oam-helm-test"
Obj = dict[str, Any]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def is_crd(obj: Obj) -> bool:
    return bool(obj["kind"] == "CustomResourceDefinition")


def is_hook(obj: Obj) -> bool:
    return "helm.sh/hook" in (obj["metadata"].get("annotations") or {})


def apply(api: Any, objects: list[Obj], *, dry_run: bool = False) -> list[Obj]:
    """Server-side apply each object (CRDs must already be established for their instances)."""
    resources = dynamic.DynamicClient(api).resources
    applied = []
    for obj in objects:
        resource = resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        kwargs: dict[str, Any] = {"field_manager": FIELD_MANAGER, "force_conflicts": True}
        if dry_run:
            kwargs["dry_run"] = "All"
        if resource.namespaced:
            kwargs["namespace"] = obj["metadata"]["namespace"]
        applied.append(resource.server_side_apply(body=obj, **kwargs).to_dict())
    return applied


def apply_crds(api: Any, cluster: ClusterHandle, objects: list[Obj]) -> None:
    """Apply the CRDs among ``objects`` for real and wait until they are established."""
    crds = [o for o in objects if is_crd(o)]
    apply(api, crds)
    extensions = client.ApiextensionsV1Api(api)

    def established() -> bool:
        for crd in crds:
            conditions = extensions.read_custom_resource_definition(crd["metadata"]["name"]).status.conditions or []
            if not any(c.type == "Established" and c.status == "True" for c in conditions):
                return False
        return True

    wait_until(established, default_wait(cluster), "the chart's CRDs to be established")


def delete_cluster_scoped(api: Any, objects: list[Obj]) -> None:
    """Remove the ClusterRoles and ClusterRoleBindings a test applied (CRDs stay: they are shared)."""
    rbac = client.RbacAuthorizationV1Api(api)
    for obj in objects:
        try:
            if obj["kind"] == "ClusterRoleBinding":
                rbac.delete_cluster_role_binding(obj["metadata"]["name"])
            elif obj["kind"] == "ClusterRole":
                rbac.delete_cluster_role(obj["metadata"]["name"])
        except ApiException as error:
            if error.status != 404:
                raise


def service_account_token(api: Any, namespace: str, name: str) -> str:
    """A bound token of the ServiceAccount from the TokenRequest API (what `kubectl create token` does)."""
    request = client.CoreV1Api(api).create_namespaced_service_account_token(
        name, namespace, {"spec": {"expirationSeconds": 3600}})
    token: str = request.status.token
    return token


def token_kubeconfig(admin_kubeconfig: str, token: str, path: Path, user: str) -> Path:
    """A kubeconfig for the same server and CA as ``admin_kubeconfig`` that authenticates with ``token``."""
    admin = yaml.safe_load(Path(admin_kubeconfig).read_text())
    cluster = admin["clusters"][0]
    config = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [cluster],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": user, "context": {"cluster": cluster["name"], "user": user}}],
        "current-context": user,
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


def api_as(kubeconfig: Path) -> Any:
    from kubernetes import config

    configuration = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
    configuration.proxy = None
    return client.ApiClient(configuration)


def can_i(api: Any, verb: str, resource: str, group: str = "", namespace: str | None = None) -> bool:
    review = client.AuthorizationV1Api(api).create_self_subject_access_review({
        "spec": {"resourceAttributes": {"verb": verb, "resource": resource, "group": group,
                                        **({"namespace": namespace} if namespace else {})}}})
    return bool(review.status.allowed)


@dataclass
class ChartOperator:
    """``oam-operator`` started with the rendered Deployment's arguments and environment."""

    process: subprocess.Popen[bytes]
    log_path: Path
    health_port: int
    kubeconfig: Path

    def healthy(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"the operator exited with {self.process.returncode}:\n{self.log()}")
        try:
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with opener.open(f"http://127.0.0.1:{self.health_port}/healthz", timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_chart_operator(objects: list[Obj], kubeconfig: Path, log_path: Path) -> ChartOperator:
    """Run `oam-operator <the container's args> --kubeconfig <kubeconfig>` with the container's env."""
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    args = list(container["args"])
    health = next(p["containerPort"] for p in container["ports"] if p["name"] == "health")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OAM_OPERATOR_") and k != "KUBECONFIG"}
    for var in container.get("env", []):
        if "value" in var:
            env[var["name"]] = var["value"]
    env["POD_NAME"] = f"{deployment['metadata']['name']}-local"
    env["TMPDIR"] = str(log_path.parent)
    command = [str(Path(sys.executable).parent / "oam-operator"), *args, "--kubeconfig", str(kubeconfig)]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=env, cwd=ROOT)
    return ChartOperator(process, log_path, health, kubeconfig)
