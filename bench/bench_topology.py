"""Benchmark: one Application to many clusters through a topology policy (docs/multicluster.md#topology).

Starts minimal control planes — a hub and spokes (each its own etcd and kube-apiserver) — and the
operator on the hub. For each count of ``--spokes-list`` (default 1, 4, 8) it applies one
Application of ``--objects`` ConfigMaps whose topology selects every spoke, and prints the time
until it is Ready on all of them, the operator's API requests per cluster (its own counter: the
hub's and the spokes'), and the size of the fleet Application's status on the hub. The first row
is the same objects applied to one spoke by an Application with ``profile:`` (no topology): what
a cluster costs without a fleet around it. Then ``--fleet-apps`` Applications × ``--fleet-spokes``
spokes (default 300 × 3): the time until all are Ready and the requests per cluster Application.

Nothing is asserted; the figures are printed as a Markdown table.

Usage: ``python bench/bench_topology.py [--spokes-list 1,4,8] [--objects 10] [--fleet-apps 300]
[--fleet-spokes 3] [--json FILE]``.
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

from bench_multicluster import kubectl_apply  # noqa: E402
from bench_operator import is_ready, peak_rss_mib, requests  # noqa: E402
from watch_until import watch_until  # noqa: E402

from tools.devcluster import devcluster as dc  # noqa: E402
from tools.operatorprocess import OperatorProcess  # noqa: E402

OPERATOR_NAMESPACE = "oam-system"
GROUP_VERSION = "oam-operator.dev/v1alpha1"


def fleet_application(name: str, namespace: str, objects: int, profile: str | None = None) -> dict[str, Any]:
    """``objects`` ConfigMaps, to every ClusterProfile (a topology selecting all), or to ``profile``."""
    components = [{"name": f"cm-{j}", "type": "passthrough", "properties": {"object": {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{j}"}, "data": {"k": str(j)}}}}
        for j in range(objects)]
    spec: dict[str, Any] = {"components": components}
    if profile is not None:
        spec["profile"] = profile
    else:
        spec["policies"] = [{"name": "everywhere", "type": "topology", "properties": {"clusterSelector": {}}}]
    return {"apiVersion": GROUP_VERSION, "kind": "Application", "metadata": {"name": name, "namespace": namespace},
            "spec": spec}


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


class Fleet:
    """A hub with the CRDs, ``spokes`` spokes each with a ClusterProfile, and the operator."""

    def __init__(self, work: Path, kubectl: str, spokes: int, namespaces: list[str], tag: str) -> None:
        self.kubectl, self.work, self.tag = kubectl, work, tag
        self.hub = dc.start("minimal", name=f"bench-topo-hub-{tag}", run_dir=work / f"hub-{tag}")
        self.spokes = [dc.start("minimal", name=f"bench-topo-{tag}-{k}", run_dir=work / f"spoke-{tag}-{k}")
                       for k in range(spokes)]
        self.operator: OperatorProcess | None = None
        kc = self.hub.handle.kubeconfig
        subprocess.run([kubectl, "--kubeconfig", kc, "apply", "--server-side", "-f", str(ROOT / "crds")],
                       check=True, capture_output=True)
        subprocess.run([kubectl, "--kubeconfig", kc, "wait", "--for=condition=Established",
                        "crd/applications.oam-operator.dev"], check=True, capture_output=True)
        setup = [namespace(n) for n in (*namespaces, OPERATOR_NAMESPACE)]
        for k, spoke in enumerate(self.spokes):
            kubectl_apply(kubectl, spoke.handle.kubeconfig, work / f"spoke-{tag}-{k}.json",
                          [namespace(n) for n in namespaces])
            setup.append(dc.kubeconfig_secret(spoke.handle.kubeconfig, f"spoke-{k}", OPERATOR_NAMESPACE))
            setup.append({"apiVersion": GROUP_VERSION, "kind": "ClusterProfile", "metadata": {"name": f"spoke-{k}"},
                          "spec": {"kubeConfig": {"secretRef": {"name": f"spoke-{k}"}}}})
        kubectl_apply(kubectl, kc, work / f"hub-{tag}.json", setup)
        self.operator = OperatorProcess.start(
            work / f"operator-{tag}.log", kubeconfig=kc, operator_namespace=OPERATOR_NAMESPACE, log_format=None,
            extra=["--default-interval", "30s", "--log-level", "warning", "--use-operator-identity",
                   "--no-leader-election"])
        self.operator.wait_serving(60, health=False)
        time.sleep(2)

    def until_ready(self, apps: list[dict[str, Any]], timeout: float) -> dict[str, Any]:
        """Apply ``apps``; seconds until all are Ready, the operator's requests meanwhile, the largest status."""
        assert self.operator is not None
        before = requests(self.operator)
        started = time.monotonic()
        kubectl_apply(self.kubectl, self.hub.handle.kubeconfig, self.work / f"apps-{self.tag}.json", apps)
        names = {(a["metadata"]["namespace"], a["metadata"]["name"]) for a in apps}
        items = self._watch(names, started + timeout)
        elapsed = time.monotonic() - started
        after = requests(self.operator)
        mine = [app for key, app in items.items() if key in names]
        return {"ready": sum(1 for app in mine if is_ready(app)), "ready_s": round(elapsed, 1),
                "requests": round(after["all"] - before["all"]), "writes": round(after["writes"] - before["writes"]),
                "status_bytes": max(len(json.dumps(app.get("status") or {}, separators=(",", ":"))) for app in mine),
                "peak_rss_mib": round(peak_rss_mib(self.operator))}

    def _watch(self, names: set[tuple[str, str]], deadline: float) -> dict[tuple[str, str], dict[str, Any]]:
        """Watch the hub's Applications until every one of ``names`` is Ready (or the deadline)."""
        def done(app: dict[str, Any]) -> bool:
            meta = app.get("metadata") or {}
            return (meta.get("namespace"), meta.get("name")) in names and is_ready(app)

        return watch_until(self.hub.api(), "/apis/oam-operator.dev/v1alpha1/applications", len(names), done, deadline)

    def stop(self) -> None:
        if self.operator is not None:
            self.operator.stop()
        for plane in (*self.spokes, self.hub):
            plane.stop()


