"""Start and stop a loopback-only Kubernetes control plane (docs/devcluster.md#the-control-plane-library).

Profiles: ``minimal`` (etcd + kube-apiserver, envtest parity) and ``full`` (minimal +
kube-controller-manager + kube-scheduler + kwok with fake nodes, so workloads become
Available and namespaces finish deleting).

Only the standard library and ``cryptography`` are imported here, never ``kubernetes``:
the pytest plugin must be able to set ``KUBECONFIG`` before that package is first imported.
The API server is spoken to with ``urllib`` over verified TLS with the admin client
certificate, through an opener with an empty proxy map so no proxy variable ever routes
loopback traffic.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import pki as pki_module

HERE = Path(__file__).resolve().parent
PROFILES = ("minimal", "full")
POLL_SECONDS = 0.25
STOP_GRACE_SECONDS = 10.0
PORT_RETRIES = 3
FAKE_NODE_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
KCM_CONTROLLERS = (
    "garbage-collector-controller",
    "namespace-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "root-ca-certificate-publisher-controller",
    "clusterrole-aggregation-controller",
    "deployment-controller",
    "replicaset-controller",
    "statefulset-controller",
    "daemonset-controller",
    "job-controller",
    "cronjob-controller",
    "ttl-after-finished-controller",
    "disruption-controller",
    "resourcequota-controller",
)
AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
"""


class DevclusterError(RuntimeError):
    """Base of the errors this library raises."""


class BinariesMissing(DevclusterError):
    """Some binary is not built; the message names it and the command that builds it."""


class StartupError(DevclusterError):
    """The control plane did not become ready; the message carries the log tails."""


# --------------------------------------------------------------------------------------------
# Versions and binaries


def read_versions_file(path: Path = HERE / "versions.env") -> dict[str, str]:
    """Parse ``KEY=value`` lines (values may be double-quoted), like bash's ``source``."""
    values: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        values[key.strip()] = value.strip().strip('"')
    return values


def pinned_versions() -> dict[str, str]:
    """The versions in force: ``versions.env`` with ``OAM_DEVCLUSTER_*_VERSION`` overrides."""
    pins = read_versions_file()
    return {
        "kubernetes": os.environ.get("OAM_DEVCLUSTER_K8S_VERSION", pins["K8S_VERSION"]).lstrip("v"),
        "etcd": os.environ.get("OAM_DEVCLUSTER_ETCD_VERSION", pins["ETCD_VERSION"]).lstrip("v"),
        "kwok": os.environ.get("OAM_DEVCLUSTER_KWOK_VERSION", pins["KWOK_VERSION"]).lstrip("v"),
    }


