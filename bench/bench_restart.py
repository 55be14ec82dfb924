"""A quiet restart (issue 43, docs/operator.md#a-quiet-restart): the operator is killed while it
holds N Ready Applications and started again.

On a fresh full control plane with the audit log on: N Applications of M objects are created and
made Ready by one operator process; once no write was counted for 10 s, the process is killed
(SIGKILL) and a new one started: by default as the same Pod's container restarted (the same
``POD_NAME`` and ``POD_UID``, which takes its dead predecessor's Lease at once), with
``--new-pod`` as another Pod's (which waits for that Lease to expire). The benchmark then
prints, from the audit log, every request the new process made in its first ``--observe``
seconds (by user agent, verb and resource: writes should be 0, reads one LIST per watched kind
plus the watches), the time until it served, and how long one new Application created after the
restart took to be Ready (from its creation).

Usage: ``python bench/bench_restart.py [--apps 1000] [--objects 10] [--observe 60] [--interval 10m] [--new-pod]
[--json FILE]``.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_operator import PODS_PER_NODE, application, audit_counts, cpu_seconds, is_ready, peak_rss_mib  # noqa: E402
from bench_reconciler import audit_events  # noqa: E402
from watch_until import watch_until  # noqa: E402

from tools.devcluster import devcluster as dc  # noqa: E402
from tools.operatorprocess import OperatorProcess  # noqa: E402

WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})
SYSTEM_AGENTS = ("kube-", "kwok", "kubectl", "Python-urllib", "python-requests")


def time_milestones(process: OperatorProcess, started: float, found: dict[str, float]) -> None:
    """Record when ``process`` serves its metrics and when it leads, in seconds after ``started``."""
    while time.monotonic() - started < 300 and "leading" not in found:
        gauge = process.leader_gauge()
        if gauge is not None:
            found.setdefault("serving", time.monotonic() - started)
        if gauge == 1.0:
            found["leading"] = time.monotonic() - started
        time.sleep(0.2)


def change_and_wait(plane: dc.ControlPlane, kubectl: str, kc: list[str], index: int, objects: int) -> float:
    """Change Application ``index``'s first ConfigMap; seconds from the change until it is Ready again."""
    name = application(index, objects)["metadata"]["name"]  # type: ignore[index]
    namespace = f"bench-{index:03d}"
    path = "/spec/components/0/properties/object/data/k"
    patch = [{"op": "replace", "path": path, "value": f"changed-{time.time()}"}]
    changed = time.monotonic()
    subprocess.run([kubectl, *kc, "-n", namespace, "patch", "applications.oam-operator.dev", name, "--type", "json",
                    "-p", json.dumps(patch)], check=True, capture_output=True)
    return wait_ready(plane, index, changed)


