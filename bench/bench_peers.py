"""Side by side on one audited control plane, in one run: our reconciler, kubectl and two peers.

For 50, 200 and 500 objects (``bench_reconciler.objects_for``: half ConfigMaps, half
Deployments, one wave), each tool applies the set into a fresh namespace of the same minimal
control plane (started here with audit logging):

- **ours, operator defaults** — ``Reconciler.apply`` as the operator builds it by default: a
  50 qps / 100 burst bucket that goes off once the server shows API Priority and Fairness
  (``reconciler/flowcontrol.py``), no Events on the objects (``--dependent-events`` is off);
  update policy SsaMerge, concurrency 8, cold discovery. First apply = one call that records the
  new items through the in-call checkpoint (the operator's status write there is not part of
  this library bench) and creates everything, as the operator's pass does.
- **ours, no limit** — the same with the bucket off from the start.
- **kubectl** — ``kubectl apply --server-side``, cold discovery cache; its no-op is the same
  command again with the warm cache.
- **SAP component-operator-runtime v0.3.99** — ``bench/peer/sap``: ``pkg/reconciler`` with
  update policy SsaMerge, ``Apply`` looped until every item is Creating or Ready (first apply),
  then until it returns true; the library posts an Event per created object (counted apart).
- **Flux fluxcd/pkg/ssa v0.78.0** — ``bench/peer/flux``: one ``ApplyAllStaged`` (first apply),
  drift-check concurrency 8; its no-op is ``ApplyAllStaged`` again.

The peers run with no client-side limit (client-go ``QPS < 0``), as controller-runtime does on
an APF server. Before each tool's no-op, the bench makes the Deployments Available (the minimal
profile runs no controllers) and lets the tool converge. Every request is counted from the audit
log by the tool's user agent (``oam-operator-bench/…``, ``kubectl…``, ``oam-bench-sap…``,
``oam-bench-flux…``) between the phase boundaries; Events are counted apart from object writes.
Usage: ``python bench/bench_peers.py [--repeats 1] [--json FILE]``; prints Markdown, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

import bench_reconciler as br  # noqa: E402

from tools.devcluster import find_binaries, start  # noqa: E402

PEER_DIR = BENCH / "peer"
PEERS = {"sap": "oam-bench-sap", "flux": "oam-bench-flux"}
TOOLS = ("ours-defaults", "ours-nolimit", "kubectl", "sap", "flux")
LABELS = {
    "ours-defaults": "ours, operator defaults",
    "ours-nolimit": "ours, no client-side limit",
    "kubectl": "kubectl apply --server-side",
    "sap": "SAP component-operator-runtime v0.3.99",
    "flux": "Flux fluxcd/pkg/ssa v0.78.0",
}
AGENTS = {"ours-defaults": "oam-operator-bench/defaults", "ours-nolimit": "oam-operator-bench/nolimit",
          "kubectl": "kubectl", **PEERS}
READS = frozenset({"get", "list", "watch"})


def build_peers() -> dict[str, str]:
    """Build both drivers (cached by Go after the first time); name → binary path."""
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "GONOSUMDB": "github.com/sap",
           "GOWORK": "off"}
    built = {}
    for name in PEERS:
        out = PEER_DIR / "bin" / name
        subprocess.run(["go", "build", "-o", str(out), "."], cwd=PEER_DIR / name, env=env, check=True,
                       capture_output=True, timeout=1800)
        built[name] = str(out)
    return built


def split(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Requests by verb, object requests apart from Events."""
    objects = [e for e in events if (e.get("objectRef") or {}).get("resource") != "events"]
    by_verb = br.by_verb(objects)
    reads = sum(n for v, n in by_verb.items() if v in READS)
    return {"by_verb": by_verb, "reads": reads, "writes": sum(by_verb.values()) - reads,
            "events": len(events) - len(objects)}