def one_application(work: Path, kubectl: str, spokes: int, objects: int, timeout: float, *,
                    direct: bool = False) -> dict[str, Any]:
    fleet = Fleet(work, kubectl, spokes, ["fleet"], f"{'direct' if direct else 'topology'}-{spokes}")
    try:
        app = fleet_application("shop", "fleet", objects, profile="spoke-0" if direct else None)
        row = fleet.until_ready([app], timeout)
        return {"run": "profile (one cluster)" if direct else "topology", "clusters": spokes, "apps": 1,
                **row, "requests_per_cluster": round(row["requests"] / spokes, 1)}
    finally:
        fleet.stop()


def many_applications(work: Path, kubectl: str, apps: int, spokes: int, objects: int, timeout: float) -> dict[str, Any]:
    namespaces = [f"bench-{i:03d}" for i in range(apps)]
    fleet = Fleet(work, kubectl, spokes, namespaces, f"many-{apps}x{spokes}")
    try:
        row = fleet.until_ready([fleet_application(f"app-{i:03d}", ns, objects) for i, ns in enumerate(namespaces)],
                                timeout)
        return {"run": "topology", "clusters": spokes, "apps": apps, **row,
                "requests_per_cluster": round(row["requests"] / (apps * spokes), 1)}
    finally:
        fleet.stop()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--spokes-list", default="1,4,8")
    parser.add_argument("--objects", type=int, default=10)
    parser.add_argument("--fleet-apps", type=int, default=300)
    parser.add_argument("--fleet-spokes", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    kubectl = str(dc.find_binaries().kubectl)
    work = Path(tempfile.mkdtemp(prefix="oam-bench-topology-"))
    rows = [one_application(work, kubectl, 1, args.objects, args.timeout, direct=True)]
    rows += [one_application(work, kubectl, int(n), args.objects, args.timeout)
             for n in args.spokes_list.split(",") if n.strip()]
    if args.fleet_apps:
        rows.append(many_applications(work, kubectl, args.fleet_apps, args.fleet_spokes, args.objects, args.timeout))
    print(f"## One Application to many clusters: {args.objects} ConfigMaps per cluster\n")
    print("| run | Applications | clusters | Ready | time to Ready | requests | requests / cluster | writes "
          "| largest hub status | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['run']} | {row['apps']} | {row['clusters']} | {row['ready']}/{row['apps']} | {row['ready_s']} s "
              f"| {row['requests']} | {row['requests_per_cluster']} | {row['writes']} | {row['status_bytes']:,} bytes "
              f"| {row['peak_rss_mib']} MiB |")
    if args.json:
        Path(args.json).write_text(json.dumps({"benchmark": "topology", "rows": rows}, indent=2) + "\n")
    return 0 if all(row["ready"] == row["apps"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
