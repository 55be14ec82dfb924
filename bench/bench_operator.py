"""Operator benchmark (issue 7; docs/architecture.md#performance-targets): many Applications at once on the full control
plane.

Creates N Applications of M objects each (M-1 ConfigMaps and one Deployment) at once, with the
operator running as a real process, and prints:
- the wall time until every Application is Ready;
- the operator's peak RSS (VmHWM of the process);
- API requests per Application (the operator's own ``oam_operator_api_requests_total``, kopf's
  watch traffic not counted), and writes per Application;
- the steady state: requests per minute and the operator's CPU (% of a core) over one minute
  with nothing changing, with ``--default-interval 30s`` (``--interval``) so the periodic drift
  check runs twice in that minute; the minute starts once no write was counted for 10 s after
  Ready (Events drain in the background), and the writes of that tail are reported;
- the size of the status the operator persisted: the compact JSON encoding of ``.status``, of
  ``.status.inventory`` and of the whole object, as read back from the API server once Ready
  (the largest Application's).

With ``--shards K`` (K ≥ 2) K operator processes run: one without ``--shard`` and ``--shard
s1`` … ``s<K-1>``; the Applications are spread round-robin (Application i is labelled
``oam-operator.dev/shard=s<i mod K>``, none for 0). Requests are the sum over the processes,
peak RSS is given per process.

Usage: ``python bench/bench_operator.py [--apps 200] [--objects 10] [--shards 1] [--json FILE]``. Nothing is
asserted; the figures are printed as a table (Markdown) and, with ``--json``, written to FILE.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from watch_until import watch_until  # noqa: E402

from tools.devcluster import devcluster as dc  # noqa: E402
from tools.operatorprocess import OperatorProcess  # noqa: E402

PODS_PER_NODE = int(dc.fake_node_manifest("n", 0)["status"]["capacity"]["pods"])


def requests(operator: OperatorProcess | list[OperatorProcess]) -> dict[str, float]:
    """The operator's own request counters (summed over several processes)."""
    if isinstance(operator, list):
        parts = [requests(one) for one in operator]
        return {key: sum(part[key] for part in parts) for key in ("all", "writes", "lease")}
    text = operator.metrics_text(timeout=60)
    totals = {"all": 0.0, "writes": 0.0, "lease": 0.0}  # lease: leader election's, one instance's own
    for line in text.splitlines():
        if line.startswith("oam_operator_lease_requests_total{"):
            totals["lease"] += float(line.rsplit(" ", 1)[1])
        if line.startswith("oam_operator_api_requests_total{"):
            value = float(line.rsplit(" ", 1)[1])
            totals["all"] += value
            if any(f'method="{m}"' in line for m in ("POST", "PUT", "PATCH", "DELETE")):
                totals["writes"] += value
    return totals


def pass_counts(operator: OperatorProcess | list[OperatorProcess]) -> dict[str, float]:
    """Passes so far (summed over several processes): ``full`` (every pass run), ``quiet`` (routine
    passes skipped) and ``routine <reason>`` (routine passes run in full, by why: quiet.FullReason)."""
    if isinstance(operator, list):
        counts: dict[str, float] = {}
        for one in operator:
            for key, value in pass_counts(one).items():
                counts[key] = counts.get(key, 0.0) + value
        return counts
    counts = {"full": 0.0, "quiet": 0.0}
    for line in operator.metrics_text(timeout=60).splitlines():
        value = line.rsplit(" ", 1)[-1]
        if line.startswith("oam_operator_reconcile_total{"):
            counts["full"] += float(value)
        elif line.startswith("oam_operator_quiet_passes_total "):
            counts["quiet"] += float(value)
        elif line.startswith('oam_operator_routine_full_passes_total{reason="'):
            reason = line.split('"', 2)[1]
            counts[f"routine {reason}"] = counts.get(f"routine {reason}", 0.0) + float(value)
    return counts


def gauge(operator: OperatorProcess | list[OperatorProcess], name: str) -> float:
    """A gauge of the operator's metrics (summed over several processes); 0 when absent."""
    if isinstance(operator, list):
        return sum(gauge(one, name) for one in operator)
    text = operator.metrics_text(timeout=60)
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name + " "))