def wait_ready(plane: dc.ControlPlane, index: int, since: float) -> float:
    """Seconds from ``since`` until Application ``index`` is Ready for its current generation."""
    namespace = f"bench-{index:03d}"
    watch_until(plane.api(), f"/apis/oam-operator.dev/v1alpha1/namespaces/{namespace}/applications", 1,
                is_ready, since + 600)
    return time.monotonic() - since


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", type=int, default=1000)
    parser.add_argument("--objects", type=int, default=10)
    parser.add_argument("--observe", type=float, default=60.0, help="seconds of the new process's requests counted")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--interval", default="10m",
                        help="the operator's --default-interval (its default: at 10,000 Applications a 30 s interval "
                             "is 333 passes a second, never idle)")
    parser.add_argument("--new-pod", action="store_true",
                        help="start the new process as another Pod would (another POD_UID): it waits for the killed "
                             "leader's Lease to expire; by default it is the same Pod's container restarted, which "
                             "takes its dead predecessor's Lease at once (docs/operator.md#leader-election)")
    parser.add_argument("--log-level", default="warning",
                        help="the operator's --log-level (info shows each pass: when the new Application's ran)")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="oam-bench-restart-"))
    plane = dc.start("full", run_dir=work / "cluster", audit=True)
    audit_log = work / "cluster" / "logs" / "audit.log"
    kubectl = str(dc.find_binaries().kubectl)
    kc = ["--kubeconfig", plane.handle.kubeconfig]
    extra = ["--default-interval", args.interval, "--log-level", args.log_level, "--use-operator-identity"]
    first: OperatorProcess | None = None
    second: OperatorProcess | None = None
    try:
        for node in range(1, -(-(args.apps + 1) // PODS_PER_NODE)):
            plane.add_fake_node(f"bench-node-{node}")
        subprocess.run([kubectl, *kc, "apply", "--server-side", "-f", str(ROOT / "crds")], check=True,
                       capture_output=True)
        subprocess.run([kubectl, *kc, "wait", "--for=condition=Established", "crd/applications.oam-operator.dev"],
                       check=True, capture_output=True)
        namespaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"bench-{i:03d}"}}
                      for i in range(args.apps + 1)]
        (work / "namespaces.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": namespaces}))
        subprocess.run([kubectl, *kc, "apply", "-f", str(work / "namespaces.json")], check=True, capture_output=True)
        pod = {"POD_UID": "0b5e8c1a-6f2d-4e7b-9c3a-5d1f2e4a6b8c"}  # the chart's downward API, as in a Pod
        first = OperatorProcess.start(work / "operator-0.log", kubeconfig=plane.handle.kubeconfig,
                                      operator_namespace="default", log_format=None, extra=extra, name="oam-operator-0",
                                      env=pod)
        first.wait_serving(60, health=False)
        apps = [application(i, args.objects) for i in range(args.apps)]
        (work / "apps.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": apps}))
        started = time.monotonic()
        subprocess.run([kubectl, *kc, "apply", "-f", str(work / "apps.json")], check=True, capture_output=True)
        path = "/apis/oam-operator.dev/v1alpha1/applications"
        watch_until(plane.api(), path, args.apps, is_ready, started + args.timeout)
        ready_s = time.monotonic() - started
        quiet_since, last = time.monotonic(), first.write_requests()
        while time.monotonic() - quiet_since < 10:  # Events drain in the background after Ready
            time.sleep(1)
            now = first.write_requests()
            if now != last:
                quiet_since, last = time.monotonic(), now
        warm_change_s = change_and_wait(plane, kubectl, kc, 1, args.objects)  # a warm operator's time to Ready
        time.sleep(5)
        first_rss = peak_rss_mib(first)
        first.kill()
        offset = audit_log.stat().st_size
        restarted = time.monotonic()
        second = OperatorProcess.start(work / "operator-1.log", kubeconfig=plane.handle.kubeconfig,
                                       operator_namespace="default", log_format=None, extra=extra,
                                       name="oam-operator-1" if args.new_pod else "oam-operator-0",
                                       env={"POD_UID": "7c2d4e6f-1a3b-4c5d-8e9f-0a1b2c3d4e5f"} if args.new_pod else pod)
        milestones: dict[str, float] = {}  # seconds after the start: metrics served, leading
        watcher = threading.Thread(target=time_milestones, args=(second, restarted, milestones), daemon=True)
        watcher.start()
        # At once, while it starts: one new Application and one changed one, each timed from its write.
        extra_app = application(args.apps, args.objects)
        (work / "new.json").write_text(json.dumps(extra_app))
        created = time.monotonic()
        subprocess.run([kubectl, *kc, "apply", "-f", str(work / "new.json")], check=True, capture_output=True)
        new_ready: list[float] = []
        waiter = threading.Thread(target=lambda: new_ready.append(wait_ready(plane, args.apps, created)), daemon=True)
        waiter.start()
        change_started = time.monotonic()
        cold_change_s = change_and_wait(plane, kubectl, kc, 2, args.objects)
        waiter.join(600)
        new_ready_s = new_ready[0] if new_ready else float("nan")
        new_after_start_s = created + new_ready_s - restarted
        watcher.join(300)
        serving_s, leading_s = milestones.get("serving", float("nan")), milestones.get("leading", float("nan"))
        # The change is written while the process starts: how long it took once the process could act on it.
        change_after_leading_s = change_started + cold_change_s - (restarted + leading_s)
        time.sleep(max(0.0, args.observe - 30 - (time.monotonic() - restarted)))
        cpu_before = cpu_seconds(second.pid)
        time.sleep(max(0.0, args.observe - (time.monotonic() - restarted)))
        cpu_idle = (cpu_seconds(second.pid) - cpu_before) / 30 * 100  # % of one core over the last 30 s
        second_rss = peak_rss_mib(second)
        touched = {f"bench-{args.apps:03d}", "bench-002"}  # the new and the changed Application's namespaces
        events = [e for e in audit_events(audit_log, offset, agent_prefix="")
                  if "system:" not in str((e.get("user") or {}).get("username", ""))
                  and (e.get("objectRef") or {}).get("namespace") not in touched]
        counts = audit_counts(events, SYSTEM_AGENTS)
        writes = sum(n for (_, verb, resource), n in counts.items() if verb in WRITES and resource != "leases")
        lease_writes = sum(n for (_, verb, resource), n in counts.items() if verb in WRITES and resource == "leases")
        print(f"## Quiet restart: {args.apps} Ready Applications × {args.objects} objects, operator killed and "
              "started again (full profile)\n")
        print("| figure | value |\n|---|---|")
        print(f"| all Ready before the restart | {ready_s:.1f} s |")
        print(f"| new process serving (metrics) | {serving_s:.1f} s after it was started |")
        how = ("another Pod: once the dead leader's Lease expired" if args.new_pod
               else "the same Pod's container: its dead predecessor's Lease taken at once")
        print(f"| new process leading ({how}) | {leading_s:.1f} s after it was started |")
        print(f"| writes in its first {args.observe:.0f} s, the two Applications below left out (audit log) "
              f"| {writes}, and {lease_writes} of its Lease |")
        print(f"| a new Application created as it started: Ready | {new_ready_s:.1f} s after its creation, "
              f"{new_after_start_s:.1f} s after the start |")
        print(f"| a changed Application: Ready again | {cold_change_s:.1f} s after the change, "
              f"{change_after_leading_s:.1f} s after the new process led "
              f"(on the warm operator before: {warm_change_s:.1f} s after the change) |")
        print(f"| first process's peak RSS (VmHWM) | {first_rss:.0f} MiB |")
        print(f"| new process's peak RSS (VmHWM) in those {args.observe:.0f} s | {second_rss:.0f} MiB |")
        print(f"| new process's CPU over the last 30 s of those {args.observe:.0f} s | {cpu_idle:.2f} % of a core |")
        print(f"\n## Requests of the new process in its first {args.observe:.0f} s (audit log; the new and the "
              "changed Application's namespaces left out)\n")
        print("| user agent | verb | resource | requests |\n|---|---|---|---|")
        for (agent, verb, resource), count in sorted(counts.items(), key=lambda kv: -kv[1]):
            print(f"| {agent} | {verb} | {resource} | {count} |")
        if args.json:
            Path(args.json).write_text(json.dumps({
                "apps": args.apps, "objects": args.objects, "new_pod": args.new_pod, "ready_s": ready_s,
                "serving_s": serving_s,
                "leading_s": leading_s,
                "observe_s": args.observe, "writes": writes, "lease_writes": lease_writes, "new_ready_s": new_ready_s,
                "new_ready_after_start_s": new_after_start_s, "changed_ready_s": cold_change_s,
                "changed_ready_after_leading_s": change_after_leading_s,
                "warm_changed_ready_s": warm_change_s, "idle_cpu_percent": cpu_idle,
                "peak_rss_mib": first_rss, "restarted_peak_rss_mib": second_rss,
                "requests": [{"agent": a, "verb": v, "resource": r, "count": n} for (a, v, r), n in counts.items()],
            }, indent=2) + "\n")
        return 0
    finally:
        for process in (first, second):
            if process is not None and process.alive():
                process.stop()
        plane.stop()


if __name__ == "__main__":
    sys.exit(main())
