"""The control plane's own floor for the fleet benchmark (issue 13): no operator at all.

`bench_operator.py` times N Applications of M objects (M-1 ConfigMaps and one Deployment, each
in its own namespace) from creation to Ready. Part of that time is not the operator's: the
controller manager must create a ReplicaSet and a Pod per Deployment, the scheduler bind each
Pod, kwok mark it running, and the controllers write every status back. This benchmark applies
exactly the objects the operator would create, with `kubectl apply --server-side` (one process,
several in parallel with ``--parallel``), on a fresh full control plane, and prints:
- the time until every object is applied, and until every Deployment is Available;
- the load average before and after.
No operator can make the same objects Ready faster than this on the same machine, so it is the
yardstick for the "1,000 Applications in 60 s" target.

``--client reconciler`` applies them with the operator's own reconciler library instead, in
this process: one ``apply()`` per Application (in-call checkpoint, no Events, no client-side
limit, as the operator's defaults on an APF server), ``--parallel`` at once — everything the
operator does to create the objects except kopf, the transform, the status writes and the
passes that wait for readiness. kubectl's own speed bounds the first figure (its applied time
is most of it); this one shows what the control plane allows a fast client.

``--with-applications`` (with ``--client reconciler``) adds what no operator can skip for an
Application: the Applications are created as bench_operator.py creates them (one ``kubectl
apply``, inside the timed window), and for each one, as soon as it is seen, a finalizer patch, a
status write with its inventory before its objects are created (the checkpoint), and, once its
Deployment is Available, a status write saying Ready and one Event — the operator's 14 requests
of an Application, with none of its own work (no kopf, no transform, no passes). Ready is then
the Applications' state, as bench_operator.py waits for it: the floor of an ideal operator.

Usage: ``python bench/bench_fleet_floor.py [--apps 1000] [--objects 10] [--parallel 4]
[--client kubectl|reconciler] [--with-applications] [--json FILE]``. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_operator import PODS_PER_NODE, application, cpu_by_process, cpu_delta, is_ready  # noqa: E402
from watch_until import watch_until  # noqa: E402

from tools.devcluster import devcluster as dc  # noqa: E402


def objects_of(index: int, objects: int) -> list[dict[str, Any]]:
    """The objects `bench_operator.application(index, objects)` makes the operator create: its
    passthrough components' objects, in the Application's namespace."""
    app: dict[str, Any] = application(index, objects)
    namespace = app["metadata"]["namespace"]
    out = []
    for component in app["spec"]["components"]:
        obj = copy.deepcopy(component["properties"]["object"])
        obj["metadata"]["namespace"] = namespace
        out.append(obj)
    return out


def available(deployment: dict[str, Any]) -> bool:
    status = deployment.get("status") or {}
    generation = (deployment.get("metadata") or {}).get("generation")
    return bool(
        status.get("observedGeneration") == generation
        and status.get("availableReplicas", 0) >= 1
        and status.get("updatedReplicas", 0) >= 1
    )


def apply_with_reconciler(kubeconfig: str, apps: int, objects: int, parallel: int) -> list[str]:
    """Create every Application's objects with the reconciler library; the errors, if any."""
    from kubernetes import client, config

    from oam_operator.reconciler.client import ClusterClient
    from oam_operator.reconciler.options import ReconcilerOptions
    from oam_operator.reconciler.ratelimit import RateLimiter
    from oam_operator.reconciler.reconciler import Reconciler

    configuration = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)  # type: ignore[no-untyped-call]
    configuration.connection_pool_maxsize = parallel * 8
    rc = ClusterClient(client.ApiClient(configuration), rate_limiter=RateLimiter(0, 1), user_agent="oam-bench-floor")

    def one(index: int) -> str:
        wanted = objects_of(index, objects)
        namespace = wanted[0]["metadata"]["namespace"]
        reconciler = Reconciler("oam-operator.dev", rc, ReconcilerOptions(enable_events=False))
        try:
            reconciler.apply([], wanted, namespace, f"floor/{namespace}/app", "floor", checkpoint=lambda items: None)
        except Exception as error:  # reported, not hidden
            return f"{namespace}: {error}"
        return ""

    with ThreadPoolExecutor(parallel) as pool:
        errors = [e for e in pool.map(one, range(apps)) if e]
    rc.close()
    return errors


def ready_status(items: list[Any], ready: int) -> dict[str, Any]:
    """A status of the size and shape the operator writes (its compact inventory, its conditions)."""
    from oam_operator.api.compact_inventory import encode
    from oam_operator.reconciler.inventory import dump_inventory

    state = "Ready" if ready == len(items) else "Processing"
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {"state": state, "observedGeneration": 1, "appliedGeneration": 1, "revision": 1,
            "objects": len(items), "readyObjects": ready, "lastAppliedAt": now,
            "summary": f"{ready}/{len(items)} objects ready",
            "conditions": [{"type": "Ready", "status": "True" if state == "Ready" else "False",
                            "reason": state, "message": f"{ready}/{len(items)} objects ready",
                            "lastTransitionTime": now, "observedGeneration": 1}],
            "compactInventory": encode(dump_inventory(items))}