def json_bytes(value: object) -> int:
    """Length of the compact JSON encoding (as the API server stores custom resources)."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def peak_rss_mib(operator: OperatorProcess) -> float:
    """The process's peak resident set (``VmHWM``) in MiB; NaN once it is gone."""
    peak = operator.rss_bytes("VmHWM")
    return peak / 2**20 if peak is not None else float("nan")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (``/proc/<pid>/stat``); 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_by_process(plane: Any, operators: list[int]) -> dict[str, float]:
    """CPU seconds so far of the operator processes (summed) and of each control-plane component:
    on a 2-core machine they share the cores, so this says where the time went."""
    figures = {"operator": sum(cpu_seconds(pid) for pid in operators)}
    for component in plane.components:
        figures[component.name] = figures.get(component.name, 0.0) + cpu_seconds(component.pid)
    return figures


def cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {name: round(after[name] - before.get(name, 0.0), 1) for name in after}


def is_ready(app: dict[str, Any]) -> bool:
    """Ready for the generation the bench created."""
    status = app.get("status") or {}
    return status.get("state") == "Ready" and status.get("observedGeneration") == app["metadata"]["generation"]


def application(index: int, objects: int, per_component: int = 1, data: bool = True,
                shards: int = 1) -> dict[str, object]:
    app = _application(index, objects, per_component, data)
    if shards > 1 and index % shards:
        app["metadata"]["labels"] = {"oam-operator.dev/shard": f"s{index % shards}"}  # type: ignore[index]
    return app


def _application(index: int, objects: int, per_component: int = 1, data: bool = True) -> dict[str, object]:
    components: list[dict[str, object]] = []
    if per_component > 1:  # ConfigMaps only, in `manifests` components of up to per_component documents each
        for start in range(0, objects, per_component):
            docs = [f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{j}}}\n"
                    + (f"data: {{k: '{j}'}}\n" if data else "")
                    for j in range(start, min(start + per_component, objects))]
            components.append({"name": f"cms-{start // per_component}", "type": "manifests",
                               "properties": {"inline": "---\n".join(docs)}})
        return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
                "metadata": {"name": f"app-{index:03d}", "namespace": f"bench-{index:03d}"},
                "spec": {"components": components}}
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


SYSTEM_AGENTS = ("kube-", "kwok", "kubectl", "Go-http-client")


def audit_counts(events: list[dict[str, Any]], skipped: tuple[str, ...] = SYSTEM_AGENTS
                 ) -> dict[tuple[str, str, str], int]:
    """Audit events counted by (user agent, verb, resource[/subresource]), leaving out the user
    agents that start with one of ``skipped``."""
    counts: dict[tuple[str, str, str], int] = {}
    for event in events:
        agent = str(event.get("userAgent", ""))
        if agent.startswith(skipped):
            continue
        ref = event.get("objectRef") or {}
        resource = ref.get("resource", event.get("requestURI", "?").split("?")[0])
        if ref.get("subresource"):
            resource += "/" + ref["subresource"]
        key = (agent.split("/")[0].split(" ")[0], event["verb"], resource)
        counts[key] = counts.get(key, 0) + 1
    return counts