def cache_root() -> Path:
    explicit = os.environ.get("OAM_DEVCLUSTER_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "oam-operator" / "devcluster"


BINARY_COMPONENT = {
    "etcd": "etcd",
    "kube-apiserver": "kubernetes",
    "kube-controller-manager": "kubernetes",
    "kube-scheduler": "kubernetes",
    "kubectl": "kubernetes",
    "kwok": "kwok",
}


@dataclass(frozen=True)
class Binaries:
    """Paths of the binaries; ``None`` for one that is not built."""

    etcd: Path | None
    kube_apiserver: Path | None
    kube_controller_manager: Path | None
    kube_scheduler: Path | None
    kubectl: Path | None
    kwok: Path | None
    versions: dict[str, str]
    kwok_stages: Path | None = None

    def path(self, binary: str) -> Path | None:
        value: Path | None = getattr(self, binary.replace("-", "_"))
        return value

    def missing(self, profile: str) -> list[str]:
        wanted = ["etcd", "kube-apiserver"]
        if profile == "full":
            wanted += ["kube-controller-manager", "kube-scheduler", "kwok"]
        missing = [name for name in wanted if self.path(name) is None]
        if profile == "full" and self.kwok is not None and self.kwok_stages is None:
            missing.append("kwok stages (stages.yaml)")
        return missing


def find_binaries(versions: Mapping[str, str] | None = None) -> Binaries:
    """Locate the binaries in ``OAM_DEVCLUSTER_BIN_DIR`` or in the build cache (docs/devcluster.md#the-build-cache)."""
    pins = dict(versions or pinned_versions())
    bin_dir = os.environ.get("OAM_DEVCLUSTER_BIN_DIR")
    found: dict[str, Path | None] = {}
    for binary, component in BINARY_COMPONENT.items():
        if bin_dir:
            candidate = Path(bin_dir) / binary
        else:
            candidate = cache_root() / component / f"v{pins[component]}" / "bin" / binary
            if not (candidate.parent.parent / "BUILDINFO.json").is_file():
                found[binary] = None
                continue
        found[binary] = candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None
    if bin_dir:
        stages: Path | None = Path(bin_dir) / "kwok-stages.yaml"
    else:
        stages = cache_root() / "kwok" / f"v{pins['kwok']}" / "stages.yaml"
    return Binaries(
        kwok_stages=stages if stages is not None and stages.is_file() else None,
        etcd=found["etcd"],
        kube_apiserver=found["kube-apiserver"],
        kube_controller_manager=found["kube-controller-manager"],
        kube_scheduler=found["kube-scheduler"],
        kubectl=found["kubectl"],
        kwok=found["kwok"],
        versions=pins,
    )


def require_binaries(profile: str, binaries: Binaries | None = None) -> Binaries:
    binaries = binaries or find_binaries()
    missing = binaries.missing(profile)
    if missing:
        where = os.environ.get("OAM_DEVCLUSTER_BIN_DIR") or str(cache_root())
        raise BinariesMissing(
            f"devcluster binaries missing for profile {profile}: {', '.join(missing)} (looked in {where}); "
            "build them with `make devcluster` (tools/devcluster/build.sh)"
        )
    return binaries


# --------------------------------------------------------------------------------------------
# Process identity


def process_start_time(pid: int) -> int | None:
    """Field 22 of ``/proc/<pid>/stat`` (start time in clock ticks); ``None`` if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[19])


def process_is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2 :].split()[0] in ("Z", "X")


def same_process(pid: int, start_time: int | None) -> bool:
    """True while ``pid`` is the very process recorded (guards against pid reuse)."""
    return start_time is not None and process_start_time(pid) == start_time


def process_alive(pid: int, start_time: int | None) -> bool:
    return same_process(pid, start_time) and not process_is_zombie(pid)


# --------------------------------------------------------------------------------------------
# The handle and the recorded state


@dataclass
class ClusterHandle:
    """What fixtures and the CLI pass around (docs/devcluster.md#library-api)."""

    name: str
    profile: str
    kubeconfig: str
    server: str
    run_dir: str | None
    has_controllers: bool
    fake_nodes: list[str] = field(default_factory=list)
    log_paths: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)


@dataclass
class ComponentState:
    name: str
    pid: int
    pgid: int
    start_time: int | None
    executable: str
    port: int


def runtime_root() -> Path:
    """Where CLI clusters and the registry of all runs live."""
    base = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    root = Path(base) / f"oam-devcluster-{os.getuid()}"
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    return root


def registry_dir() -> Path:
    """One file per run, pointing at its run directory: what ``reap_stale`` walks."""
    path = runtime_root() / "registry"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


# --------------------------------------------------------------------------------------------
# HTTP over loopback


_NO_PROXY_OPENER_HANDLERS: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({})]


def _open(url: str, context: ssl.SSLContext | None, method: str = "GET", body: bytes | None = None,
          timeout: float = 5.0) -> tuple[int, bytes]:
    handlers = list(_NO_PROXY_OPENER_HANDLERS)
    if context is not None:
        handlers.append(urllib.request.HTTPSHandler(context=context))
    opener = urllib.request.build_opener(*handlers)
    request = urllib.request.Request(url, data=body, method=method)
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with opener.open(request, timeout=timeout) as response:
            return int(response.status), response.read()
    except urllib.error.HTTPError as error:
        return int(error.code), error.read()


class ApiServer:
    """A tiny admin client for readiness checks and fake nodes (no ``kubernetes`` import)."""

    def __init__(self, server: str, ca_path: Path, cert_path: Path, key_path: Path) -> None:
        self.server = server
        self.anonymous = ssl.create_default_context(cafile=str(ca_path))
        self.admin = ssl.create_default_context(cafile=str(ca_path))
        self.admin.load_cert_chain(str(cert_path), str(key_path))

    def request(self, path: str, method: str = "GET", body: Any = None, anonymous: bool = False) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        status, raw = _open(self.server + path, self.anonymous if anonymous else self.admin, method, data)
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode(errors="replace")

    def get(self, path: str) -> tuple[int, Any]:
        return self.request(path)


# --------------------------------------------------------------------------------------------
# Kubeconfigs


