"""Benchmark of the object reconciler against kubectl server-side apply (DESIGN.md §6).

For 50, 200 and 500 objects (half ConfigMaps, half Deployments) in one wave, on a minimal
control plane (started here with audit logging, or the cluster named by KUBECONFIG):

- reconciler first apply: the checkpoint call plus the call that creates everything, with a
  cold client (discovery included); wall time and requests from the client's accounting;
- ``kubectl apply --server-side`` of the same objects into another namespace, with a cold
  discovery cache; wall time and requests (from the audit log, else from ``-v=6`` output);
- a no-op reconcile once everything is Ready (Deployment status is patched by the bench: the
  minimal profile runs no controllers): requests by kind, against the target of 0 writes and
  reads <= the number of distinct (type, namespace) pairs.

Prints figures only; asserts nothing.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.devcluster import find_binaries, start

SIZES = (50, 200, 500)
NAME = "oam-operator.dev"
# (label, qps, burst, events): the operator's defaults (--kube-api-qps 50, --kube-api-burst
# 100, Events on), and kubectl's own client limits (50/300) without Events, for a like-for-like
# comparison of the request pattern.
CONFIGS = (("operator defaults", 50.0, 100, True), ("kubectl limits, no events", 50.0, 300, False))


def objects_for(count: int) -> list[dict[str, Any]]:
    half = count // 2
    out: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i:04d}"}, "data": {"index": str(i)}}
        for i in range(count - half)
    ]
    for i in range(half):
        labels = {"app": f"d-{i:04d}"}
        out.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": f"d-{i:04d}"},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": labels},
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {"containers": [{"name": "app", "image": "registry.invalid/app:1"}]},
                    },
                },
            }
        )
    return out


@contextmanager
def cluster() -> Iterator[tuple[str, Path | None]]:
    """(kubeconfig, audit log) of the cluster to measure."""
    given = os.environ.get("KUBECONFIG")
    if given and Path(given).is_file():
        yield given, None
        return
    plane = start("minimal", name=f"bench-{secrets.token_hex(3)}", audit=True)
    try:
        audit = plane.run_dir / "logs" / "audit.log"
        yield plane.handle.kubeconfig, audit if audit.exists() else None
    finally:
        plane.stop()


def api_client(kubeconfig: str) -> Any:
    from kubernetes import client, config

    configuration = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
    configuration.proxy = None
    return client.ApiClient(configuration)


def audit_count(audit: Path, start_offset: int, agent_prefix: str) -> dict[str, int]:
    """Requests per verb in the audit log after ``start_offset`` by user agents with a prefix."""
    counts: dict[str, int] = {}
    with audit.open("rb") as f:
        f.seek(start_offset)
        for line in f:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("stage") != "ResponseComplete":
                continue
            if not str(event.get("userAgent", "")).startswith(agent_prefix):
                continue
            counts[event["verb"]] = counts.get(event["verb"], 0) + 1
    return counts


def audit_offset(audit: Path | None) -> int:
    time.sleep(0.5)  # let the API server flush its audit buffer
    return audit.stat().st_size if audit is not None and audit.exists() else 0


def kubectl_apply(kubectl: Path, kubeconfig: str, namespace: str, objects: list[dict[str, Any]]) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        manifest = Path(tmp) / "objects.json"
        manifest.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
        started = time.perf_counter()
        result = subprocess.run(
            [
                str(kubectl),
                "--kubeconfig",
                kubeconfig,
                "--cache-dir",
                str(Path(tmp) / "cache"),
                "-v=6",
                "apply",
                "--server-side",
                "--field-manager=bench-kubectl",
                "-n",
                namespace,
                "-f",
                str(manifest),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"kubectl failed: {result.stderr[-2000:]}")
    responses = len(re.findall(r'"Response" verb=|Response Status|round_trippers.go:\d+\] [A-Z]+ https', result.stderr))
    return elapsed, responses


def make_ready(api: Any, namespace: str, count: int) -> None:
    """Patch every Deployment's status to Available (no controller runs in minimal)."""
    from kubernetes import client

    apps = client.AppsV1Api(api)
    for i in range(count // 2):
        name = f"d-{i:04d}"
        generation = apps.read_namespaced_deployment(name, namespace).metadata.generation
        apps.patch_namespaced_deployment_status(
            name,
            namespace,
            {
                "status": {
                    "observedGeneration": generation,
                    "replicas": 1,
                    "updatedReplicas": 1,
                    "readyReplicas": 1,
                    "availableReplicas": 1,
                    "conditions": [
                        {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                        {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
                    ],
                }
            },
        )


def main() -> None:
    from kubernetes import client

    from oam_operator.reconciler.client import ClusterClient
    from oam_operator.reconciler.inventory import InventoryItem
    from oam_operator.reconciler.options import ReconcilerOptions
    from oam_operator.reconciler.policies import UpdatePolicy
    from oam_operator.reconciler.ratelimit import RateLimiter
    from oam_operator.reconciler.reconciler import Reconciler

    binaries = find_binaries()
    kubectl = binaries.path("kubectl")
    rows: list[dict[str, Any]] = []
    with cluster() as (kubeconfig, audit):
        api = api_client(kubeconfig)
        core = client.CoreV1Api(api)
        for count in SIZES:
            ours, theirs = f"bench-{count}-{secrets.token_hex(3)}", f"bench-kubectl-{count}-{secrets.token_hex(3)}"
            for ns in (ours, theirs):
                core.create_namespace({"metadata": {"name": ns}})
            objects = objects_for(count)
            owner = f"{uuid.uuid4()}/{ours}/bench"  # the other configurations append -<index>
            extra_namespaces: list[str] = []

            row: dict[str, Any] = {"objects": count, "pairs": len({(o["apiVersion"], o["kind"]) for o in objects})}
            for index, (label, qps, burst, events) in enumerate(CONFIGS):
                ns = ours if index == 0 else f"{ours}-{index}"
                if index:
                    core.create_namespace({"metadata": {"name": ns}})
                    extra_namespaces.append(ns)
                rc = ClusterClient(api, user_agent="oam-operator-bench", rate_limiter=RateLimiter(qps, burst))
                reconciler = Reconciler(
                    NAME, rc, ReconcilerOptions(update_policy=UpdatePolicy.SSA_MERGE, enable_events=events)
                )
                inventory: list[InventoryItem] = []
                offset = audit_offset(audit)
                started = time.perf_counter()
                calls = 0
                while True:
                    calls += 1
                    reconciler.apply(inventory, objects, ns, owner if index == 0 else f"{owner}-{index}", "bench")
                    if all(i.phase.value in ("Creating", "Ready") for i in inventory):
                        break
                acc = rc.accounting
                ours_audit = audit_count(audit, offset, "oam-operator-bench") if audit else {}
                row[label] = {
                    "s": time.perf_counter() - started,
                    "calls": calls,
                    "requests": acc.total,
                    "reads": acc.reads,
                    "writes": acc.writes,
                    "by_verb": acc.by_verb(),
                    "audit": sum(ours_audit.values()),
                }
                if index == 0:
                    keep = (rc, reconciler, inventory)
                else:
                    rc.close()
            rc, reconciler, inventory = keep
            acc = rc.accounting

            if kubectl is not None:
                offset = audit_offset(audit)
                elapsed, responses = kubectl_apply(kubectl, kubeconfig, theirs, objects)
                kubectl_audit = audit_count(audit, offset, "kubectl") if audit else {}
                row.update(
                    kubectl_s=elapsed,
                    kubectl_requests=sum(kubectl_audit.values()) if kubectl_audit else responses,
                    kubectl_requests_source="audit" if kubectl_audit else "-v=6",
                    kubectl_by_verb=kubectl_audit,
                )

            make_ready(api, ours, count)
            while not reconciler.apply(inventory, objects, ours, owner, "bench"):
                time.sleep(0.2)
            acc.reset()
            started = time.perf_counter()
            done = reconciler.apply(inventory, objects, ours, owner, "bench")
            row.update(
                noop_done=done,
                noop_s=time.perf_counter() - started,
                noop_reads=acc.reads,
                noop_writes=acc.writes,
                noop_by_verb=acc.by_verb(),
            )
            rows.append(row)
            rc.close()
            for ns in (ours, theirs, *extra_namespaces):
                core.delete_namespace(ns, propagation_policy="Background")
        api.close()

    print()
    print("First apply (checkpoint call + create call, cold discovery, update policy SsaMerge,")
    print("concurrency 8) vs kubectl apply --server-side (cold discovery cache, kubectl's 50 qps / 300")
    print("burst); minimal control plane, one wave, half ConfigMaps, half Deployments.")
    print()
    labels = [c[0] for c in CONFIGS]
    header = (
        f"{'objects':>7} | "
        + " | ".join(f"{label + ' s':>28} | {'requests (r/w)':>17}" for label in labels)
        + f" | {'kubectl s':>9} | {'kubectl requests':>16}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        cells = []
        for label in labels:
            c = r[label]
            rw = f"{c['requests']} ({c['reads']}/{c['writes']})"
            cells.append(f"{c['s']:>28.2f} | {rw:>17}")
        print(
            f"{r['objects']:>7} | "
            + " | ".join(cells)
            + f" | {r.get('kubectl_s', float('nan')):>9.2f} | {r.get('kubectl_requests', '-')!s:>16}"
        )
    print()
    print("No-op reconcile once everything is Ready (target: 0 writes, reads <= (type, namespace) pairs):")
    for r in rows:
        print(
            f"  {r['objects']:>4} objects: reads {r['noop_reads']}, writes {r['noop_writes']}, "
            f"(type, namespace) pairs {r['pairs']}, {r['noop_by_verb']}, {r['noop_s'] * 1000:.0f} ms, "
            f"returned {r['noop_done']}"
        )
    print()
    for r in rows:
        for label in labels:
            c = r[label]
            audit_note = f", audit log {c['audit']}" if c["audit"] else ""
            print(f"  {r['objects']:>4} objects, {label}: {c['by_verb']}{audit_note}")
        print(
            f"  {r['objects']:>4} objects, kubectl: {r.get('kubectl_by_verb') or '-'} "
            f"(counted from {r.get('kubectl_requests_source', '-')})"
        )


if __name__ == "__main__":
    main()
