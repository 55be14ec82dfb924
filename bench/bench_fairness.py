"""Fairness benchmark (issue 27; docs/operator.md#fair-queues): how long a healthy Application in
one namespace takes to Ready alone, and while another namespace floods the operator.

One ``oam-operator run`` host process (default flags: adaptive concurrency up to 10, leader
election) watches two namespaces on a fresh minimal control plane (ConfigMaps need no
controllers):

- **alone**: ``--samples`` times, a healthy Application of ``--objects`` ConfigMaps is created in
  namespace ``calm`` and timed from its create to ``state: Ready`` (polled every 50 ms), one after
  the other, nothing else to do.
- **flood**: ``--flood`` Applications of ``--objects`` ConfigMaps are created in namespace ``flood``
  as fast as one client can (the issue: 200 in 6.5 s), one of them failing permanently (an object
  of a kind the API server does not serve) and one whose spec changes every second (a thread
  replaces it); once the flood is created (at least 1 s after its first create), the same
  healthy Application is timed again, ``--samples`` times in a row, while the flood's backlog is
  still being worked off.

Printed: the healthy Application's times alone and under the flood (median and each; target ≤ 2×
alone), its first pass's place in the queue from the operator's log (passes waiting ahead of it
when it asked for a slot, passes admitted while it waited), how long the flood took to be Ready,
the API requests the operator made (its own count, ``oam_operator_api_requests_total``) for the
flood, and the failing and the flapping Application's passes: how many, and the gaps between
them (the failing one backs off 5 s, 10 s, 20 s, …; the flapping one passes once per new
generation). Usage: ``python bench/bench_fairness.py [--flood 200] [--objects 5] [--samples 3]
[--json FILE]``. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.devcluster import devcluster as dc  # noqa: E402
from tools.operatorprocess import OperatorProcess  # noqa: E402

DOMAIN = "oam-operator.dev"
FLOOD, CALM = "flood", "calm"
APPS = f"/apis/{DOMAIN}/v1alpha1/namespaces/{{namespace}}/applications"


def wait(predicate: Any, timeout: float, what: str, step: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise SystemExit(f"timed out after {timeout:.0f}s waiting for {what}")


def stamp(entry: dict[str, Any]) -> float:
    return datetime.fromisoformat(str(entry["ts"]).replace("Z", "+00:00")).timestamp()


def kubectl_apply(plane: dc.ControlPlane, path_or_manifest: Path | dict[str, Any]) -> None:
    binary = dc.find_binaries().kubectl
    if binary is None:
        raise SystemExit("kubectl is not built: tools/devcluster/build.sh")
    args = [str(binary), "--kubeconfig", plane.handle.kubeconfig, "apply", "--server-side", "-f"]
    if isinstance(path_or_manifest, Path):
        subprocess.run([*args, str(path_or_manifest)], check=True, capture_output=True)
    else:
        subprocess.run([*args, "-"], input=json.dumps(path_or_manifest).encode(), check=True, capture_output=True)


def application(namespace: str, name: str, objects: int, *, value: str = "0",
                failing: bool = False) -> dict[str, Any]:
    components: list[dict[str, Any]] = [{"name": f"cm-{j}", "type": "passthrough", "properties": {"object": {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-cm-{j}"},
        "data": {"k": str(j), "v": value}}}} for j in range(objects)]
    if failing:
        components.append({"name": "unserved", "type": "passthrough", "properties": {"object": {
            "apiVersion": "unserved.example.com/v1", "kind": "Nothing", "metadata": {"name": f"{name}-nothing"}}}})
    return {"apiVersion": f"{DOMAIN}/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"components": components}}


def start_operator(plane: dc.ControlPlane, work: Path) -> OperatorProcess:
    """The operator of both namespaces (its Lease in ``calm``), once it leads."""
    operator = OperatorProcess.start(work / "operator.log", kubeconfig=plane.handle.kubeconfig,
                                     namespaces=[FLOOD, CALM], operator_namespace=CALM, name="bench-fairness",
                                     extra=["--use-operator-identity", "--default-profile", ""])
    operator.wait_for(operator.leads, 60, "the operator to lead")
    return operator


def state_of(plane: dc.ControlPlane, namespace: str, name: str) -> str:
    status, body = plane.api().request(APPS.format(namespace=namespace) + f"/{name}")
    return str(((body or {}).get("status") or {}).get("state") or "") if status == 200 else ""


def time_to_ready(plane: dc.ControlPlane, operator: OperatorProcess, name: str, objects: int) -> dict[str, Any]:
    """Create the healthy Application ``name`` in ``calm``: seconds until Ready, its first pass's queue place."""
    started = time.monotonic()
    status, body = plane.api().request(APPS.format(namespace=CALM), "POST", application(CALM, name, objects))
    if status != 201:
        raise SystemExit(f"creating {name}: {status} {body}")
    wait(lambda: state_of(plane, CALM, name) == "Ready", 300, f"{name} Ready", step=0.05)
    seconds = time.monotonic() - started
    first = wait(lambda: operator.passes(CALM, name), 10, f"{name}'s pass in the log")[0]
    return {"name": name, "seconds": round(seconds, 2), "first_pass_waiting_ahead": first.get("waiting_ahead"),
            "first_pass_overtaken_by": first.get("overtaken_by"), "first_pass_queued_s": first.get("queued_seconds")}


