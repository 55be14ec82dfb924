"""``make demo``: the operator against the local control plane, reconciling an example to Ready.

``python -m tools.demo up [--example FILE] [--namespace NS]`` starts (or reuses) the full
control plane of this checkout (``demo-<hash of the checkout's path>``, see ``checkout_name``),
installs the CRDs, starts ``oam-operator run`` in the
background (its log and pid next to the cluster's run directory), applies the example and
prints each bundle's progress until the Application is Ready. ``up --multi`` (``make demo-multi``)
also starts a spoke and delivers the example there (``tools/demo_spoke.py``). ``python -m tools.demo down``
deletes the demo's Applications (the operator must run to remove their finalizers), stops the
operator and then the control plane (and the spoke's, if one runs).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tools import demo_spoke
from tools.devcluster import devcluster as dc

ROOT = Path(__file__).resolve().parents[1]


def checkout_name(root: Path = ROOT) -> str:
    """``demo-<8 hex>``: the demo's control plane and operator belong to this checkout, so
    ``make demo-down`` in one checkout never stops another checkout's demo."""
    return "demo-" + hashlib.sha256(str(root).encode()).hexdigest()[:8]


NAME = checkout_name()


def code_fingerprint(root: Path = ROOT) -> str:
    """SHA-256 of the operator's sources and pyproject.toml: a running demo operator is reused
    only when it runs the checkout's current code."""
    digest = hashlib.sha256()
    for path in sorted([root / "pyproject.toml", *(root / "operator").rglob("*.py")]):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
GROUP_PATH = "/apis/oam-operator.dev/v1alpha1"


def say(message: str) -> None:
    print(message, flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def operator_state_path() -> Path:
    return dc.cli_run_dir(NAME).parent / f"{NAME}-operator.json"


def kubectl(plane: dc.ControlPlane, *args: str, check: bool = True, stdin: str | None = None,
            ) -> subprocess.CompletedProcess[str]:
    binary = dc.find_binaries().kubectl
    if binary is None:
        raise SystemExit("kubectl is not built; run `make devcluster`")
    return subprocess.run([str(binary), "--kubeconfig", plane.handle.kubeconfig, *args], check=check,
                          capture_output=True, text=True, input=stdin)


HELM_RELEASE, HELM_NAMESPACE = "oam-operator", "oam-system"  # the README's `helm install`


def helm_owned(crd: dict[str, Any], release: str = HELM_RELEASE, namespace: str = HELM_NAMESPACE) -> dict[str, Any]:
    """``crd`` with the metadata by which Helm recognises an object of release ``release`` in
    ``namespace``: a later ``helm install`` of that release adopts it instead of refusing it
    (docs/chart.md#crds-applied-by-hand), so the README's install works after ``make demo``."""
    meta = crd.setdefault("metadata", {})
    meta.setdefault("labels", {})["app.kubernetes.io/managed-by"] = "Helm"
    meta.setdefault("annotations", {}).update(
        {"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": namespace})
    return crd


def demo_crds(release: str = HELM_RELEASE, namespace: str = HELM_NAMESPACE) -> dict[str, Any]:
    """The CRDs of ``crds/`` as one ``List``, owned by Helm's ``release`` (``helm_owned``)."""
    import yaml

    items = [helm_owned(yaml.safe_load(path.read_text()), release, namespace)
             for path in sorted((ROOT / "crds").glob("*.yaml"))]
    return {"apiVersion": "v1", "kind": "List", "items": items}


def ensure_cluster() -> dc.ControlPlane:
    try:
        plane = dc.attach(NAME)
        if all(dc.component_alive(c) for c in plane.components):
            say(f"reusing the running control plane '{NAME}'")
            return plane
        plane.stop()
    except dc.DevclusterError:
        pass
    say(f"starting the full local control plane '{NAME}' (etcd, kube-apiserver, controller manager, scheduler, kwok)")
    run = dc.cli_run_dir(NAME)
    run.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return dc.start("full", name=NAME, run_dir=run, detached=True)


def operator_running() -> dict[str, Any] | None:
    path = operator_state_path()
    if not path.is_file():
        return None
    state: dict[str, Any] = json.loads(path.read_text())
    return state if dc.process_alive(state["pid"], state["start_time"]) else None


def stop_operator(running: dict[str, Any]) -> None:
    os.killpg(running["pid"], signal.SIGTERM)
    deadline = time.monotonic() + 30
    while dc.process_alive(running["pid"], running["start_time"]) and time.monotonic() < deadline:
        time.sleep(0.2)
    say(f"stopped the operator (pid {running['pid']})")


def start_operator(plane: dc.ControlPlane, multi: bool = False) -> dict[str, Any]:
    running = operator_running()
    fingerprint = code_fingerprint()
    if running is not None and running.get("code") == fingerprint and running.get("multi", False) == multi:
        say(f"reusing the running operator (pid {running['pid']}): it runs this checkout's current code")
        return running
    if running is not None:
        say(f"the running operator (pid {running['pid']}) runs older code or another mode: restarting it")
        stop_operator(running)
    log_path = dc.cli_run_dir(NAME).parent / f"{NAME}-operator.log"
    metrics, health = free_port(), free_port()
    executable = Path(sys.executable).parent / "oam-operator"
    args = [str(executable), "run", "--kubeconfig", plane.handle.kubeconfig, "--metrics-port", str(metrics),
            "--health-port", str(health), "--log-format", "text", "--no-leader-election",  # one operator
            "--use-operator-identity"]  # the demo is a single-team cluster: an explicit opt-in (README)
    if multi:  # where the spoke's kubeconfig Secret lives (docs/multicluster.md)
        args += ["--operator-namespace", demo_spoke.OPERATOR_NAMESPACE]
    with log_path.open("ab") as log:
        process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, cwd=ROOT)
    state = {"pid": process.pid, "start_time": dc.process_start_time(process.pid), "log": str(log_path),
             "metrics_port": metrics, "health_port": health, "code": fingerprint, "multi": multi}
    operator_state_path().write_text(json.dumps(state))
    say(f"started the operator (pid {process.pid}); log: {log_path}")
    return state


