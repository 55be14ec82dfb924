"""``make demo``: the operator against the local control plane, reconciling an example to Ready.

``python -m tools.demo up [--example FILE] [--namespace NS]`` starts (or reuses) the full
control plane of this checkout (``demo-<hash of the checkout's path>``, see ``checkout_name``),
installs the CRDs, starts ``oam-operator run`` in the
background (its log and pid next to the cluster's run directory), applies the example and
prints each bundle's progress until the Application is Ready. ``up --multi`` (``make demo-multi``)
also starts a spoke and delivers the example there (``tools/demo_spoke.py``), in a namespace of
its own (``shop-spoke``), so ``make demo`` and ``make demo-multi`` run in either order and side
by side: one operator (always run with ``--operator-namespace oam-system``) serves both.
``python -m tools.demo env`` prints the shell lines that the printed next steps need: kubectl and
the virtual environment's ``bin/`` (``oam-operator``, the ``kubectl oam`` plugin) on ``PATH``,
``KUBECONFIG`` and the operator's namespace. ``python -m tools.demo down`` deletes the demo's
Applications (the operator must run to remove their finalizers), stops the operator and then the
control plane (and the spoke's, if one runs).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tools import demo_spoke
from tools.demo_steps import env_lines, next_steps
from tools.devcluster import devcluster as dc
from tools.operatorprocess import OperatorProcess, free_port, run_command

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


def operator_args(kubeconfig: str, metrics: int, health: int) -> list[str]:
    """``oam-operator run``'s arguments: the same for ``make demo`` and ``make demo-multi``, so
    either reuses the other's operator; ``--operator-namespace`` is where the spoke's kubeconfig
    Secret lives (docs/multicluster.md), harmless without a spoke."""
    return run_command(kubeconfig=kubeconfig, metrics_port=metrics, health_port=health, log_format="text",
                       extra=["--no-leader-election",  # one operator
                              # the demo is a single-team cluster: an explicit opt-in (README)
                              "--use-operator-identity",
                              "--operator-namespace", demo_spoke.OPERATOR_NAMESPACE])


def start_operator(plane: dc.ControlPlane) -> dict[str, Any]:
    running = operator_running()
    fingerprint = code_fingerprint()
    if running is not None and running.get("code") == fingerprint:
        say(f"reusing the running operator (pid {running['pid']}): it runs this checkout's current code")
        return running
    if running is not None:
        say(f"the running operator (pid {running['pid']}) runs older code: restarting it")
        stop_operator(running)
    log_path = dc.cli_run_dir(NAME).parent / f"{NAME}-operator.log"
    metrics, health = free_port(), free_port()
    # Detached: the operator outlives this command (``make demo-down`` stops it); the user's
    # OAM_OPERATOR_* settings apply to it.
    process = OperatorProcess.spawn(operator_args(plane.handle.kubeconfig, metrics, health), log_path, metrics, health,
                                    append=True, detach=True, keep_settings=True, cwd=ROOT).process
    state = {"pid": process.pid, "start_time": dc.process_start_time(process.pid), "log": str(log_path),
             "metrics_port": metrics, "health_port": health, "code": fingerprint}
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


def example_documents(example: Path, multi: bool) -> list[dict[str, Any]]:
    """The example's documents; with ``multi`` each Application points at the spoke's profile."""
    import yaml

    if multi:
        return demo_spoke.pointed_at_spoke(example)
    return [d for d in yaml.safe_load_all(example.read_text(encoding="utf-8")) if d]


def delivered_elsewhere(live: dict[str, Any] | None, wanted: dict[str, Any]) -> str | None:
    """Why the live Application must go before ``wanted`` is applied, else ``None``.

    An Application whose objects are on one cluster refuses a profile that delivers to another
    (``ClusterSwitched``, docs/multicluster.md#a-profile-switched-to-another-cluster): the demo
    deletes it first (its objects with it) and says so, rather than leaving it in ``Error``. With
    the demos' own namespaces this meets only an Application an older demo left.
    """
    if live is None:
        return None
    before = (live.get("spec") or {}).get("profile") or ""
    after = (wanted.get("spec") or {}).get("profile") or ""
    if before == after:
        return None
    meta = live.get("metadata") or {}

    def where(profile: str) -> str:
        return f"ClusterProfile {profile}" if profile else "the operator's own cluster"

    return (f"Application {meta.get('namespace')}/{meta.get('name')} delivers with {where(before)}; this demo "
            f"delivers it with {where(after)}: deleting it first (its objects go with it)")


def live_application(plane: dc.ControlPlane, namespace: str, name: str) -> dict[str, Any] | None:
    code, app = plane.api().get(f"{GROUP_PATH}/namespaces/{namespace}/applications/{name}")
    return app if code == 200 and isinstance(app, dict) else None


def demo_namespace(multi: bool, given: str | None = None) -> str:
    """``shop`` for ``make demo``, ``shop-spoke`` for ``make demo-multi``: the two Applications
    never share a namespace, so the demos run in either order, side by side."""
    return given or (demo_spoke.NAMESPACE if multi else "shop")


def cmd_up(args: argparse.Namespace) -> int:
    namespace = demo_namespace(args.multi, args.namespace)
    plane = ensure_cluster()
    kubectl(plane, "apply", "--server-side", "-f", "-", stdin=json.dumps(demo_crds()))
    kubectl(plane, "wait", "--for=condition=Established", "crd/applications.oam-operator.dev", "--timeout=60s")
    spoke = demo_spoke.ensure_spoke(NAME) if args.multi else None
    operator = start_operator(plane)
    kubectl(plane, "create", "namespace", namespace, check=False)
    example = Path(args.example)
    documents = example_documents(example, args.multi)
    if spoke is not None:
        kubectl(spoke, "create", "namespace", namespace, check=False)
        kubectl(plane, "apply", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": demo_spoke.connection(spoke.handle.kubeconfig)}))
        say(f"ClusterProfile {demo_spoke.PROFILE} names the spoke's kubeconfig in Secret "
            f"{demo_spoke.OPERATOR_NAMESPACE}/{demo_spoke.SECRET}; the example goes to the spoke")
    for document in documents:
        if document.get("kind") != "Application":
            continue
        name = document["metadata"]["name"]
        why = delivered_elsewhere(live_application(plane, namespace, name), document)
        if why is not None:
            say(why)
            kubectl(plane, "delete", "applications.oam-operator.dev", name, "-n", namespace, "--timeout=120s")
    applied = kubectl(plane, "apply", "-n", namespace, "-f", "-", "-o", "json",
                      stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": documents}))
    document = json.loads(applied.stdout)
    items = document.get("items") if document.get("kind") == "List" else [document]
    names = [item["metadata"]["name"] for item in items if item.get("kind") == "Application"]
    say(f"applied {example} in namespace {namespace}: Application(s) {', '.join(names)}")
    ok = all(watch(plane, namespace, name, args.timeout) for name in names)
    warnings = kubectl(plane, "get", "events", "-n", namespace, "--field-selector", "type=Warning",
                       "-o", "custom-columns=REASON:.reason,OBJECT:.involvedObject.name,MESSAGE:.message",
                       "--no-headers", check=False).stdout.strip()
    say("")
    say(f"Warning Events in {namespace}:\n{warnings}" if warnings else f"no Warning Event in {namespace}")
    say("Ready." if ok else "The Application did not become Ready; see the operator log.")
    say("Look around (from this directory):")
    for line in next_steps(namespace, names, spoke.handle.kubeconfig if spoke is not None else None):
        say(line)
    say(f"  operator log: {operator['log']}")
    say("Stop everything: make demo-down")
    return 0 if ok else 1


def cmd_env(args: argparse.Namespace) -> int:
    try:
        plane = dc.attach(NAME)
    except dc.DevclusterError:
        print(f"echo 'the demo control plane {NAME} is not running: make demo' >&2; false")
        return 1
    kubectl_binary = dc.find_binaries().kubectl
    for line in env_lines(plane.handle.kubeconfig, kubectl_binary.parent if kubectl_binary else None,
                          Path(sys.executable).parent):
        print(line)
    return 0


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
    up.add_argument("--namespace", default=None, help=f"default: shop, with --multi {demo_spoke.NAMESPACE}")
    up.add_argument("--timeout", type=float, default=300)
    up.add_argument("--multi", action="store_true", help="a hub and a spoke: the example delivered to the spoke")
    sub.add_parser("down")
    sub.add_parser("env", help="the shell lines for the printed next steps (eval them)")
    args = parser.parse_args(argv)
    return {"up": cmd_up, "down": cmd_down, "env": cmd_env}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
