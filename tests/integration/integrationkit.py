"""The integration tier's one shared kit (the chart and image tests under tests/integration/helm).

- Applications and tenant RBAC: ``apply_application``, ``wait_state``, ``grant_tenant``, …
- The chart's objects and identities: ``apply``/``apply_crds`` of rendered objects, a
  ServiceAccount token (TokenRequest API) turned into a kubeconfig, ``api_as``/``can_i``, and
  the operator run locally with the chart's container arguments under that identity.
- The operator image run as the chart runs it: podman with the rendered Deployment's container.
  What the kubelet would give the container, given here by hand: the chart's arguments and
  environment, ``POD_NAME``, the ServiceAccount's token, the cluster CA and the namespace under
  ``/var/run/secrets/kubernetes.io/serviceaccount``, and ``KUBERNETES_SERVICE_HOST``/``PORT``
  pointing at the local control plane (``--network host``, so 127.0.0.1 is the host's). The pod's
  security context becomes podman's flags: read-only root, UID/GID 65532, no capabilities, no
  privilege escalation, and a tmpfs for the chart's ``emptyDir`` at /tmp.
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from kubernetes import client, dynamic
from kubernetes.client.exceptions import ApiException

from tools.devcluster import ClusterHandle
from tools.devcluster.pytest_plugin import default_wait, wait_until

ROOT = Path(__file__).resolve().parents[2]


# -- app ------------------------------------------------------------------------------------

GROUP, VERSION = "oam-operator.dev", "v1alpha1"
OWNER_LABEL = "oam-operator.dev/owner-id"


def config_and_deployment(name: str) -> list[dict[str, Any]]:
    """A ConfigMap and a Deployment (passthrough components), the Deployment mounting the ConfigMap."""
    labels = {"app": name}
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-config"},
              "data": {"greeting": "hello"}}
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {
                     "containers": [{"name": "main", "image": "registry.invalid/web:1",
                                     "envFrom": [{"configMapRef": {"name": f"{name}-config"}}]}]}}},
    }
    return [{"name": f"{name}-config", "type": "passthrough", "properties": {"object": config}},
            {"name": name, "type": "passthrough", "properties": {"object": deployment}}]


def apply_application(api: Any, namespace: str, name: str, spec: dict[str, Any]) -> None:
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Application",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}
    resource = dynamic.DynamicClient(api).resources.get(api_version=f"{GROUP}/{VERSION}", kind="Application")
    resource.server_side_apply(body=body, namespace=namespace, field_manager="helm-test-user", force_conflicts=True)


def ready_condition(app: dict[str, Any]) -> dict[str, Any]:
    conditions = (app.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "Ready"), {})


def wait_state(api: Any, cluster: ClusterHandle, namespace: str, name: str, state: str,
               reason: str | None = None) -> dict[str, Any]:
    custom = client.CustomObjectsApi(api)

    def reached() -> dict[str, Any] | None:
        app: dict[str, Any] = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "applications", name)
        status = app.get("status") or {}
        current = status.get("observedGeneration") == app["metadata"]["generation"]
        if current and status.get("state") == state and reason in (None, ready_condition(app).get("reason")):
            return app
        return None

    result: dict[str, Any] = wait_until(reached, default_wait(cluster), f"Application {name} to reach {state}")
    return result


def delete_application(api: Any, cluster: ClusterHandle, namespace: str, name: str) -> None:
    """Delete and wait until the operator has removed its objects and finalizer."""
    custom = client.CustomObjectsApi(api)
    custom.delete_namespaced_custom_object(GROUP, VERSION, namespace, "applications", name)

    def gone() -> bool:
        try:
            custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "applications", name)
        except ApiException as error:
            if error.status == 404:
                return True
            raise
        return False

    wait_until(gone, default_wait(cluster), f"Application {name} to be deleted")


def owned_objects(api: Any, namespace: str) -> set[tuple[str, str]]:
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    found = {("ConfigMap", o.metadata.name) for o in core.list_namespaced_config_map(namespace).items
             if OWNER_LABEL in (o.metadata.labels or {})}
    found |= {("Deployment", o.metadata.name) for o in apps.list_namespaced_deployment(namespace).items
              if OWNER_LABEL in (o.metadata.labels or {})}
    return found


def grant_tenant(api: Any, namespace: str, account: str, create: bool = True,
                 more_rules: list[dict[str, Any]] | None = None) -> None:
    """A ServiceAccount (``create=False``: an existing one, e.g. ``default``) whose Role lets it
    manage ConfigMaps and Deployments of its namespace, plus ``more_rules`` (Jobs for a hook, say)."""
    if create:
        client.CoreV1Api(api).create_namespaced_service_account(namespace, {"metadata": {"name": account}})
    rbac = client.RbacAuthorizationV1Api(api)
    verbs = ["get", "list", "watch", "create", "update", "patch", "delete"]
    rbac.create_namespaced_role(namespace, {
        "metadata": {"name": account},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": verbs},
                  {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": verbs},
                  {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]},
                  *(more_rules or [])]})
    rbac.create_namespaced_role_binding(namespace, {
        "metadata": {"name": account},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": account},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]})


# -- helm -----------------------------------------------------------------------------------

FIELD_MANAGER = "oam-helm-test"
Obj = dict[str, Any]


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
        elif (var.get("valueFrom") or {}).get("fieldRef", {}).get("fieldPath") == "metadata.namespace":
            env[var["name"]] = deployment["metadata"]["namespace"]  # the downward API's POD_NAMESPACE
    env["POD_NAME"] = f"{deployment['metadata']['name']}-local"
    env["TMPDIR"] = str(log_path.parent)
    command = [str(Path(sys.executable).parent / "oam-operator"), *args, "--kubeconfig", str(kubeconfig)]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=env, cwd=ROOT)
    return ChartOperator(process, log_path, health, kubeconfig)


# -- image ----------------------------------------------------------------------------------

BUILD = ROOT / "tools" / "image" / "build.sh"
CONTAINERS_CONF = ROOT / "tools" / "image" / "containers.conf"
TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
Obj = dict[str, object]


def podman(*args: str, check: bool = True, timeout: float = 120,
           input_text: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run podman with the project's containers.conf; a failure raises with podman's own output."""
    env = {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}
    result = subprocess.run(["podman", *args], capture_output=True, text=True, env=env, check=False,
                            timeout=timeout, input=input_text)
    if check and result.returncode != 0:
        raise AssertionError(f"podman {' '.join(args)} exited {result.returncode}:\n{result.stdout}{result.stderr}")
    return result


