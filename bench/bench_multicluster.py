"""Delivery to other clusters at scale (issue 24, docs/multicluster.md#connections): the same fleet
applied to the operator's own cluster, then spread over remote clusters.

Starts minimal control planes — a hub and ``--spokes`` spokes (each its own etcd and
kube-apiserver) — and runs the operator as a real process against the hub twice: first with
``--spokes × --apps`` Applications of ``--objects`` ConfigMaps each on the hub itself, then with
the same number spread over the spokes (``--apps`` per spoke, one ClusterProfile and kubeconfig
Secret per spoke). For each run it prints the time until every Application is Ready, the
operator's API requests per Application (its own counter: the hub's and the spokes' requests, one
request accounting), its peak RSS, and the requests of one steady-state minute (``--default-interval
30s``: two no-op passes per Application), per Application. ConfigMaps are Ready at once, so the
figures are the operator's and the clusters' work, not a workload's start-up.

Usage: ``python bench/bench_multicluster.py [--spokes 3] [--apps 100] [--objects 5] [--json FILE]``.
Nothing is asserted; the figures are printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_operator import is_ready, peak_rss_mib, requests  # noqa: E402
from watch_until import watch_until  # noqa: E402

from tools.devcluster import devcluster as dc  # noqa: E402
from tools.operatorprocess import OperatorProcess  # noqa: E402

OPERATOR_NAMESPACE = "oam-system"


def application(index: int, objects: int, profile: str | None) -> dict[str, Any]:
    components = [{"name": f"cm-{j}", "type": "passthrough", "properties": {"object": {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{j}"}, "data": {"k": str(j)}}}}
        for j in range(objects)]
    spec: dict[str, Any] = {"components": components}
    if profile is not None:
        spec["profile"] = profile
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
            "metadata": {"name": f"app-{index:03d}", "namespace": f"bench-{index:03d}"}, "spec": spec}


def kubectl_apply(kubectl: str, kubeconfig: str, path: Path, items: list[dict[str, Any]]) -> None:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    subprocess.run([kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side", "-f", str(path)], check=True,
                   capture_output=True)


def namespaces(count: int) -> list[dict[str, Any]]:
    return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"bench-{i:03d}"}} for i in range(count)]


def run(mode: str, args: argparse.Namespace, work: Path, kubectl: str) -> dict[str, Any]:
    """One fleet to Ready and one steady minute, on a fresh hub (and fresh spokes when remote)."""
    total = args.spokes * args.apps
    hub = dc.start("minimal", name=f"bench-hub-{mode}", run_dir=work / f"hub-{mode}")
    spokes = [dc.start("minimal", name=f"bench-spoke-{mode}-{k}", run_dir=work / f"spoke-{mode}-{k}")
              for k in range(args.spokes if mode == "remote" else 0)]
    operator: OperatorProcess | None = None
    try:
        kc = hub.handle.kubeconfig
        subprocess.run([kubectl, "--kubeconfig", kc, "apply", "--server-side", "-f", str(ROOT / "crds")], check=True,
                       capture_output=True)
        subprocess.run([kubectl, "--kubeconfig", kc, "wait", "--for=condition=Established",
                        "crd/applications.oam-operator.dev"], check=True, capture_output=True)
        hub_objects = [*namespaces(total), {"apiVersion": "v1", "kind": "Namespace",
                                            "metadata": {"name": OPERATOR_NAMESPACE}}]
        kubectl_apply(kubectl, kc, work / f"hub-{mode}.json", hub_objects)
        profiles: list[str | None] = [None]
        if spokes:
            profiles = []
            setup: list[dict[str, Any]] = []
            for k, spoke in enumerate(spokes):
                kubectl_apply(kubectl, spoke.handle.kubeconfig, work / f"spoke-{k}.json",
                              namespaces(total)[k * args.apps:(k + 1) * args.apps])
                secret = dc.kubeconfig_secret(spoke.handle.kubeconfig, f"spoke-{k}", OPERATOR_NAMESPACE)
                setup.append(secret)
                setup.append({"apiVersion": "oam-operator.dev/v1alpha1", "kind": "ClusterProfile",
                              "metadata": {"name": f"spoke-{k}"},
                              "spec": {"kubeConfig": {"secretRef": {"name": f"spoke-{k}"}}}})
                profiles.append(f"spoke-{k}")
            kubectl_apply(kubectl, kc, work / "profiles.json", setup)
        operator = OperatorProcess.start(
            work / f"operator-{mode}.log", kubeconfig=kc, operator_namespace=OPERATOR_NAMESPACE,
            log_format=None,  # the operator's default; its log is kept, not read
            extra=["--default-interval", "30s", "--log-level", "warning", "--use-operator-identity",
                   "--no-leader-election"])
        operator.wait_serving(60, health=False)
        time.sleep(2)
        before = requests(operator)
        apps = [application(i, args.objects, profiles[i // args.apps] if spokes else None) for i in range(total)]
        started = time.monotonic()
        kubectl_apply(kubectl, kc, work / f"apps-{mode}.json", apps)
        items = watch_until(hub.api(), "/apis/oam-operator.dev/v1alpha1/applications", total, is_ready,
                            started + args.timeout)
        elapsed = time.monotonic() - started
        ready = sum(1 for app in items.values() if is_ready(app))
        at_ready = requests(operator)
        time.sleep(args.settle)
        steady_start = requests(operator)
        time.sleep(60)
        steady_end = requests(operator)
        return {
            "mode": mode, "clusters": max(len(spokes), 1), "apps": total, "objects": args.objects, "ready": ready,
            "ready_s": round(elapsed, 1),
            "requests_per_app": round((at_ready["all"] - before["all"]) / total, 1),
            "writes_per_app": round((at_ready["writes"] - before["writes"]) / total, 1),
            "steady_requests_per_app_minute": round((steady_end["all"] - steady_start["all"]) / total, 2),
            "peak_rss_mib": round(peak_rss_mib(operator)),
        }
    finally:
        if operator is not None:
            operator.stop()
        for plane in (*spokes, hub):
            plane.stop()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--spokes", type=int, default=3)
    parser.add_argument("--apps", type=int, default=100, help="Applications per spoke (the hub run: spokes × apps)")
    parser.add_argument("--objects", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--settle", type=float, default=10, help="seconds after Ready before the steady minute")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    kubectl = str(dc.find_binaries().kubectl)
    work = Path(tempfile.mkdtemp(prefix="oam-bench-multicluster-"))
    rows = [run(mode, args, work, kubectl) for mode in ("hub", "remote")]
    print(f"## Delivery to other clusters: {args.spokes * args.apps} Applications × {args.objects} ConfigMaps\n")
    print("| run | clusters | Ready | time to Ready | requests / App | writes / App | steady requests / App / min "
          "| peak RSS |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['mode']} | {row['clusters']} | {row['ready']}/{row['apps']} | {row['ready_s']} s "
              f"| {row['requests_per_app']} | {row['writes_per_app']} | {row['steady_requests_per_app_minute']} "
              f"| {row['peak_rss_mib']} MiB |")
    if args.json:
        Path(args.json).write_text(json.dumps({"benchmark": "multicluster", "rows": rows}, indent=2) + "\n")
    return 0 if all(row["ready"] == row["apps"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
