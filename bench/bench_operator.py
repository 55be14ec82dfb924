"""Operator benchmark (issue 7; DESIGN.md §6): many Applications at once on the full control plane.

Creates N Applications of M objects each (M-1 ConfigMaps and one Deployment) at once, with the
operator running as a real process, and prints:
- the wall time until every Application is Ready;
- the operator's peak RSS (VmHWM of the process);
- API requests per Application (the operator's own ``oam_operator_api_requests_total``, kopf's
  watch traffic not counted), and writes per Application;
- the steady state: requests per minute over one minute with nothing changing, with
  ``--default-interval 30s`` so the periodic drift check runs twice in that minute.

Usage: ``python bench/bench_operator.py [--apps 200] [--objects 10]``. Nothing is asserted;
the figures are printed as a table (Markdown).
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.devcluster import devcluster as dc  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def requests(metrics_port: int) -> dict[str, float]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as response:
        text = response.read().decode()
    totals = {"all": 0.0, "writes": 0.0}
    for line in text.splitlines():
        if line.startswith("oam_operator_api_requests_total{"):
            value = float(line.rsplit(" ", 1)[1])
            totals["all"] += value
            if any(f'method="{m}"' in line for m in ("POST", "PUT", "PATCH", "DELETE")):
                totals["writes"] += value
    return totals


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def application(index: int, objects: int) -> dict[str, object]:
    components: list[dict[str, object]] = []
    for j in range(objects - 1):
        components.append({"name": f"cm-{j}", "type": "passthrough", "properties": {"object": {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{j}"}, "data": {"k": str(j)}}}})
    labels = {"app": "web"}
    pod = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "registry.invalid/w:1"}]}}
    components.append({"name": "web", "type": "passthrough", "properties": {"object": {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": pod}}}})
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
            "metadata": {"name": f"app-{index:03d}", "namespace": f"bench-{index:03d}"},
            "spec": {"components": components}}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", type=int, default=200)
    parser.add_argument("--objects", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="oam-bench-operator-"))
    plane = dc.start("full", run_dir=work / "cluster")
    operator = None
    try:
        kubectl = str(dc.find_binaries().kubectl)
        kc = ["--kubeconfig", plane.handle.kubeconfig]
        subprocess.run([kubectl, *kc, "apply", "--server-side", "-f", str(ROOT / "crds")], check=True,
                       capture_output=True)
        subprocess.run([kubectl, *kc, "wait", "--for=condition=Established", "crd/applications.oam-operator.dev"],
                       check=True, capture_output=True)
        namespaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"bench-{i:03d}"}}
                       for i in range(args.apps)]
        (work / "namespaces.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": namespaces}))
        subprocess.run([kubectl, *kc, "apply", "-f", str(work / "namespaces.json")], check=True, capture_output=True)
        metrics_port = free_port()
        log = (work / "operator.log").open("wb")
        operator = subprocess.Popen(
            [str(Path(sys.executable).parent / "oam-operator"), "run", "--kubeconfig", plane.handle.kubeconfig,
             "--metrics-port", str(metrics_port), "--health-port", str(free_port()), "--default-interval", "30s",
             "--log-level", "warning"], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                requests(metrics_port)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        time.sleep(2)
        before = requests(metrics_port)
        apps = [application(i, args.objects) for i in range(args.apps)]
        (work / "apps.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": apps}))
        started = time.monotonic()
        subprocess.run([kubectl, *kc, "apply", "-f", str(work / "apps.json")], check=True, capture_output=True)
        api = plane.api()
        ready_count = 0
        while time.monotonic() - started < args.timeout:
            code, listed = api.get("/apis/oam-operator.dev/v1alpha1/applications")
            items = listed.get("items", []) if code == 200 else []
            ready_count = sum(1 for a in items if (a.get("status") or {}).get("state") == "Ready"
                              and a["status"].get("observedGeneration") == a["metadata"]["generation"])
            if ready_count == args.apps:
                break
            time.sleep(1)
        elapsed = time.monotonic() - started
        after_ready = requests(metrics_port)
        time.sleep(5)
        steady_start = requests(metrics_port)
        time.sleep(60)
        steady_end = requests(metrics_port)
        rss = peak_rss_mib(operator.pid)
        per_app = (after_ready["all"] - before["all"]) / args.apps
        writes_per_app = (after_ready["writes"] - before["writes"]) / args.apps
        print(f"## Operator: {args.apps} Applications × {args.objects} objects, created at once (full profile)\n")
        print("| figure | value |")
        print("|---|---|")
        print(f"| Applications Ready | {ready_count}/{args.apps} |")
        print(f"| time until all Ready | {elapsed:.1f} s |")
        print(f"| operator peak RSS (VmHWM) | {rss:.0f} MiB (target ≤ 300 MiB) |")
        print(f"| API requests per Application (to Ready) | {per_app:.1f} |")
        print(f"| of which writes per Application | {writes_per_app:.1f} |")
        print(f"| steady state: requests per minute (interval 30s) | {steady_end['all'] - steady_start['all']:.0f} |")
        print(f"| steady state: writes per minute | {steady_end['writes'] - steady_start['writes']:.0f} |")
        return 0 if ready_count == args.apps else 1
    finally:
        if operator is not None:
            operator.terminate()
            try:
                operator.wait(timeout=30)
            except subprocess.TimeoutExpired:
                operator.kill()
        plane.stop()


if __name__ == "__main__":
    sys.exit(main())
