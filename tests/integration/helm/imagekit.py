"""The operator image run as the chart runs it: podman with the rendered Deployment's container.

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
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import yaml

ROOT = Path(__file__).resolve().parents[3]
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
           "-e", f"POD_NAME={name}"]
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