def kubeconfig_document(cluster_name: str, server: str, ca_pem: bytes, cert_pem: bytes, key_pem: bytes,
                        user: str) -> dict[str, Any]:
    """A self-contained kubeconfig (JSON is valid YAML, so no YAML library is needed)."""
    context = f"oam-devcluster-{cluster_name}"

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": {"server": server, "certificate-authority-data": b64(ca_pem)}}],
        "users": [{"name": user, "user": {"client-certificate-data": b64(cert_pem), "client-key-data": b64(key_pem)}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": user}}],
        "current-context": context,
        "preferences": {},
    }


def kubeconfig_secret(kubeconfig_path: str, name: str, namespace: str, key: str = "value") -> dict[str, Any]:
    """A Secret manifest holding the kubeconfig at ``kubeconfig_path`` under ``key``: what a hub's
    ClusterProfile names to reach a spoke (docs/devcluster.md#hub-and-spokes)."""
    data = Path(kubeconfig_path).read_bytes()
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": "Opaque",
        "data": {key: base64.b64encode(data).decode()},
    }


def write_private_json(path: Path, document: Any) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(document, handle, indent=2)


# --------------------------------------------------------------------------------------------
# Ports


def choose_ports(names: list[str]) -> dict[str, int]:
    """Bind ``127.0.0.1:0`` for every name, holding every socket until all are chosen."""
    sockets: list[socket.socket] = []
    try:
        ports = {}
        for name in names:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
            ports[name] = sock.getsockname()[1]
        return ports
    finally:
        for sock in sockets:
            sock.close()


def port_refuses(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) != 0


# --------------------------------------------------------------------------------------------
# Command lines


#: A Pod annotated with a Go duration (``8s``) becomes Ready that long after it was scheduled, as in
#: kwok's own "general" pod-ready stage; kwok's "fast" stage the build keeps has no delay otherwise.
POD_READY_DELAY_ANNOTATION = "pod-ready.stage.kwok.x-k8s.io/delay"
_POD_READY_DELAY = f"""  delay:
    durationMilliseconds: 0
    durationFrom:
      expressionFrom: '.metadata.annotations["{POD_READY_DELAY_ANNOTATION}"]'
"""


def stages_with_pod_delays(stages: str) -> str:
    """The kwok stages with the ``pod-ready`` stage delayed by ``POD_READY_DELAY_ANNOTATION``, so a
    test can make one Pod slower than another (docs/devcluster.md#kwok-stages)."""
    documents = stages.split("\n---\n")
    for index, document in enumerate(documents):
        if "\n  name: pod-ready\n" in document and "\n  delay:" not in document and "\n  next:" in document:
            documents[index] = document.replace("\n  next:", "\n" + _POD_READY_DELAY.rstrip("\n") + "\n  next:", 1)
    return "\n---\n".join(documents)