class Peer:
    """One run of a Go driver, phase by phase (bench/peer/protocol)."""

    def __init__(self, binary: str, kubeconfig: str, namespace: str, objects_file: Path) -> None:
        self.proc = subprocess.Popen([binary, "-kubeconfig", kubeconfig, "-namespace", namespace,
                                      "-objects", str(objects_file)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def phase(self, name: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            error = self.proc.stderr.read() if self.proc.stderr else ""
            raise RuntimeError(f"peer exited before phase {name}: {error}")
        data: dict[str, Any] = json.loads(line)
        if data.get("phase") != name:
            raise RuntimeError(f"expected phase {name}, got {data}")
        return data

    def go_on(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()

    def finish(self) -> None:
        self.go_on()
        self.proc.wait(timeout=120)
        if self.proc.returncode != 0:
            raise RuntimeError(f"peer failed: {self.proc.stderr.read() if self.proc.stderr else ''}")


def run_ours(tool: str, api: Any, ns: str, objects: list[dict[str, Any]], audit: Path) -> dict[str, Any]:
    from oam_operator.reconciler.client import ClusterClient
    from oam_operator.reconciler.flowcontrol import FlowControl
    from oam_operator.reconciler.inventory import InventoryItem
    from oam_operator.reconciler.objectpolicies import UpdatePolicy
    from oam_operator.reconciler.options import ReconcilerOptions
    from oam_operator.reconciler.ratelimit import RateLimiter
    from oam_operator.reconciler.reconciler import Reconciler

    limiter = RateLimiter(50.0, 100) if tool == "ours-defaults" else RateLimiter(0.0, 1)
    flow = FlowControl(limiter, adaptive=True) if tool == "ours-defaults" else None
    client = ClusterClient(api, user_agent=AGENTS[tool], rate_limiter=limiter, flow_control=flow)
    reconciler = Reconciler(br.NAME, client, ReconcilerOptions(update_policy=UpdatePolicy.SSA_MERGE,
                                                              enable_events=False))
    owner = f"{uuid.uuid4()}/{ns}/bench"
    inventory: list[InventoryItem] = []
    offset = br.audit_offset(audit)
    started = time.perf_counter()
    while True:
        reconciler.apply(inventory, objects, ns, owner, "bench", checkpoint=lambda items: None)
        if all(i.phase.value in ("Creating", "Ready") for i in inventory):
            break
    first_s = time.perf_counter() - started
    first = split(br.audit_events(audit, offset, AGENTS[tool]))
    br.make_ready(api, ns, len(objects))
    while not reconciler.apply(inventory, objects, ns, owner, "bench"):
        time.sleep(0.2)
    offset = br.audit_offset(audit)
    started = time.perf_counter()
    done = reconciler.apply(inventory, objects, ns, owner, "bench")
    noop_s = time.perf_counter() - started
    noop = split(br.audit_events(audit, offset, AGENTS[tool]))
    client.close()
    return {"first_s": first_s, "first": first, "noop_s": noop_s, "noop": noop, "noop_done": done,
            "limit_after": limiter.qps}


def run_kubectl(kubectl: Path, kubeconfig: str, api: Any, ns: str, objects: list[dict[str, Any]],
                audit: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        manifest = Path(tmp) / "objects.json"
        manifest.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
        cmd = [str(kubectl), "--kubeconfig", kubeconfig, "--cache-dir", str(Path(tmp) / "cache"), "apply",
               "--server-side", "--field-manager=bench-kubectl", "-n", ns, "-f", str(manifest)]
        offset = br.audit_offset(audit)
        started = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        first_s = time.perf_counter() - started
        first = split(br.audit_events(audit, offset, "kubectl"))
        br.make_ready(api, ns, len(objects))
        offset = br.audit_offset(audit)
        started = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        noop_s = time.perf_counter() - started
        noop = split(br.audit_events(audit, offset, "kubectl"))
    return {"first_s": first_s, "first": first, "noop_s": noop_s, "noop": noop, "noop_done": True}


def run_peer(tool: str, binary: str, kubeconfig: str, api: Any, ns: str, objects: list[dict[str, Any]],
             audit: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        objects_file = Path(tmp) / "objects.json"
        objects_file.write_text(json.dumps(objects))
        peer = Peer(binary, kubeconfig, ns, objects_file)
        peer.phase("loaded")
        offset = br.audit_offset(audit)
        peer.go_on()
        first_phase = peer.phase("first")
        first = split(br.audit_events(audit, offset, AGENTS[tool]))
        br.make_ready(api, ns, len(objects))
        peer.go_on()
        converged = peer.phase("converged")
        offset = br.audit_offset(audit)
        peer.go_on()
        noop_phase = peer.phase("noop")
        noop = split(br.audit_events(audit, offset, AGENTS[tool]))
        peer.finish()
    return {"first_s": first_phase["seconds"], "first": first, "first_calls": first_phase.get("calls"),
            "converge_calls": converged.get("calls"), "noop_s": noop_phase["seconds"], "noop": noop,
            "noop_done": noop_phase.get("done")}


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=int(os.environ.get("BENCH_REPEATS", "1")))
    parser.add_argument("--sizes", default=",".join(map(str, br.SIZES)))
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    binaries = build_peers()
    kubectl = find_binaries().path("kubectl")
    assert kubectl is not None, "kubectl is not built"
    results: dict[str, Any] = {"sizes": sizes, "repeats": args.repeats, "load_start": load(), "runs": []}
    plane = start("minimal", name=f"peers-{secrets.token_hex(3)}", audit=True)
    try:
        kubeconfig = plane.handle.kubeconfig
        audit = plane.run_dir / "logs" / "audit.log"
        api = br.api_client(kubeconfig)
        from kubernetes import client

        core = client.CoreV1Api(api)
        for repeat in range(args.repeats):
            for count in sizes:
                objects = br.objects_for(count)
                order = list(TOOLS[repeat % len(TOOLS):] + TOOLS[:repeat % len(TOOLS)])
                for tool in order:
                    ns = f"{tool}-{count}-{secrets.token_hex(3)}"
                    core.create_namespace({"metadata": {"name": ns}})
                    before = load()
                    if tool.startswith("ours"):
                        run = run_ours(tool, api, ns, objects, audit)
                    elif tool == "kubectl":
                        run = run_kubectl(kubectl, kubeconfig, api, ns, objects, audit)
                    else:
                        run = run_peer(tool, binaries[tool], kubeconfig, api, ns, objects, audit)
                    run.update(tool=tool, objects=count, repeat=repeat + 1, load_before=before, load_after=load())
                    results["runs"].append(run)
                    print(f"  {count} objects, {tool}: first {run['first_s']:.2f} s", file=sys.stderr, flush=True)
        api.close()
    finally:
        plane.stop()
    results["load_end"] = load()
    print(markdown(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


def markdown(results: dict[str, Any]) -> str:
    """The side-by-side tables (also used by report.py)."""
    runs = results["runs"]

    def pick(tool: str, count: int) -> list[dict[str, Any]]:
        return [r for r in runs if r["tool"] == tool and r["objects"] == count]

    def med(values: list[float]) -> float:
        return statistics.median(values)

    lines = [f"First apply (median of {results['repeats']} run(s) per tool and size; requests of the last run, "
             "from the audit log by user agent; Events apart):", "",
             "| objects | tool | first apply s | × kubectl | requests | reads / writes | by verb | Events "
             "| no-op reads / writes | no-op by verb | no-op ms |",
             "|---:|---|---:|---:|---:|---|---|---:|---|---|---:|"]
    for count in results["sizes"]:
        kubectl_runs = pick("kubectl", count)
        k_s = med([r["first_s"] for r in kubectl_runs]) if kubectl_runs else None
        for tool in TOOLS:
            chosen = pick(tool, count)
            if not chosen:
                continue
            s = med([r["first_s"] for r in chosen])
            last = chosen[-1]
            first, noop = last["first"], last["noop"]
            ratio = f"{s / k_s:.2f}" if k_s else "-"
            lines.append(
                f"| {count} | {LABELS[tool]} | {s:.2f} | {ratio} | {first['reads'] + first['writes']} | "
                f"{first['reads']} / {first['writes']} | {br.fmt_verbs(first['by_verb'])} | {first['events']} | "
                f"{noop['reads']} / {noop['writes']} | {br.fmt_verbs(noop['by_verb'])} | "
                f"{med([r['noop_s'] for r in chosen]) * 1000:.0f} |")
    lines += ["", f"Load average (1/5/15 min): {results['load_start']} at the start, {results['load_end']} at the end."]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
