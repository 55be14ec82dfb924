"""Failover benchmark (issue 27; docs/operator.md#leader-election): how long a shard goes without a
reconciling instance when its leader dies or is rolled, with the default lease settings (15s, 10s,
2s) unless ``--operator-arg`` says otherwise.

Two ``oam-operator run`` host processes (one Lease) on a fresh minimal control plane reconcile
``--apps`` Applications of ``--objects`` ConfigMaps. Figures, from the instances' JSON logs (the
``pass finished`` line minus its ``seconds`` is when a pass started):

- **kill -9**: from SIGKILL of the leader to the first pass the standby starts, and to its
  ``became the leader``; ``--runs`` times, the killed instance started again as the new standby
  each time (a restarted container).
- **rollout**: a Deployment's rolling update with ``maxSurge: 1``, ``maxUnavailable: 0`` and two
  replicas, played with processes: start a new instance, once it serves stop (SIGTERM) the old
  standby, start a second new one, once it serves stop the old leader. From the rollout's start
  to the new leader's first pass, and from the leader's SIGTERM to that pass (the hand-over).

Not part of ``make bench``'s default list (``bench/run_all.py``) and not run in CI: it takes about
``runs x 20 s``. Usage: ``python bench/bench_failover.py [--runs 5] [--apps 5] [--objects 10]
[--json FILE] [--operator-arg=--leader-election-lease-duration=15s ...]``. Nothing is asserted;
the target is kill -9 to first pass ≤ 15 s with the default lease settings.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.devcluster import devcluster as dc  # noqa: E402
from tools.operatorprocess import OperatorProcess  # noqa: E402

NAMESPACE = "failover"
DOMAIN = "oam-operator.dev"


def became_leader(instance: OperatorProcess) -> float | None:
    """When its log says it became the leader."""
    for entry in instance.logs():
        if entry.get("msg") == "became the leader":
            return stamp(entry)
    return None


def first_pass_start(instance: OperatorProcess) -> float | None:
    """When its first finished pass began."""
    starts = [stamp(e) - float(e.get("seconds") or 0) for e in instance.passes() if e.get("msg") == "pass finished"]
    return min(starts) if starts else None


def stamp(entry: dict[str, Any]) -> float:
    return datetime.fromisoformat(str(entry["ts"]).replace("Z", "+00:00")).timestamp()


def wait(predicate: Any, timeout: float, what: str, step: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise SystemExit(f"timed out after {timeout:.0f}s waiting for {what}")


class Bench:
    def __init__(self, plane: dc.ControlPlane, work: Path, extra: list[str]) -> None:
        self.plane = plane
        self.work = work
        self.extra = extra
        self.count = 0

    def start(self) -> OperatorProcess:
        """A new instance, once its metrics carry the leader gauge (the Pod is Ready)."""
        self.count += 1
        name = f"inst-{self.count}"
        instance = OperatorProcess.start(self.work / f"{name}.log", kubeconfig=self.plane.handle.kubeconfig,
                                         namespaces=[NAMESPACE], operator_namespace=NAMESPACE, name=name,
                                         extra=["--use-operator-identity", "--default-profile", "", *self.extra])
        return instance.wait_serving(60, health=False)

    def holder(self) -> str:
        status, body = self.plane.api().request(
            f"/apis/coordination.k8s.io/v1/namespaces/{NAMESPACE}/leases/oam-operator")
        return str((body.get("spec") or {}).get("holderIdentity") or "") if status == 200 else ""

    def leader(self, *instances: OperatorProcess) -> OperatorProcess:
        current = wait(self.holder, 30, "a holder of the Lease")
        return next(i for i in instances if current.startswith(f"{i.name}_"))


def kubectl() -> str:
    binary = dc.find_binaries().kubectl
    if binary is None:
        raise SystemExit("kubectl is not built: tools/devcluster/build.sh")
    return str(binary)


def kubectl_apply(plane: dc.ControlPlane, manifest: dict[str, Any]) -> None:
    subprocess.run([kubectl(), "--kubeconfig", plane.handle.kubeconfig, "apply", "--server-side", "-f", "-"],
                   input=json.dumps(manifest).encode(), check=True, capture_output=True)


def application(index: int, objects: int) -> dict[str, Any]:
    components = [{"name": f"cm-{j}", "type": "passthrough", "properties": {"object": {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"app-{index}-cm-{j}"}, "data": {"k": str(j)}}}}
        for j in range(objects)]
    return {"apiVersion": f"{DOMAIN}/v1alpha1", "kind": "Application",
            "metadata": {"name": f"app-{index}", "namespace": NAMESPACE}, "spec": {"components": components}}


def all_ready(plane: dc.ControlPlane, apps: int) -> bool:
    status, body = plane.api().request(f"/apis/{DOMAIN}/v1alpha1/namespaces/{NAMESPACE}/applications")
    items = body.get("items", []) if status == 200 else []
    return len(items) == apps and all((i.get("status") or {}).get("state") == "Ready" for i in items)


def kill_runs(bench: Bench, runs: int) -> list[dict[str, float]]:
    a, b = bench.start(), None
    bench.leader(a)
    b = bench.start()
    figures = []
    for _ in range(runs):
        leader = bench.leader(a, b)
        standby = b if leader is a else a
        time.sleep(1 + (len(figures) % 4) * 0.5)  # spread the kill over the renew cycle
        killed = time.time()
        leader.kill()
        wait(lambda standby=standby: first_pass_start(standby), 60, f"{standby.name}'s first pass")
        led, first = became_leader(standby), first_pass_start(standby)
        assert led is not None and first is not None
        figures.append({"to_leader": round(led - killed, 2), "to_first_pass": round(first - killed, 2)})
        print(f"kill -9: {standby.name} leads after {led - killed:.2f} s, first pass after {first - killed:.2f} s",
              flush=True)
        replacement = bench.start()  # the killed Pod's container restarts: the new standby
        a, b = standby, replacement
    for instance in (a, b):
        instance.stop(timeout=60)
    return figures


def rollout_runs(bench: Bench, runs: int) -> list[dict[str, float]]:
    old = [bench.start()]
    bench.leader(old[0])
    old.append(bench.start())
    figures = []
    for _ in range(runs):
        leader = bench.leader(*old)
        standby = next(i for i in old if i is not leader)
        began = time.time()
        first_new = bench.start()  # surge: a new Pod, Ready once it serves
        standby.stop(timeout=60)  # the old standby goes first (the worst case)
        second_new = bench.start()
        stopping = time.time()
        leader.stop(timeout=90)
        new = [first_new, second_new]
        wait(lambda new=new: any(first_pass_start(i) for i in new), 60, "the new leader's first pass")
        first = min(t for t in (first_pass_start(i) for i in new) if t is not None)
        figures.append({"rollout_to_first_pass": round(first - began, 2),
                        "sigterm_to_first_pass": round(first - stopping, 2)})
        print(f"rollout: new leader's first pass {first - began:.2f} s after the rollout began, "
              f"{first - stopping:.2f} s after the old leader's SIGTERM", flush=True)
        old = new
    for instance in old:
        instance.stop(timeout=60)
    return figures


def summary(values: list[float]) -> str:
    if not values:
        return "-"
    return f"median {statistics.median(values):.2f} s, min {min(values):.2f}, max {max(values):.2f} (n={len(values)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--apps", type=int, default=5)
    parser.add_argument("--objects", type=int, default=10)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--operator-arg", action="append", default=[],
                        help="one more flag for `oam-operator run` (repeatable)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="oam-bench-failover-"))
    plane = dc.start("minimal", run_dir=work / "plane")
    try:
        for path in sorted((ROOT / "crds").glob("*.yaml")):
            subprocess.run([kubectl(), "--kubeconfig", plane.handle.kubeconfig, "apply",
                            "--server-side", "-f", str(path)], check=True, capture_output=True)
        kubectl_apply(plane, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        bench = Bench(plane, work, args.operator_arg)
        for index in range(args.apps):
            kubectl_apply(plane, application(index, args.objects))
        kills = kill_runs(bench, args.runs)
        wait(lambda: all_ready(plane, args.apps), 120, "every Application Ready")
        rollouts = rollout_runs(bench, max(1, args.runs // 2))
    finally:
        plane.stop()
    result = {
        "settings": args.operator_arg or ["defaults: --leader-election-lease-duration 15s, renew deadline 10s, "
                                          "retry period 2s"],
        "apps": args.apps, "objects": args.objects, "kill": kills, "rollout": rollouts,
    }
    print()
    print("| figure | result |")
    print("|---|---|")
    print(f"| kill -9 of the leader → the standby leads | {summary([k['to_leader'] for k in kills])} |")
    print(f"| kill -9 of the leader → the standby's first pass (target ≤ 15 s) | "
          f"{summary([k['to_first_pass'] for k in kills])} |")
    print(f"| rollout start → the new leader's first pass | "
          f"{summary([r['rollout_to_first_pass'] for r in rollouts])} |")
    print(f"| old leader's SIGTERM → the new leader's first pass | "
          f"{summary([r['sigterm_to_first_pass'] for r in rollouts])} |")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