def component_flags(profile: str, run: Path, ports: Mapping[str, int], verbosity: str,
                    audit: bool, extra: Mapping[str, list[str]] | None = None,
                    kwok_stages: Path | None = None) -> dict[str, list[str]]:
    """Flags of every component for ``profile`` (docs/devcluster.md#component-flags)."""
    pki_dir = run / "pki"
    etcd = [
        "--name=devcluster",
        f"--data-dir={run / 'etcd'}",
        f"--listen-client-urls=http://127.0.0.1:{ports['etcd']}",
        f"--advertise-client-urls=http://127.0.0.1:{ports['etcd']}",
        f"--listen-peer-urls=http://127.0.0.1:{ports['etcd-peer']}",
        f"--initial-advertise-peer-urls=http://127.0.0.1:{ports['etcd-peer']}",
        f"--initial-cluster=devcluster=http://127.0.0.1:{ports['etcd-peer']}",
        "--unsafe-no-fsync=true",
        "--log-level=warn",
    ]
    apiserver = [
        f"--etcd-servers=http://127.0.0.1:{ports['etcd']}",
        "--bind-address=127.0.0.1",
        f"--secure-port={ports['kube-apiserver']}",
        "--advertise-address=127.0.0.1",
        f"--tls-cert-file={pki_dir / 'apiserver.crt'}",
        f"--tls-private-key-file={pki_dir / 'apiserver.key'}",
        f"--client-ca-file={pki_dir / 'ca.crt'}",
        f"--service-account-issuer=https://127.0.0.1:{ports['kube-apiserver']}",
        f"--service-account-key-file={pki_dir / 'sa.pub'}",
        f"--service-account-signing-key-file={pki_dir / 'sa.key'}",
        "--service-cluster-ip-range=10.96.0.0/16",
        "--authorization-mode=RBAC",
        "--allow-privileged=true",
        "--endpoint-reconciler-type=none",
        "--disable-admission-plugins=" + ("ServiceAccount" if profile == "minimal" else "TaintNodesByCondition"),
        f"--v={verbosity}",
    ]
    if audit:
        apiserver += [
            f"--audit-policy-file={run / 'audit-policy.yaml'}",
            f"--audit-log-path={run / 'logs' / 'audit.log'}",
            "--audit-log-format=json",
            # One file however long the run: the log rotates at 100 MB otherwise, and readers
            # count from an offset into it (a fleet of 5,000 writes more than that).
            "--audit-log-maxsize=100000",
        ]
    flags = {"etcd": etcd, "kube-apiserver": apiserver}
    if profile == "full":
        kcm_config = run / "kubeconfig" / "kube-controller-manager.kubeconfig"
        flags["kube-controller-manager"] = [
            f"--kubeconfig={kcm_config}",
            f"--authentication-kubeconfig={kcm_config}",
            f"--authorization-kubeconfig={kcm_config}",
            "--bind-address=127.0.0.1",
            f"--secure-port={ports['kube-controller-manager']}",
            "--leader-elect=false",
            "--use-service-account-credentials=false",
            f"--service-account-private-key-file={pki_dir / 'sa.key'}",
            f"--root-ca-file={pki_dir / 'ca.crt'}",
            "--kube-api-qps=100",
            "--kube-api-burst=200",
            "--controllers=" + ",".join(KCM_CONTROLLERS),
            f"--v={verbosity}",
        ]
        scheduler_config = run / "kubeconfig" / "kube-scheduler.kubeconfig"
        flags["kube-scheduler"] = [
            f"--kubeconfig={scheduler_config}",
            f"--authentication-kubeconfig={scheduler_config}",
            f"--authorization-kubeconfig={scheduler_config}",
            "--bind-address=127.0.0.1",
            f"--secure-port={ports['kube-scheduler']}",
            "--leader-elect=false",
            f"--v={verbosity}",
        ]
        # kwok ships no stage it applies without configuration: the build keeps the module's
        # own "fast" node and pod stages (Nodes Ready, Pods Running/Ready, Job Pods Succeeded,
        # deleted Pods released) in one file beside the binary.
        flags["kwok"] = [
            f"--config={kwok_stages or run / 'kwok-stages.yaml'}",
            f"--kubeconfig={run / 'kubeconfig' / 'kwok.kubeconfig'}",
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={FAKE_NODE_ANNOTATION[0]}={FAKE_NODE_ANNOTATION[1]}",
            "--cidr=10.244.0.0/16",
            "--node-ip=10.255.0.1",
            f"--server-address=127.0.0.1:{ports['kwok']}",
        ]
    for component, more in (extra or {}).items():
        flags[component] = flags[component] + list(more)
    return flags


def port_names(profile: str) -> list[str]:
    names = ["etcd", "etcd-peer", "kube-apiserver"]
    if profile == "full":
        names += ["kube-controller-manager", "kube-scheduler", "kwok"]
    return names


def fake_node_manifest(name: str, index: int) -> dict[str, Any]:
    capacity = {"cpu": "64", "memory": "256Gi", "pods": "1000"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {FAKE_NODE_ANNOTATION[0]: FAKE_NODE_ANNOTATION[1]},
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "oam-operator.dev/devcluster": "true",
            },
        },
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "addresses": [
                {"type": "InternalIP", "address": f"10.255.0.{10 + index}"},
                {"type": "Hostname", "address": name},
            ],
        },
    }