def flap(plane: dc.ControlPlane, name: str, objects: int, stop: threading.Event, count: list[int]) -> None:
    """Replace the flapping Application's spec every second (a new generation each time)."""
    path = APPS.format(namespace=FLOOD) + f"/{name}"
    while not stop.wait(1.0):
        status, live = plane.api().request(path)
        if status != 200:
            continue
        live["spec"] = application(FLOOD, name, objects, value=str(count[0] % 2 + 1))["spec"]
        if plane.api().request(path, "PUT", live)[0] == 200:
            count[0] += 1


def gaps(entries: list[dict[str, Any]]) -> list[float]:
    stamps = sorted(stamp(e) for e in entries)
    return [round(b - a, 1) for a, b in itertools.pairwise(stamps)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flood", type=int, default=200)
    parser.add_argument("--objects", type=int, default=5)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="oam-bench-fairness-"))
    plane = dc.start("minimal", run_dir=work / "plane")
    operator: OperatorProcess | None = None
    try:
        for path in sorted((ROOT / "crds").glob("*.yaml")):
            kubectl_apply(plane, path)
        for namespace in (FLOOD, CALM):
            kubectl_apply(plane, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        operator = start_operator(plane, work)
        alone = [time_to_ready(plane, operator, f"alone-{i}", args.objects) for i in range(args.samples)]
        for sample in alone:
            print(f"alone: {sample['name']} Ready after {sample['seconds']:.2f} s", flush=True)

        requests_before = operator.api_requests()
        began = time.monotonic()
        failing, flapping = "flood-failing", "flood-flapping"
        for index in range(args.flood):
            name = failing if index == 0 else flapping if index == 1 else f"flood-{index:03d}"
            status, body = plane.api().request(APPS.format(namespace=FLOOD), "POST",
                                               application(FLOOD, name, args.objects, failing=name == failing))
            if status != 201:
                raise SystemExit(f"creating {name}: {status} {body}")
        created_s = time.monotonic() - began
        print(f"flood: {args.flood} Applications created in {created_s:.1f} s", flush=True)
        stop, flips = threading.Event(), [0]
        flapper = threading.Thread(target=flap, args=(plane, flapping, args.objects, stop, flips), daemon=True)
        flapper.start()
        time.sleep(max(0.0, 1.0 - (time.monotonic() - began)))
        under = [time_to_ready(plane, operator, f"under-{i}", args.objects) for i in range(args.samples)]
        for sample in under:
            print(f"under the flood: {sample['name']} Ready after {sample['seconds']:.2f} s (its first pass: "
                  f"{sample['first_pass_waiting_ahead']} passes waiting ahead, overtaken by "
                  f"{sample['first_pass_overtaken_by']})", flush=True)

        def flood_ready() -> bool:
            status, body = plane.api().request(APPS.format(namespace=FLOOD))
            items = (body or {}).get("items", []) if status == 200 else []
            return len(items) == args.flood and all(
                (i.get("status") or {}).get("state") == "Ready" for i in items
                if i["metadata"]["name"] not in (failing, flapping))

        wait(flood_ready, 1800, "the flood's Applications Ready", step=0.5)
        flood_s = time.monotonic() - began
        flood_requests = operator.api_requests() - requests_before
        time.sleep(10)  # the failing one backs off further; the flapping one keeps changing
        stop.set()
        flapper.join()
        watched_s = time.monotonic() - began
        failing_passes = operator.passes(FLOOD, failing)
        flapping_passes = operator.passes(FLOOD, flapping)
        result = {
            "flood": args.flood, "objects": args.objects, "flood_created_s": round(created_s, 2),
            "alone": alone, "under": under,
            "alone_median_s": statistics.median(s["seconds"] for s in alone),
            "under_median_s": statistics.median(s["seconds"] for s in under),
            "under_max_s": max(s["seconds"] for s in under),
            "flood_ready_s": round(flood_s, 1), "flood_requests": flood_requests,
            "flood_requests_per_app": round(flood_requests / args.flood, 1),
            "flood_passes": len(operator.passes(FLOOD)),
            "watched_s": round(watched_s, 1),
            "failing": {"passes": len(failing_passes), "gaps_s": gaps(failing_passes),
                        "state": state_of(plane, FLOOD, failing),
                        "reason": next((e.get("reason") for e in reversed(failing_passes) if e.get("reason")), None)},
            "flapping": {"passes": len(flapping_passes), "spec_changes": flips[0],
                         "generations": len({e.get("generation") for e in flapping_passes}),
                         "gaps_s": gaps(flapping_passes)},
        }
    finally:
        if operator is not None:
            operator.stop(timeout=60)
        plane.stop()
    ratio = result["under_max_s"] / max(result["alone_median_s"], 1e-3)
    print()
    print("| figure | result |")
    print("|---|---|")
    print(f"| healthy Application alone, to Ready | median {result['alone_median_s']:.2f} s "
          f"({', '.join(str(s['seconds']) for s in alone)}) |")
    print(f"| the same under the flood | median {result['under_median_s']:.2f} s "
          f"({', '.join(str(s['seconds']) for s in under)}); worst {ratio:.1f}× alone (target ≤ 2×) |")
    print(f"| flood | {args.flood} × {args.objects} objects created in {created_s:.1f} s, Ready after "
          f"{result['flood_ready_s']} s; {result['flood_passes']} passes, {flood_requests:.0f} API requests "
          f"({result['flood_requests_per_app']} per Application) |")
    print(f"| failing Application | {result['failing']['passes']} passes in {result['watched_s']} s, gaps "
          f"{result['failing']['gaps_s']} s; {result['failing']['state']}/{result['failing']['reason']} |")
    print(f"| flapping Application | {result['flapping']['passes']} passes for {flips[0]} spec changes "
          f"({result['flapping']['generations']} generations seen) in {result['watched_s']} s |")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