def image_tag() -> str:
    return subprocess.run([str(BUILD), "--print-tag"], capture_output=True, text=True, check=True).stdout.strip()


def image_missing() -> str | None:
    """Why the image cannot be used (no podman, not built), or ``None``."""
    if shutil.which("podman") is None:
        return "podman is not installed: run `make image` (it installs podman, runc and mmdebstrap)"
    tag = image_tag()
    if podman("image", "exists", tag, check=False).returncode != 0:
        return f"the image {tag} is not built: run `make image`"
    return None


def cluster_endpoint(kubeconfig: str) -> tuple[str, str, bytes]:
    """(host, port, CA certificate PEM) of the control plane in ``kubeconfig``."""
    config = yaml.safe_load(Path(kubeconfig).read_text())
    cluster = config["clusters"][0]["cluster"]
    url = urlsplit(cluster["server"])
    if "certificate-authority-data" in cluster:
        ca = base64.b64decode(cluster["certificate-authority-data"])
    else:
        ca = Path(cluster["certificate-authority"]).read_bytes()
    return url.hostname or "127.0.0.1", str(url.port or 443), ca


@dataclass
class ContainerOperator:
    name: str
    health_port: int
    metrics_port: int

    def running(self) -> bool:
        result = podman("inspect", "--format", "{{.State.Running}}", self.name, check=False)
        return result.stdout.strip() == "true"

    def exec_get(self, port: int, path: str, check: bool = True) -> str:
        """GET ``http://127.0.0.1:<port><path>`` from inside the container (with its own Python)."""
        script = (
            "import sys, urllib.request\n"
            "opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))\n"
            f"with opener.open('http://127.0.0.1:{port}{path}', timeout=5) as r:\n"
            "    sys.stdout.write(str(r.status) + '\\n' + r.read().decode())\n"
        )
        return podman("exec", self.name, "python3", "-c", script, timeout=30, check=check).stdout

    def healthy(self) -> bool:
        if not self.running():
            raise AssertionError(f"the operator container stopped:\n{self.log()}")
        return self.exec_get(self.health_port, "/healthz", check=False).startswith("200\n")

    def log(self) -> str:
        result = podman("logs", self.name, check=False)
        return (result.stdout + result.stderr)[-8000:]

    def stop(self) -> None:
        podman("stop", "--time", "30", self.name, check=False, timeout=60)
        podman("rm", "--force", self.name, check=False)


def start_container_operator(objects: list[dict[str, object]], kubeconfig: str, token: str, namespace: str,
                             work: Path) -> ContainerOperator:
    """``podman run`` of the Deployment's container with the chart's settings (module docstring)."""
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]  # type: ignore[index]
    container = pod["containers"][0]
    security = container["securityContext"]
    pod_security = pod["securityContext"]
    assert security["readOnlyRootFilesystem"] is True and security["capabilities"]["drop"] == ["ALL"]
    assert security["allowPrivilegeEscalation"] is False
    user = f"{pod_security['runAsUser']}:{pod_security['runAsGroup']}"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    host, port, ca = cluster_endpoint(kubeconfig)
    secrets = work / "serviceaccount"
    secrets.mkdir(parents=True, exist_ok=True)
    (secrets / "token").write_text(token)
    (secrets / "ca.crt").write_bytes(ca)
    (secrets / "namespace").write_text(namespace)
    for path in (secrets, *secrets.iterdir()):
        path.chmod(0o755 if path.is_dir() else 0o644)
    name = f"{deployment['metadata']['name']}-{os.getpid()}"  # type: ignore[index]
    env = ["-e", f"KUBERNETES_SERVICE_HOST={host}", "-e", f"KUBERNETES_SERVICE_PORT={port}",
           "-e", f"POD_NAME={name}", "-e", f"POD_NAMESPACE={namespace}"]
    for var in container.get("env", []):
        if "value" in var:
            env += ["-e", f"{var['name']}={var['value']}"]
    podman("rm", "--force", name, check=False)
    podman(
        "run", "--detach", "--name", name, "--network", "host", "--read-only", "--user", user,
        "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--tmpfs", "/tmp:rw,mode=1777,size=256m",
        "-v", f"{secrets}:{TOKEN_DIR}:ro", *env, container["image"], *container["args"],
    )
    return ContainerOperator(name, ports["health"], ports["metrics"])