def child_environment() -> dict[str, str]:
    """A minimal, explicit environment: no KUBECONFIG (kwok reads it), no proxy variables."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }


def tail_file(path: Path, lines: int) -> list[str]:
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 256 * 1024))
            data = handle.read().decode(errors="replace")
    except OSError:
        return []
    return data.splitlines()[-lines:] if lines > 0 else []


# --------------------------------------------------------------------------------------------
# The control plane


class ControlPlane:
    """A running control plane; a context manager whose exit stops it."""

    def __init__(self, handle: ClusterHandle, components: list[ComponentState], owner: dict[str, Any] | None,
                 processes: dict[str, subprocess.Popen[bytes]] | None = None, keep: bool = False) -> None:
        self.handle = handle
        self.components = components
        self.owner = owner
        self._processes = processes or {}
        self.keep = keep
        self.failed = False
        self._stopped = False
        self._api: ApiServer | None = None
        self._stopped_argv: dict[str, list[str]] = {}

    # -- public API ---------------------------------------------------------------------------

    @property
    def run_dir(self) -> Path:
        assert self.handle.run_dir is not None
        return Path(self.handle.run_dir)

    def api(self) -> ApiServer:
        if self._api is None:
            pki_dir = self.run_dir / "pki"
            self._api = ApiServer(self.handle.server, pki_dir / "ca.crt", pki_dir / "client-admin.crt",
                                  pki_dir / "client-admin.key")
        return self._api

    def tail(self, component: str, lines: int = 100) -> list[str]:
        return tail_file(Path(self.handle.log_paths[component]), lines)

    def restart(self, name: str, timeout: float = 60.0) -> None:
        """Stop one component and start it again with the same command line, for tests of what
        a client does across an API server restart; waits for ``/readyz`` after the API server."""
        self.stop_component(name)
        self.start_component(name, timeout)

    def stop_component(self, name: str, grace: float = STOP_GRACE_SECONDS) -> None:
        """Stop one component and remember its command line for ``start_component``: a cluster
        that is down for a while (the multi-cluster e2e tests' unreachable remote,
        docs/devcluster.md#hub-and-spokes). ``grace``: the seconds between SIGTERM and SIGKILL (an
        API server with clients' watches open can take all of the default 10 s; 0 drops it at once)."""
        component = self._component(name)
        try:
            argv = [arg.decode() for arg in Path(f"/proc/{component.pid}/cmdline").read_bytes().split(b"\0") if arg]
        except OSError as error:
            raise DevclusterError(f"{name} is not running: {error}") from None
        self._terminate(component, grace)
        self._stopped_argv[name] = argv

    def start_component(self, name: str, timeout: float = 60.0) -> None:
        """Start a component stopped by ``stop_component`` with the same command line; waits for
        ``/readyz`` after the API server."""
        component = self._component(name)
        argv = self._stopped_argv.pop(name, None)
        if argv is None:
            raise DevclusterError(f"{name} was not stopped with stop_component")
        log = open(self.handle.log_paths[name], "ab", buffering=0)  # noqa: SIM115 - handed to the child
        try:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                       env=child_environment(), cwd=str(self.run_dir), process_group=0)
        finally:
            log.close()
        self._processes[name] = process
        index = self.components.index(component)
        self.components[index] = ComponentState(name, process.pid, process.pid, process_start_time(process.pid),
                                                component.executable, component.port)
        self._write_state()
        if name != "kube-apiserver":
            return
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.api().request("/readyz", anonymous=True)[0] == 200:
                    return
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise DevclusterError(f"kube-apiserver not ready {timeout:.0f}s after its restart")
            time.sleep(POLL_SECONDS)

    def add_fake_node(self, name: str, timeout: float = 60.0) -> None:
        """Create one more fake node and wait until kwok reports it Ready (full only)."""
        if self.handle.profile != "full":
            raise DevclusterError("fake nodes need the full profile")
        manifest = fake_node_manifest(name, len(self.handle.fake_nodes))
        status, body = self.api().request("/api/v1/nodes", "POST", manifest)
        if status not in (200, 201):
            raise DevclusterError(f"creating node {name} failed with HTTP {status}: {body}")
        self.handle.fake_nodes.append(name)
        deadline = time.monotonic() + timeout
        while not node_ready(self.api(), name):
            if time.monotonic() > deadline:
                raise DevclusterError(f"node {name} not Ready after {timeout:.0f}s")
            time.sleep(POLL_SECONDS)
        self._write_state()

    def stop(self, keep: bool | None = None) -> None:
        """Stop every component in reverse start order; idempotent (docs/devcluster.md#teardown-and-stale-runs)."""
        if self._stopped:
            return
        self._stopped = True
        for component in reversed(self.components):
            self._terminate(component)
        for component in self.components:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(component.pgid, signal.SIGKILL)
        leftovers = [c.name for c in self.components if _group_alive(c.pgid)]
        busy = [c.name for c in self.components if not _wait_port_closed(c.port)]
        keep_dir = keep if keep is not None else self.keep
        keep_dir = keep_dir or os.environ.get("OAM_DEVCLUSTER_KEEP") == "1" or self.failed
        with contextlib.suppress(FileNotFoundError):
            (registry_dir() / f"{self._registry_id()}.json").unlink()
        if not keep_dir and self.handle.run_dir:
            shutil.rmtree(self.handle.run_dir, ignore_errors=True)
        if leftovers or busy:
            raise DevclusterError(f"stop incomplete: process groups alive {leftovers}, ports still open {busy}")

    def __enter__(self) -> ControlPlane:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- internals ----------------------------------------------------------------------------

    def _component(self, name: str) -> ComponentState:
        component = next((c for c in self.components if c.name == name), None)
        if component is None:
            raise DevclusterError(f"no component {name} in this control plane")
        return component

    def _registry_id(self) -> str:
        return self.run_dir.as_posix().strip("/").replace("/", "_")

    def _terminate(self, component: ComponentState, grace: float = STOP_GRACE_SECONDS) -> None:
        process = self._processes.get(component.name)
        if not same_process(component.pid, component.start_time):
            if process is not None:
                with contextlib.suppress(Exception):
                    process.wait(timeout=0)
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(component.pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if process is not None:
                if process.poll() is not None:
                    break
            elif not process_alive(component.pid, component.start_time):
                break
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(component.pgid, signal.SIGKILL)
        if process is not None:
            process.wait()
        else:
            end = time.monotonic() + 5
            while process_alive(component.pid, component.start_time) and time.monotonic() < end:
                time.sleep(0.05)

    def _write_state(self) -> None:
        state = {
            "handle": asdict(self.handle),
            "components": [asdict(c) for c in self.components],
            "owner": self.owner,
        }
        write_private_json(self.run_dir / "state.json", state)
        write_private_json(registry_dir() / f"{self._registry_id()}.json", {"run_dir": str(self.run_dir)})


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _group_alive(pgid: int, timeout: float = 10.0) -> bool:
    """Wait until ``killpg(pgid, 0)`` fails; report whether a live (non-zombie) member remains.

    A detached cluster's processes are reparented to init once their starter exits; their
    zombies keep the group visible to ``killpg`` until init reaps them, which takes a moment.
    """
    deadline = time.monotonic() + timeout
    while _group_exists(pgid):
        if time.monotonic() > deadline:
            return _group_has_live_member(pgid)
        time.sleep(0.05)
    return False


def _group_has_live_member(pgid: int) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False


def _wait_port_closed(port: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not port_refuses(port):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def node_ready(api: ApiServer, name: str) -> bool:
    status, node = api.get(f"/api/v1/nodes/{name}")
    if status != 200 or not isinstance(node, dict):
        return False
    conditions = node.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _owner_identity() -> dict[str, Any]:
    return {"pid": os.getpid(), "start_time": process_start_time(os.getpid())}


def _log(message: str) -> None:
    print(f"[devcluster] {message}", file=__import__("sys").stderr, flush=True)


def default_run_dir() -> Path:
    parent = os.environ.get("OAM_DEVCLUSTER_TMPDIR") or None
    if parent:
        Path(parent).mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="oam-devcluster-", dir=parent))