def print_audit_breakdown(audit_log: Path, offset: int, apps: int) -> int:
    """Every request the operator process made until Ready, per Application, grouped.

    The operator's metric counts only its kubernetes-client requests; the audit log also shows
    kopf's own (watches, finalizer and progress patches), which are what a fleet pays for too.
    """
    from bench_reconciler import audit_events  # the kubernetes client: only when auditing

    counts = audit_counts(audit_events(audit_log, offset, agent_prefix=""))
    print("\n## Requests to Ready by user agent, verb and resource (audit log)\n")
    print("| user agent | verb | resource | requests | per Application |")
    print("|---|---|---|---|---|")
    for (agent, verb, resource), count in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"| {agent} | {verb} | {resource} | {count} | {count / apps:.2f} |")
    total = sum(count for (_, _, resource), count in counts.items() if resource != "leases")
    print(f"| all but leader election's Lease (one instance's own, not the Applications') | | | {total} | "
          f"{total / apps:.2f} |\n")
    return total


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", type=int, default=200)
    parser.add_argument("--audit", action="store_true",
                        help="audit the API server and print the operator's requests to Ready by user agent, "
                             "verb and resource (kopf's own requests included)")
    parser.add_argument("--objects", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE as JSON")
    parser.add_argument("--settle-timeout", type=float, default=300,
                        help="longest wait after Ready for writes to stop before the steady-state minute")
    parser.add_argument("--per-component", type=int, default=1,
                        help="1: one passthrough component per object (M-1 ConfigMaps and a Deployment); K > 1: "
                             "M ConfigMaps in `manifests` components of K each (the CRD allows 1,000 components)")
    parser.add_argument("--server-side", action="store_true",
                        help="create the Applications with kubectl apply --server-side (client-side apply keeps a "
                             "copy of the object in an annotation, which refuses Applications over 256 KiB)")
    parser.add_argument("--shards", type=int, default=1,
                        help="operator processes: one without --shard, the others --shard s1 … (Applications "
                             "spread round-robin)")
    parser.add_argument("--no-data", action="store_true",
                        help="ConfigMaps without data (a smaller spec: 10,000 objects in one Application keep the "
                             "whole object under etcd's 1.5 MiB request limit)")
    parser.add_argument("--skip-steady", action="store_true",
                        help="stop once Ready: no Event-drain wait, no steady-state minute")
    parser.add_argument("--interval", default="30s",
                        help="the operator's --default-interval: 30 s runs every Application's drift check twice "
                             "in the steady-state minute; the operator's own default (10m) shows it idle")
    parser.add_argument("--operator-arg", action="append", default=[], metavar="FLAG",
                        help="one more flag for `oam-operator run` (repeatable)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="oam-bench-operator-"))
    plane = dc.start("full", run_dir=work / "cluster", audit=args.audit)
    audit_log = work / "cluster" / "logs" / "audit.log"
    operators: list[OperatorProcess] = []
    succeeded = False
    try:
        # Each fake node holds 1,000 Pods (devcluster.fake_node_manifest): one Deployment per
        # Application needs one node per 1,000 Applications, or the rest never become Available.
        for extra in range(1, -(-args.apps // PODS_PER_NODE)):
            plane.add_fake_node(f"bench-node-{extra}")
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
        for shard in range(max(args.shards, 1)):
            operators.append(OperatorProcess.start(
                work / f"operator-{shard}.log", kubeconfig=plane.handle.kubeconfig, operator_namespace="default",
                log_format=None,  # the operator's default; its log is kept, not read
                extra=["--default-interval", args.interval, "--log-level", "warning", "--use-operator-identity",
                       *([f"--shard=s{shard}"] if shard else []), *args.operator_arg]))
        for each in operators:
            each.wait_serving(60, health=False)
        operator = operators[0]
        time.sleep(2)
        before, passes_at_start = requests(operators), pass_counts(operators)
        apps = [application(i, args.objects, args.per_component, data=not args.no_data, shards=args.shards)
                for i in range(args.apps)]
        (work / "apps.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": apps}))
        audit_start = audit_log.stat().st_size if args.audit and audit_log.exists() else 0
        cpu_before = cpu_by_process(plane, [p.pid for p in operators])
        started = time.monotonic()
        apply = ["apply", "--server-side"] if args.server_side else ["apply"]
        subprocess.run([kubectl, *kc, *apply, "-f", str(work / "apps.json")], check=True, capture_output=True)
        # One LIST, then a watch (watch_until.py): polling LISTs of every Application loaded
        # the API server the benchmark measures.
        items = list(watch_until(plane.api(), "/apis/oam-operator.dev/v1alpha1/applications", args.apps,
                                 is_ready, started + args.timeout).values())
        elapsed = time.monotonic() - started
        cpu = cpu_delta(cpu_before, cpu_by_process(plane, [p.pid for p in operators]))
        ready_count = sum(1 for a in items if is_ready(a))
        after_ready = requests(operators)
        passes_to_ready = (pass_counts(operators)["full"] - passes_at_start["full"]) / max(args.apps, 1)
        audited = print_audit_breakdown(audit_log, audit_start, args.apps) if args.audit else None
        sizes = {"status": 0, "inventory": 0, "object": 0}
        for item in items:
            status = item.get("status") or {}
            stored = status.get("compactInventory") or status.get("inventory") or []  # as persisted
            for key, value in (("status", status), ("inventory", stored), ("object", item)):
                sizes[key] = max(sizes[key], json_bytes(value))
        objects_recorded = max((int((i.get("status") or {}).get("objects") or 0) for i in items), default=0)
        per_object = sizes["inventory"] / objects_recorded if objects_recorded else 0.0
        if args.skip_steady:
            print(f"## Operator: {args.apps} Application(s) × {args.objects} objects (full profile, Ready only)\n")
            print("| figure | value |")
            print("|---|---|")
            print(f"| Applications Ready | {ready_count}/{args.apps} |")
            print(f"| time until all Ready | {elapsed:.1f} s |")
            print(f"| objects in the largest inventory | {objects_recorded:,} |")
            print(f"| largest persisted status (compact JSON) | {sizes['status']:,} bytes |")
            print(f"| of which the inventory | {sizes['inventory']:,} bytes = {per_object:.1f} bytes per object |")
            print(f"| whole Application object | {sizes['object']:,} bytes (etcd's limit: 1,572,864) |")
            print(f"| passes per Application until all Ready | {passes_to_ready:.2f} |")
            print(f"| operator peak RSS (VmHWM) | {peak_rss_mib(operator):.0f} MiB |")
            print(f"| CPU seconds to Ready | {', '.join(f'{k} {v}' for k, v in cpu.items())} |")
            if args.json:
                Path(args.json).write_text(json.dumps({
                    "benchmark": "operator-inventory", "apps": args.apps, "objects": args.objects,
                    "ready": ready_count, "ready_s": elapsed, "inventory_objects": objects_recorded,
                    "status_bytes": sizes["status"], "inventory_bytes": sizes["inventory"],
                    "inventory_bytes_per_object": per_object, "object_bytes": sizes["object"],
                    "peak_rss_mib": peak_rss_mib(operator), "cpu_s": cpu,
                    "passes_per_app": passes_to_ready}, indent=2) + "\n")
            succeeded = ready_count == args.apps
            return 0 if succeeded else 1
        # Settle: Events on the created objects are posted by a background queue and may still be
        # draining after Ready; the steady-state minute starts once no write was counted for 10 s.
        settle_started = quiet_since = time.monotonic()
        last = requests(operators)
        while time.monotonic() - settle_started < args.settle_timeout:
            time.sleep(2)
            current = requests(operators)
            if current["writes"] != last["writes"]:
                quiet_since = time.monotonic()
            last = current
            if time.monotonic() - quiet_since >= 10:
                break
        last_write_s = quiet_since - settle_started  # ±2 s: the poll interval
        settled = time.monotonic() - quiet_since >= 10
        settle_writes = last["writes"] - after_ready["writes"]
        steady_start, passes_before = requests(operators), pass_counts(operators)
        # The operator's CPU over the minute alone: the scrapes of /metrics that count its requests
        # and passes are outside it (at 10,000 Applications one scrape costs a second of CPU; it is
        # measured below, apart).
        steady_cpu_before = sum(cpu_seconds(p.pid) for p in operators)
        time.sleep(60)
        steady_cpu = (sum(cpu_seconds(p.pid) for p in operators) - steady_cpu_before) / 60 * 100  # % of one core
        steady_end, passes_after = requests(operators), pass_counts(operators)
        steady_passes = {key: passes_after[key] - passes_before.get(key, 0.0) for key in passes_after
                         if passes_after[key] - passes_before.get(key, 0.0)}
        scrape_cpu_before = cpu_seconds(operators[0].pid)
        operators[0].metrics_text(timeout=60)
        scrape_cpu = cpu_seconds(operators[0].pid) - scrape_cpu_before  # one scrape of /metrics, CPU-seconds
        cached_objects = gauge(operators, "oam_operator_watch_cache_objects")
        cached_bytes = gauge(operators, "oam_operator_watch_cache_bytes")
        cached_per_object = cached_bytes / cached_objects if cached_objects else 0.0
        rss_each = [peak_rss_mib(p) for p in operators]
        rss = max(rss_each)
        steady_all = steady_end["all"] - steady_start["all"]
        steady_writes = steady_end["writes"] - steady_start["writes"]
        per_app = (after_ready["all"] - before["all"]) / args.apps
        writes_per_app = (after_ready["writes"] - before["writes"]) / args.apps
        shards_text = f", {len(operators)} shards" if len(operators) > 1 else ""
        print(f"## Operator: {args.apps} Applications × {args.objects} objects, created at once (full profile"
              f"{shards_text})\n")
        print("| figure | value |")
        print("|---|---|")
        print(f"| Applications Ready | {ready_count}/{args.apps} |")
        print(f"| time until all Ready | {elapsed:.1f} s |")
        print(f"| operator peak RSS (VmHWM) | {rss:.0f} MiB (target ≤ 300 MiB)"
              f"{'; per process ' + ', '.join(f'{r:.0f}' for r in rss_each) if len(rss_each) > 1 else ''} |")
        print(f"| API requests per Application (to Ready, the operator's count) | {per_app:.1f} |")
        if audited is not None:
            print(f"| API requests per Application (to Ready, audit log, kopf's included) | {audited / args.apps:.1f} "
                  f"(target ≤ objects + 4 = {args.objects + 4}) |")
        print(f"| of which writes per Application | {writes_per_app:.1f} |")
        print(f"| after Ready: writes until 10 s without one (Event backlog) | {settle_writes / args.apps:.1f} per "
              f"Application, the last {last_write_s:.0f} s after Ready"
              f"{'' if settled else f' (still writing after {args.settle_timeout:.0f} s)'} |")
        print(f"| steady state: requests per minute (interval {args.interval}) | {steady_all:.0f} |")
        print(f"| steady state: reads per minute | {steady_all - steady_writes:.0f} (target ≤ 0.1 per Application "
              f"= {args.apps / 10:.0f}) |")
        print(f"| steady state: writes per minute | {steady_writes:.0f} (target 0) |")
        print(f"| steady state: operator CPU (the minute's /metrics scrapes outside it) | "
              f"{steady_cpu:.2f} % of a core |")
        print(f"| one scrape of /metrics (a Prometheus's, at its own interval) | {scrape_cpu:.2f} CPU-seconds |")
        why = ", ".join(f"{key[8:]} {value:.0f}" for key, value in sorted(steady_passes.items())
                        if key.startswith("routine ")) or "none"
        print(f"| steady state: passes in the minute (full; skipped; routine ones run in full, by why) | "
              f"{steady_passes.get('full', 0):.0f}; {steady_passes.get('quiet', 0):.0f}; {why} |")
        print(f"| leader election: Lease requests per minute, per instance (apart from the above) | "
              f"{(steady_end['lease'] - steady_start['lease']) / len(operators):.0f} |")
        print(f"| largest persisted status (compact JSON) | {sizes['status']:,} bytes (target < 1 MiB) |")
        print(f"| of which the inventory | {sizes['inventory']:,} bytes = {per_object:.1f} bytes per object |")
        print(f"| whole Application object | {sizes['object']:,} bytes |")
        print(f"| CPU seconds to Ready | {', '.join(f'{k} {v}' for k, v in cpu.items())} |")
        print(f"| watch cache | {cached_objects:,.0f} objects, {cached_bytes:,.0f} bytes = "
              f"{cached_per_object:,.0f} bytes per object (target ≤ 2,048) |")
        if args.json:
            Path(args.json).write_text(json.dumps({
                "benchmark": "operator", "apps": args.apps, "objects": args.objects,
                "per_component": args.per_component, "server_side": args.server_side, "ready": ready_count,
                "ready_s": elapsed, "peak_rss_mib": rss, "requests_per_app": per_app,
                "writes_per_app": writes_per_app, "settle_writes_per_app": settle_writes / args.apps,
                "last_write_after_ready_s": last_write_s, "settled": settled,
                "steady_requests_per_min": steady_all, "steady_reads_per_min": steady_all - steady_writes,
                "steady_writes_per_min": steady_writes, "steady_cpu_percent": steady_cpu,
                "steady_passes": steady_passes, "scrape_cpu_s": scrape_cpu,
                "interval": args.interval, "shards": len(operators), "peak_rss_each_mib": rss_each,
                "steady_lease_requests_per_min_each": (steady_end["lease"] - steady_start["lease"]) / len(operators),
                "audit_requests_per_app": None if audited is None else audited / args.apps, "cpu_s": cpu,
                "operator_args": args.operator_arg,
                "status_bytes": sizes["status"], "inventory_bytes": sizes["inventory"],
                "inventory_bytes_per_object": per_object, "object_bytes": sizes["object"],
                "watch_cache_objects": cached_objects, "watch_cache_bytes": cached_bytes,
                "watch_cache_bytes_per_object": cached_per_object}, indent=2) + "\n")
        succeeded = ready_count == args.apps
        return 0 if succeeded else 1
    finally:
        for each in operators:
            each.stop()
        plane.stop()
        if succeeded:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"operator log and manifests kept in {work}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