def bundle_line(status: dict[str, Any]) -> str:
    bundles = status.get("bundles") or []
    parts = [f"{b['name']} {b['state']} {b['ready']}/{b['objects']}" for b in bundles]
    return " | ".join(parts) if parts else "(no bundles yet)"


def outcome(app: dict[str, Any]) -> bool | None:
    """True once a pass of the Application's current generation made it Ready, False once one
    ended in ``Error``, ``None`` meanwhile. A status of an earlier generation (the last run's
    ``Error`` before the operator saw the new spec) decides nothing."""
    status = app.get("status") or {}
    if status.get("observedGeneration") != (app.get("metadata") or {}).get("generation"):
        return None
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {})
    if ready.get("status") == "True":
        return True
    return False if status.get("state") == "Error" else None


def watch(plane: dc.ControlPlane, namespace: str, name: str, timeout: float) -> bool:
    api = plane.api()
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        code, app = api.get(f"{GROUP_PATH}/namespaces/{namespace}/applications/{name}")
        app = app if code == 200 and isinstance(app, dict) else {}
        status = app.get("status") or {}
        ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {})
        generation = (app.get("metadata") or {}).get("generation")
        stale = "" if status.get("observedGeneration") == generation else (
            f"   (waiting for a pass of generation {generation})")
        line = f"  {status.get('state', '-'):<11} {bundle_line(status)}   {ready.get('message', '')}{stale}"
        if line != last:
            say(f"{time.strftime('%H:%M:%S')}{line}")
            last = line
        decided = outcome(app)
        if decided is not None:
            return decided
        time.sleep(0.5)
    return False