def start(
    profile: str = "minimal",
    *,
    name: str | None = None,
    nodes: int = 1,
    run_dir: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    audit: bool = False,
    detached: bool = False,
    extra_flags: Mapping[str, list[str]] | None = None,
    binaries: Binaries | None = None,
) -> ControlPlane:
    """Start a control plane and return once it is ready, or raise ``StartupError``.

    ``extra_flags`` appends flags per component (tests inject a bad flag to check the
    failure path). ``detached`` records no owner, so the cluster outlives this process
    (the CLI's ``up``); otherwise ``stop()`` also runs at exit.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")
    reap_stale()
    binaries = require_binaries(profile, binaries)
    timeout = float(timeout if timeout is not None else os.environ.get("OAM_DEVCLUSTER_START_TIMEOUT", "180"))
    run = Path(run_dir) if run_dir is not None else default_run_dir()
    run.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(run, 0o700)
    cluster_name = name or run.name
    last_error: StartupError | None = None
    for attempt in range(1, PORT_RETRIES + 1):
        try:
            return _start_once(profile, cluster_name, nodes, run, timeout, audit, detached, extra_flags, binaries)
        except _PortClash as clash:
            last_error = StartupError(str(clash))
            _log(f"address already in use (attempt {attempt}/{PORT_RETRIES}); retrying with new ports")
            for sub in ("etcd", "logs", "kubeconfig"):
                shutil.rmtree(run / sub, ignore_errors=True)
    assert last_error is not None
    raise last_error


class _PortClash(Exception):
    pass


def _start_once(profile: str, cluster_name: str, nodes: int, run: Path, timeout: float, audit: bool,
                detached: bool, extra_flags: Mapping[str, list[str]] | None, binaries: Binaries) -> ControlPlane:
    began = time.monotonic()
    deadline = began + timeout
    for sub in ("logs", "kubeconfig", "etcd"):
        (run / sub).mkdir(mode=0o700, exist_ok=True)
    ports = choose_ports(port_names(profile))
    server = f"https://127.0.0.1:{ports['kube-apiserver']}"
    pki = pki_module.generate(run / "pki")
    for component, stem in (("kube-controller-manager", "kube-controller-manager"),
                            ("kube-scheduler", "kube-scheduler"), ("kwok", "kwok")):
        keypair = pki.clients[stem]
        write_private_json(run / "kubeconfig" / f"{component}.kubeconfig",
                           kubeconfig_document(cluster_name, server, pki.ca.cert_pem, keypair.cert_pem,
                                               keypair.key_pem, pki_module.CLIENT_IDENTITIES[stem]))
    admin = pki.clients["admin"]
    write_private_json(run / "admin.kubeconfig",
                       kubeconfig_document(cluster_name, server, pki.ca.cert_pem, admin.cert_pem, admin.key_pem,
                                           pki_module.CLIENT_IDENTITIES["admin"]))
    if audit:
        (run / "audit-policy.yaml").write_text(AUDIT_POLICY)
    verbosity = os.environ.get("OAM_DEVCLUSTER_VERBOSITY", "0")
    stages = binaries.kwok_stages
    if profile == "full" and stages is not None:
        (run / "kwok-stages.yaml").write_text(stages_with_pod_delays(stages.read_text()))
        stages = run / "kwok-stages.yaml"
    flags = component_flags(profile, run, ports, verbosity, audit, extra_flags, stages)
    order = ["etcd", "kube-apiserver"]
    if profile == "full":
        order += ["kube-controller-manager", "kube-scheduler", "kwok"]
    log_paths = {c: str(run / "logs" / f"{c}.log") for c in order}
    handle = ClusterHandle(
        name=cluster_name, profile=profile, kubeconfig=str(run / "admin.kubeconfig"), server=server,
        run_dir=str(run), has_controllers=profile == "full", log_paths=log_paths,
        versions={k: f"v{v}" for k, v in binaries.versions.items()},
    )
    plane = ControlPlane(handle, [], None if detached else _owner_identity(), {})
    port_of = {"etcd": ports["etcd"], "kube-apiserver": ports["kube-apiserver"],
               "kube-controller-manager": ports.get("kube-controller-manager", 0),
               "kube-scheduler": ports.get("kube-scheduler", 0), "kwok": ports.get("kwok", 0)}

    def launch(component: str) -> None:
        executable = binaries.path(component)
        assert executable is not None
        log = open(log_paths[component], "ab", buffering=0)  # noqa: SIM115 - handed to the child
        try:
            process = subprocess.Popen(
                [str(executable), *flags[component]], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                env=child_environment(), cwd=str(run), process_group=0,
            )
        finally:
            log.close()
        plane._processes[component] = process
        plane.components.append(ComponentState(component, process.pid, process.pid,
                                               process_start_time(process.pid), str(executable), port_of[component]))
        plane._write_state()

    def check_children() -> None:
        for component in plane.components:
            process = plane._processes[component.name]
            code = process.poll()
            if code is not None:
                if any("address already in use" in line for line in plane.tail(component.name, 200)):
                    raise _PortClash(f"{component.name}: address already in use")
                raise _Failed(component.name, f"{component.name} exited with code {code} during start-up")

    def wait_for(what: str, component: str, check: Any, limit: float) -> None:
        until = min(deadline, time.monotonic() + limit)
        while True:
            check_children()
            try:
                if check():
                    return
            except (OSError, ssl.SSLError, ValueError):
                pass
            if time.monotonic() > until:
                raise _Failed(component, f"{what} not ready after {limit:.0f}s" if time.monotonic() < deadline
                              else f"start-up timeout of {timeout:.0f}s reached waiting for {what}")
            time.sleep(POLL_SECONDS)

    try:
        launch("etcd")
        wait_for("etcd", "etcd", lambda: _etcd_healthy(ports["etcd"]), 30)
        launch("kube-apiserver")
        api = plane.api()
        wait_for("kube-apiserver", "kube-apiserver", lambda: _apiserver_ready(api), 90)
        if profile == "full":
            for component in ("kube-controller-manager", "kube-scheduler", "kwok"):
                launch(component)
            for index in range(nodes):
                node_name = f"devcluster-node-{index}"
                status, body = api.request("/api/v1/nodes", "POST", fake_node_manifest(node_name, index))
                if status not in (200, 201):
                    raise _Failed("kube-apiserver", f"creating node {node_name} failed with HTTP {status}: {body}")
                handle.fake_nodes.append(node_name)
            wait_for("kube-controller-manager", "kube-controller-manager",
                     lambda: _healthz(ports["kube-controller-manager"]) and _defaults_present(api), 60)
            wait_for("kube-scheduler", "kube-scheduler", lambda: _healthz(ports["kube-scheduler"]), 60)
            wait_for("kwok", "kwok", lambda: _kwok_healthy(ports["kwok"])
                     and all(node_ready(api, n) for n in handle.fake_nodes), 60)
    except _PortClash:
        plane.stop(keep=True)
        raise
    except _Failed as failure:
        plane.failed = True
        message = _failure_message(plane, failure.component, str(failure))
        plane.stop(keep=True)
        raise StartupError(message) from None
    except BaseException:
        plane.failed = True
        plane.stop(keep=True)
        raise
    plane._write_state()
    if not detached:
        atexit.register(_stop_quietly, plane)
    _log(f"{profile} control plane {cluster_name} ready at {server} (kubeconfig {handle.kubeconfig}) "
         f"in {time.monotonic() - began:.1f}s")
    return plane


class _Failed(Exception):
    def __init__(self, component: str, message: str) -> None:
        super().__init__(message)
        self.component = component


def _failure_message(plane: ControlPlane, failing: str, reason: str) -> str:
    parts = [f"devcluster start failed: {reason}; run directory kept at {plane.handle.run_dir}"]
    for component in plane.handle.log_paths:
        lines = plane.tail(component, 60 if component == failing else 20)
        if lines:
            parts.append(f"--- last {len(lines)} lines of {component}.log ---")
            parts.extend(lines)
    return "\n".join(parts)


def _stop_quietly(plane: ControlPlane) -> None:
    with contextlib.suppress(Exception):
        plane.stop()


def _etcd_healthy(port: int) -> bool:
    status, raw = _open(f"http://127.0.0.1:{port}/health", None, timeout=2)
    return status == 200 and json.loads(raw).get("health") == "true"


def _apiserver_ready(api: ApiServer) -> bool:
    status, _ = api.request("/readyz", anonymous=True)
    if status != 200:
        return False
    return all(api.get(f"/api/v1/namespaces/{ns}")[0] == 200 for ns in ("default", "kube-system"))


def _insecure_context() -> ssl.SSLContext:
    # The controller manager and scheduler serve a self-signed in-memory certificate; only
    # these health probes skip verification (docs/devcluster.md#component-flags).
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _healthz(port: int) -> bool:
    status, raw = _open(f"https://127.0.0.1:{port}/healthz", _insecure_context(), timeout=2)
    return status == 200 and raw.strip() == b"ok"


def _kwok_healthy(port: int) -> bool:
    status, _ = _open(f"http://127.0.0.1:{port}/healthz", None, timeout=2)
    return status == 200


def _defaults_present(api: ApiServer) -> bool:
    return (api.get("/api/v1/namespaces/default/serviceaccounts/default")[0] == 200
            and api.get("/api/v1/namespaces/default/configmaps/kube-root-ca.crt")[0] == 200)


# --------------------------------------------------------------------------------------------
# Attach, reap, list


def load_state(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "state.json").read_text())
    return data


def plane_from_state(run_dir: Path) -> ControlPlane:
    state = load_state(run_dir)
    handle = ClusterHandle(**state["handle"])
    components = [ComponentState(**c) for c in state["components"]]
    return ControlPlane(handle, components, state.get("owner"))


def cli_run_dir(name: str) -> Path:
    return runtime_root() / "clusters" / name


def attach(name: str) -> ControlPlane:
    """Rebuild the ``ControlPlane`` of a CLI cluster from its ``state.json``."""
    run = cli_run_dir(name)
    if not (run / "state.json").is_file():
        raise DevclusterError(f"no cluster named {name!r} (no {run / 'state.json'})")
    return plane_from_state(run)


def recorded_runs() -> Iterator[Path]:
    for entry in sorted(registry_dir().glob("*.json")):
        try:
            run = Path(json.loads(entry.read_text())["run_dir"])
        except (OSError, ValueError, KeyError):
            entry.unlink(missing_ok=True)
            continue
        if not (run / "state.json").is_file():
            entry.unlink(missing_ok=True)
            continue
        yield run


def owner_alive(owner: Mapping[str, Any] | None) -> bool:
    if owner is None:
        return True  # detached CLI clusters have no owner; only `down` stops them
    return process_alive(int(owner["pid"]), owner.get("start_time"))


def reap_stale() -> list[str]:
    """Stop every recorded library run whose owner process is gone; return their run dirs."""
    reaped = []
    for run in recorded_runs():
        try:
            plane = plane_from_state(run)
        except (OSError, ValueError, TypeError, KeyError):
            continue
        if plane.owner is None or owner_alive(plane.owner):
            continue
        with contextlib.suppress(DevclusterError):
            plane.stop()
        reaped.append(str(run))
    return reaped


def all_runs() -> list[ControlPlane]:
    planes = []
    for run in recorded_runs():
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            planes.append(plane_from_state(run))
    return planes


def component_alive(component: ComponentState) -> bool:
    return process_alive(component.pid, component.start_time)