def apply_applications(plane_api: Any, kubeconfig: str, kubectl: list[str], apps_file: Path, apps: int,
                       objects: int, parallel: int, deadline: float) -> list[str]:
    """``--with-applications`` (module docstring): the errors, if any; returns once every
    Application is Ready or at ``deadline``."""
    import threading

    from kubernetes import client, config

    from oam_operator.reconciler.client import MERGE_PATCH, ClusterClient
    from oam_operator.reconciler.inventory import InventoryItem
    from oam_operator.reconciler.options import ReconcilerOptions
    from oam_operator.reconciler.ratelimit import RateLimiter
    from oam_operator.reconciler.reconciler import Reconciler

    configuration = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)  # type: ignore[no-untyped-call]
    configuration.connection_pool_maxsize = parallel * 8
    rc = ClusterClient(client.ApiClient(configuration), rate_limiter=RateLimiter(0, 1), user_agent="oam-bench-floor")
    base = "/apis/oam-operator.dev/v1alpha1/namespaces"
    inventories: dict[str, list[InventoryItem]] = {}
    errors: list[str] = []
    pool = ThreadPoolExecutor(parallel)
    lock = threading.Lock()

    def status(namespace: str, items: list[InventoryItem], ready: int) -> None:
        rc.request("patch", "PATCH", f"{base}/{namespace}/applications/{app_of[namespace]}/status",
                   body={"status": ready_status(items, ready)}, content_type=MERGE_PATCH)

    def first(app: dict[str, Any]) -> None:
        meta = app["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        try:
            rc.request("patch", "PATCH", f"{base}/{namespace}/applications/{name}",
                       body={"metadata": {"finalizers": ["oam-operator.dev"]}}, content_type=MERGE_PATCH)
            inventory: list[InventoryItem] = []
            reconciler = Reconciler("oam-operator.dev", rc, ReconcilerOptions(enable_events=False))
            reconciler.apply(inventory, objects_of(int(namespace.split("-")[1]), objects), namespace,
                             f"floor/{namespace}/{name}", "floor",
                             checkpoint=lambda items: status(namespace, list(items), 0))
            with lock:
                inventories[namespace] = inventory
        except Exception as error:  # reported, not hidden
            errors.append(f"{namespace}: {error}")

    def last(namespace: str) -> None:
        with lock:
            items = inventories.get(namespace)
        if items is None:  # its objects are still being created: try again shortly
            time.sleep(0.05)
            pool.submit(last, namespace)
            return
        try:
            status(namespace, items, len(items))
            rc.request("create", "POST", f"/api/v1/namespaces/{namespace}/events", body={
                "apiVersion": "v1", "kind": "Event", "metadata": {"generateName": f"{app_of[namespace]}.",
                                                                   "namespace": namespace},
                "involvedObject": {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
                                   "name": app_of[namespace], "namespace": namespace},
                "type": "Normal", "reason": "Ready", "message": f"{len(items)}/{len(items)} objects ready",
                "source": {"component": "oam-operator.dev"}, "count": 1})
        except Exception as error:
            errors.append(f"{namespace}: {error}")

    app_of = {f"bench-{i:03d}": f"app-{i:03d}" for i in range(apps)}
    seen: set[str] = set()

    def on_application(app: dict[str, Any]) -> bool:
        namespace = app["metadata"]["namespace"]
        if namespace not in seen:
            seen.add(namespace)
            pool.submit(first, app)
        return is_ready(app)

    done: set[str] = set()

    def on_deployment(deployment: dict[str, Any]) -> bool:
        namespace = deployment["metadata"]["namespace"]
        if available(deployment) and namespace not in done:
            done.add(namespace)
            pool.submit(last, namespace)
        return available(deployment)

    followers = [threading.Thread(target=watch_until, daemon=True, args=(
        plane_api, "/apis/apps/v1/deployments", apps, on_deployment, deadline))]
    followers[0].start()
    creating = threading.Thread(target=subprocess.run, daemon=True,
                                args=([*kubectl, "apply", "-f", str(apps_file)],), kwargs={"check": True,
                                                                                         "capture_output": True})
    creating.start()
    watch_until(plane_api, "/apis/oam-operator.dev/v1alpha1/applications", apps, on_application, deadline)
    creating.join()
    pool.shutdown(wait=True)
    rc.close()
    return errors


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--apps", type=int, default=1000)
    parser.add_argument("--objects", type=int, default=10)
    parser.add_argument("--parallel", type=int, default=4,
                        help="kubectl processes, or Applications the reconciler applies, at once")
    parser.add_argument("--client", choices=("kubectl", "reconciler"), default="kubectl")
    parser.add_argument("--with-applications", action="store_true",
                        help="also create the Applications and make each one's own writes (module docstring)")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--audit", action="store_true",
                        help="audit the API server, as bench_operator.py --audit does (equal conditions)")
    args = parser.parse_args()
    if args.with_applications and args.client != "reconciler":
        parser.error("--with-applications needs --client reconciler")

    work = Path(tempfile.mkdtemp(prefix="oam-bench-floor-"))
    plane = dc.start("full", run_dir=work / "cluster", audit=args.audit)
    try:
        for extra in range(1, -(-args.apps // PODS_PER_NODE)):  # one Deployment's Pod per Application
            plane.add_fake_node(f"floor-node-{extra}")
        kubectl = str(dc.find_binaries().kubectl)
        kc = ["--kubeconfig", plane.handle.kubeconfig]
        if args.with_applications:
            subprocess.run([kubectl, *kc, "apply", "--server-side", "-f", str(ROOT / "crds")], check=True,
                           capture_output=True)
            subprocess.run([kubectl, *kc, "wait", "--for=condition=Established",
                            "crd/applications.oam-operator.dev"], check=True, capture_output=True)
            (work / "apps.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
                application(i, args.objects) for i in range(args.apps)]}))
        namespaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"bench-{i:03d}"}}
                      for i in range(args.apps)]
        (work / "namespaces.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": namespaces}))
        subprocess.run([kubectl, *kc, "apply", "-f", str(work / "namespaces.json")], check=True, capture_output=True)
        files = []
        for part in range(args.parallel):
            items = [o for i in range(part, args.apps, args.parallel) for o in objects_of(i, args.objects)]
            path = work / f"objects-{part}.json"
            path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
            files.append(path)
        load_before = os.getloadavg()
        cpu_before = cpu_by_process(plane, [os.getpid()])
        started = time.monotonic()
        if args.with_applications:
            failed = apply_applications(plane.api(), plane.handle.kubeconfig, [kubectl, *kc], work / "apps.json",
                                        args.apps, args.objects, args.parallel, started + args.timeout)
        elif args.client == "reconciler":
            failed = apply_with_reconciler(plane.handle.kubeconfig, args.apps, args.objects, args.parallel)
        else:
            with ThreadPoolExecutor(args.parallel) as pool:
                runs = list(pool.map(lambda f: subprocess.run(
                    [kubectl, *kc, "apply", "--server-side", "--field-manager", "floor", "-f", str(f)],
                    capture_output=True), files))
            failed = [r.stderr.decode()[-300:] for r in runs if r.returncode]
        applied_s = time.monotonic() - started
        if failed:
            print("kubectl apply failed:", *failed, sep="\n", file=sys.stderr)
            return 1
        # One LIST, then a watch, as bench_operator.py waits (watch_until.py).
        deployments = watch_until(plane.api(), "/apis/apps/v1/deployments", args.apps, available,
                                  started + args.timeout)
        ready_s = applied_s if args.with_applications else time.monotonic() - started
        cpu = cpu_delta(cpu_before, cpu_by_process(plane, [os.getpid()]))  # "operator": this process
        ready = sum(1 for d in deployments.values() if available(d))
        load_after = os.getloadavg()
        by = "kubectl" if args.client == "kubectl" else "the reconciler library"
        if args.with_applications:
            _, listed = plane.api().get("/apis/oam-operator.dev/v1alpha1/applications")
            ready = min(ready, sum(1 for app in listed.get("items", []) if is_ready(app)))
            by += ", with each Application's own writes"
        print(f"## Control-plane floor: {args.apps} × {args.objects} objects applied by {by} (full profile)\n")
        print("| figure | value |")
        print("|---|---|")
        at_once = "kubectl processes" if args.client == "kubectl" else "Applications at once"
        print(f"| objects | {args.apps * args.objects:,} ({args.parallel} {at_once}) |")
        print(f"| all applied | {applied_s:.1f} s |")
        print(f"| Deployments Available | {ready}/{args.apps} |")
        print(f"| time until all {'Applications Ready' if args.with_applications else 'Available'} | {ready_s:.1f} s |")
        print(f"| CPU seconds until all Available | {', '.join(f'{k} {v}' for k, v in cpu.items())} |")
        print(f"| load average before → after | {' '.join(f'{x:.1f}' for x in load_before)} → "
              f"{' '.join(f'{x:.1f}' for x in load_after)} |")
        if args.json:
            Path(args.json).write_text(json.dumps({
                "benchmark": "fleet-floor", "apps": args.apps, "objects": args.objects, "parallel": args.parallel,
                "client": args.client, "audit": args.audit, "with_applications": args.with_applications,
                "applied_s": applied_s, "ready": ready, "ready_s": ready_s,
                "load_before": load_before, "load_after": load_after, "cpu_s": cpu}, indent=2) + "\n")
        return 0 if ready == args.apps else 1
    finally:
        plane.stop()


if __name__ == "__main__":
    sys.exit(main())