def cmd_up(args: argparse.Namespace) -> int:
    plane = ensure_cluster()
    kubectl(plane, "apply", "--server-side", "-f", "-", stdin=json.dumps(demo_crds()))
    kubectl(plane, "wait", "--for=condition=Established", "crd/applications.oam-operator.dev", "--timeout=60s")
    spoke = demo_spoke.ensure_spoke(NAME) if args.multi else None
    operator = start_operator(plane, multi=spoke is not None)
    kubectl(plane, "create", "namespace", args.namespace, check=False)
    example = Path(args.example)
    if spoke is None:
        applied = kubectl(plane, "apply", "-n", args.namespace, "-f", str(example), "-o", "json")
    else:
        kubectl(spoke, "create", "namespace", args.namespace, check=False)
        kubectl(plane, "apply", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": demo_spoke.connection(spoke.handle.kubeconfig)}))
        say(f"ClusterProfile {demo_spoke.PROFILE} names the spoke's kubeconfig in Secret "
            f"{demo_spoke.OPERATOR_NAMESPACE}/{demo_spoke.SECRET}; the example goes to the spoke")
        applied = kubectl(plane, "apply", "-n", args.namespace, "-f", "-", "-o", "json", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": demo_spoke.pointed_at_spoke(example)}))
    document = json.loads(applied.stdout)
    items = document.get("items") if document.get("kind") == "List" else [document]
    names = [item["metadata"]["name"] for item in items if item.get("kind") == "Application"]
    say(f"applied {example} in namespace {args.namespace}: Application(s) {', '.join(names)}")
    ok = all(watch(plane, args.namespace, name, args.timeout) for name in names)
    kubeconfig = plane.handle.kubeconfig
    warnings = kubectl(plane, "get", "events", "-n", args.namespace, "--field-selector", "type=Warning",
                       "-o", "custom-columns=REASON:.reason,OBJECT:.involvedObject.name,MESSAGE:.message",
                       "--no-headers", check=False).stdout.strip()
    say("")
    say(f"Warning Events in {args.namespace}:\n{warnings}" if warnings else f"no Warning Event in {args.namespace}")
    say("Ready." if ok else "The Application did not become Ready; see the operator log.")
    say("Look around:")
    say(f'  eval "$(.venv/bin/python -m tools.devcluster env --name {NAME})"')
    say(f"  kubectl get oapp -n {args.namespace}            # READY, STATUS, AGE")
    for name in names:
        say(f"  .venv/bin/oam-operator status {name} -n {args.namespace} --tree --kubeconfig {kubeconfig}")
    say(f"  .venv/bin/oam-operator ui -n {args.namespace} --kubeconfig {kubeconfig} --open   # the web view")
    if spoke is not None:
        say(f"  kubectl --kubeconfig {spoke.handle.kubeconfig} get all -n {args.namespace}  # on the spoke")
        say(f"  kubectl describe clusterprofile {demo_spoke.PROFILE}  # the connection, on the hub")
    say(f"  operator log: {operator['log']}")
    say("Stop everything: make demo-down")
    return 0 if ok else 1


def cmd_down(args: argparse.Namespace) -> int:
    try:
        plane = dc.attach(NAME)
    except dc.DevclusterError:
        plane = None
    running = operator_running()
    if plane is not None and running is not None:
        say("deleting the demo's Applications (the operator removes their objects and finalizers)")
        kubectl(plane, "delete", "applications.oam-operator.dev", "--all", "-A", "--timeout=120s", check=False)
    if running is not None:
        stop_operator(running)
    operator_state_path().unlink(missing_ok=True)
    if plane is not None:
        plane.stop()
        say(f"stopped the control plane '{NAME}'")
    spoke = demo_spoke.attached_spoke(NAME)
    if spoke is not None:
        spoke.stop()
        say(f"stopped the spoke control plane '{demo_spoke.spoke_name(NAME)}'")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.demo")
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up")
    up.add_argument("--example", default=str(ROOT / "examples" / "shop.yaml"))
    up.add_argument("--namespace", default="shop")
    up.add_argument("--timeout", type=float, default=300)
    up.add_argument("--multi", action="store_true", help="a hub and a spoke: the example delivered to the spoke")
    sub.add_parser("down")
    args = parser.parse_args(argv)
    return cmd_up(args) if args.command == "up" else cmd_down(args)


if __name__ == "__main__":
    sys.exit(main())
